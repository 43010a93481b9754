"""``audit_file``: the ``audit`` events as JSON lines in a file of their own, appended and rotated by size.

Every worker of a gateway (and every gateway of a host) may append to the same
file: it is opened with ``O_APPEND`` and each line is appended whole, under an
exclusive ``flock`` on ``<audit_file>.lock`` that every writer takes, so lines
never interleave, and each is in the file once written (nothing is buffered in
the process).

A line is in the file whole or not at all. A disk that fills (or a file size
limit, a quota) can take part of a line and then refuse the rest; the writer
then cuts the part back off the file (it still holds the lock, so the part is
the file's last bytes), reports the failure on stderr once, and counts the
lines lost until a write succeeds again. Before its first line, and after a
failure, a writer looks at the file's last byte and starts a new line if the
file ends mid-line (a fragment it did not write, which it leaves as it is).

Past ``audit_file_max_bytes`` the writer that notices renames the file to
``<audit_file>.1`` (replacing the previous one); every writer reopens the path
when it no longer names the file it writes to, which also follows an external
rotation by renaming (logrotate without ``copytruncate``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from gateway.observability.logbook import utc_timestamp
from gateway.settings.config import ConfigError

FILE_MODE = 0o600
"""The audit file holds query texts: readable by the gateway's account only."""


class AuditFile:
    """The ``LineSink`` of the audit logger: appends each line to ``path``."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        """Open (create) ``path`` and its lock file; ``ConfigError`` naming it when that fails, so start-up stops."""
        self._path = path
        self._max_bytes = max_bytes
        self._lock_path = path.with_name(path.name + ".lock")
        self._failing = False
        self._lines_lost = 0
        self._check_end = True
        """Whether the file may end mid-line: before the first line, and after a failed write."""
        try:
            self._descriptor = self._open()
            os.close(os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE))
        except OSError as error:
            raise ConfigError(f"setting audit_file: cannot open {path} for appending ({error.strerror})") from None

    def write_line(self, line: str) -> None:
        data = line.encode() + b"\n"
        try:
            with self._file_lock():
                current = self._follow_renames()
                if self._max_bytes and current.st_size and current.st_size + len(data) > self._max_bytes:
                    current = self._rotate(current)
                if self._check_end and current.st_size and os.pread(self._descriptor, 1, current.st_size - 1) != b"\n":
                    data = b"\n" + data  # never glued onto a line someone left unfinished
                self._append(data)
        except OSError as error:
            self._check_end = True  # the part taken back may not have been, if ftruncate failed too
            self._lines_lost += 1
            self._report(error)
            return
        self._check_end = False
        if self._failing:
            self._failing = False
            self._report(None)
            self._lines_lost = 0

    def close(self) -> None:
        os.close(self._descriptor)

    def _append(self, data: bytes) -> None:
        """Append ``data`` whole, or raise with none of it left in the file (the caller holds the lock)."""
        done = 0
        try:
            while done < len(data):
                # A regular file's write is short only when the rest cannot go (no space, size limit, quota):
                # writing the rest then raises the reason.
                written = os.write(self._descriptor, memoryview(data)[done:])
                if written == 0:
                    raise OSError(errno.EIO, "the file took no bytes")
                done += written
        except OSError:
            if done:
                # Under the lock no other writer appended after the part written: it is the file's end.
                os.ftruncate(self._descriptor, os.fstat(self._descriptor).st_size - done)
            raise

    def _open(self) -> int:
        # Read and write: the last byte is read (pread) to tell whether the file ends mid-line.
        return os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)

    def _reopen(self) -> None:
        descriptor = self._open()
        os.close(self._descriptor)
        self._descriptor = descriptor

    def _follow_renames(self) -> os.stat_result:
        """The state of the file written to, after switching to the file the path names now."""
        current = os.fstat(self._descriptor)
        try:
            on_disk = os.stat(self._path)
        except FileNotFoundError:
            on_disk = None
        if on_disk is None or (on_disk.st_dev, on_disk.st_ino) != (current.st_dev, current.st_ino):
            self._reopen()
            current = os.fstat(self._descriptor)
        return current

    def _rotate(self, current: os.stat_result) -> os.stat_result:
        """Rename the file written to ``.1`` and begin a new one (the caller holds the lock, so no one else did)."""
        os.replace(self._path, self._path.with_name(self._path.name + ".1"))
        self._reopen()
        return os.fstat(self._descriptor)

    @contextmanager
    def _file_lock(self) -> Iterator[None]:
        descriptor = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing releases the flock

    def _report(self, error: OSError | None) -> None:
        """One line on stderr when writing starts failing and one when it works again; never a flood."""
        if error is not None and self._failing:
            return
        self._failing = error is not None
        entry = {
            "path": str(self._path),
            "error": error.strerror if error is not None else None,
            **({} if error is not None else {"lines_lost": self._lines_lost}),
            "event": "audit_file_write_failed" if error is not None else "audit_file_writable_again",
            "level": "error" if error is not None else "info",
            "timestamp": utc_timestamp(),
            "pid": os.getpid(),
        }
        try:
            sys.stderr.write(orjson.dumps(entry).decode() + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
