"""``audit_file``: the ``audit`` events as JSON lines in a file of their own, appended and rotated by size.

Every worker of a gateway (and every gateway of a host) may append to the same
file: it is opened with ``O_APPEND`` and each line is one ``write``, so lines
never interleave, and each is in the file once ``write`` returns (nothing is
buffered in the process). Past ``audit_file_max_bytes`` the writer that notices
renames the file to ``<audit_file>.1`` (replacing the previous one) under an
exclusive ``flock`` on ``<audit_file>.lock``; every writer reopens the path
when it no longer names the file it writes to, which also follows an external
rotation by renaming (logrotate without ``copytruncate``).
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from gateway.config import ConfigError
from gateway.logbook import utc_timestamp

FILE_MODE = 0o600
"""The audit file holds query texts: readable by the gateway's account only."""


class AuditFile:
    """The ``LineSink`` of the audit logger: appends each line to ``path``."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        """Open (create) ``path``; ``ConfigError`` naming it when that fails, so start-up stops."""
        self._path = path
        self._max_bytes = max_bytes
        self._lock_path = path.with_name(path.name + ".lock")
        self._failing = False
        try:
            self._descriptor = self._open()
        except OSError as error:
            raise ConfigError(f"setting audit_file: cannot open {path} for appending ({error.strerror})") from None

    def write_line(self, line: str) -> None:
        data = line.encode() + b"\n"
        try:
            current = self._follow_renames()
            if self._max_bytes and current.st_size and current.st_size + len(data) > self._max_bytes:
                self._rotate(current)
            os.write(self._descriptor, data)
        except OSError as error:
            self._report(error)
            return
        if self._failing:
            self._failing = False
            self._report(None)

    def close(self) -> None:
        os.close(self._descriptor)

    def _open(self) -> int:
        return os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)

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

    def _rotate(self, current: os.stat_result) -> None:
        with self._file_lock():
            try:
                on_disk = os.stat(self._path)
            except FileNotFoundError:
                on_disk = None
            # Another process may have rotated since we looked: then only reopen.
            if on_disk is not None and (on_disk.st_dev, on_disk.st_ino) == (current.st_dev, current.st_ino):
                os.replace(self._path, self._path.with_name(self._path.name + ".1"))
            self._reopen()

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
