"""The registry in a file on disk: loaded once, re-read when another process changed it, written atomically.

Writers hold an asyncio lock (requests of this process) and an exclusive
``flock`` on ``<registry>.lock`` (other gateway processes on the same file),
re-read the file under that lock, apply the change to what is on disk, and
replace the file by ``rename`` after ``fsync``: a crash at any instant leaves
either the old or the new file, both complete. The temporary file of a writer
killed before its rename is removed at the next start or write
(``gateway.registry.leftovers``).

A write that fails (disk full, a file size limit, a read-only folder) leaves
the old file, answers 507 ``registry_unwritable`` and shows as ``unwritable``
in ``/readyz`` until a later write succeeds.

With a ``secret_key`` the store writes every password encrypted and decrypts
them on load (``secrets_at_rest``); ``rotate_key`` re-encrypts the whole file
under the same lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import structlog

from gateway.errors import InternalError, RegistryUnwritable
from gateway.registry.file_format import RegistryFormatError, dump_registry, load_registry
from gateway.registry.leftovers import TEMPORARY_SUFFIX, remove_leftovers, temporary_prefix
from gateway.registry.models import RegistryState
from gateway.registry.protocol import Change, RegistryLoadError, RegistryNotEmpty, RegistryStatus, is_empty
from gateway.registry.secrets_at_rest import PasswordCipher

T = TypeVar("T")

FILE_MODE = 0o600

Signature = tuple[int, int, int]
"""A registry file's (inode, mtime in ns, size): a new one whenever the file is replaced."""


class FileRegistryStore:
    """The one place that reads and writes the registry file (a ``Registry``)."""

    def __init__(self, path: Path, secret_key: str | None = None) -> None:
        self.path = path
        self._cipher = PasswordCipher(secret_key)
        self._lock_path = path.with_name(path.name + ".lock")
        self._write_lock = asyncio.Lock()
        # One tuple, assigned at once: the event loop (reads) and a worker thread (updates) both replace it,
        # and a state must never be paired with the signature of another file.
        self._loaded: tuple[RegistryState, Signature] | None = None
        self._status = RegistryStatus.LOADED
        self._watchers: list[Callable[[RegistryState], None]] = []
        self._logger: structlog.typing.FilteringBoundLogger | None = None
        self.leftovers_removed: list[str] = []
        """Temporary files of dead writers that ``open`` removed (``gateway.registry.leftovers``), for the log."""

    @property
    def location(self) -> str:
        return f"registry file {self.path}"

    def open(self) -> RegistryState:
        """Load the file, creating an empty registry (mode 0600) when there is none."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._file_lock():
            self.leftovers_removed = remove_leftovers(self.path)
            if not self.path.exists():
                self._write(RegistryState(token_salt=secrets.token_hex(32)))
            self._reload()
        return self.state

    @property
    def state(self) -> RegistryState:
        """The current content, re-read first if another process replaced the file (a ``stat`` per read).

        A request reads it once, into its context (``gateway.observability.observation.RequestContext``).
        """
        loaded = self._loaded
        if loaded is None:
            raise RuntimeError("FileRegistryStore.open() was not called")
        if self._file_signature() != loaded[1]:
            try:
                loaded = self._reload()
            except RegistryLoadError:
                pass  # keep serving what we had; the next write re-reads under the lock and reports it
        return loaded[0]

    @property
    def status(self) -> RegistryStatus:
        """``unwritable`` from a failed write until one succeeds, else ``loaded``."""
        return self._status

    @property
    def unconfirmed_seconds(self) -> float:
        """Always 0: every read looks at the file itself, so what is held is never older than the file."""
        return 0.0

    @property
    def encrypts_passwords(self) -> bool:
        """True when passwords are written encrypted (a secret key was given)."""
        return self._cipher.encrypts

    def watch(self, callback: Callable[[RegistryState], None]) -> None:
        self._watchers.append(callback)

    async def start(self, logger: structlog.typing.FilteringBoundLogger) -> None:
        """Nothing to follow: the file is re-read when its signature changes. Keeps ``logger`` for the writes."""
        self._logger = logger

    async def close(self) -> None:
        """Nothing is held open between writes."""

    def read_existing(self) -> RegistryState:
        if not self.path.is_file():
            raise RegistryLoadError(self.location, "there is no such file")
        self._reload()
        return self.state

    def replace(self, state: RegistryState, *, force: bool) -> None:
        """Write ``state`` as the whole file, under the lock; an existing registry only if empty or ``force``."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._file_lock():
            if self.path.exists() and not force:
                state, _ = self._reload()
                if not is_empty(state):
                    raise RegistryNotEmpty(f"{self.location} already holds a registry")
            self._write(state)

    def rotate_key(self, new_key: str) -> int:
        """Rewrite the file with every password encrypted under ``new_key``; returns how many there are.

        Reads the file with this store's key (clear passwords need none). When
        that fails, ``RegistryLoadError`` says why and the file stays as it was.
        """
        if not self.path.is_file():
            raise RegistryLoadError(self.location, "there is no such file")
        new_cipher = PasswordCipher(new_key)
        with self._file_lock():
            state, _ = self._reload()
            self._write(state, new_cipher)
            self._cipher = new_cipher
            self._loaded = (state, self._current_signature())
            return len(state.databases)

    async def update(self, change: Change[T]) -> T:
        """Apply ``change`` to the state on disk and save its result; nothing is saved if it raises."""
        async with self._write_lock:
            try:
                result = await asyncio.to_thread(self._update_under_file_lock, change)
            except RegistryLoadError as error:
                # Someone damaged the file under us: refuse the change, never overwrite what is there.
                raise InternalError(
                    "the registry file can no longer be read, so nothing was changed; the log names the problem"
                ) from error
            except OSError as error:
                self._status = RegistryStatus.UNWRITABLE
                raise RegistryUnwritable.from_os_error(error) from error
            self._status = RegistryStatus.LOADED
            return result

    def _update_under_file_lock(self, change: Change[T]) -> T:
        with self._file_lock():
            loaded = self._loaded
            if loaded is None or self._file_signature() != loaded[1]:
                loaded = self._reload()
            state = loaded[0]
            new_state, result = change(state)
            if new_state is not state:
                # Another process of this file may have died mid-write since: its temporary file goes first.
                removed = remove_leftovers(self.path)
                if removed and self._logger is not None:
                    self._logger.info("registry_leftovers_removed", registry=str(self.path), files=removed)
                self._write(new_state)
                self._loaded = (new_state, self._current_signature())
            return result

    def _reload(self) -> tuple[RegistryState, Signature]:
        """Load the file; content and signature come from one open file, so they always belong together."""
        try:
            with open(self.path, "rb") as handle:
                signature = _signature(os.fstat(handle.fileno()))
                content = handle.read()
        except OSError as error:
            raise RegistryLoadError(self.location, error.strerror or str(error)) from None
        try:
            loaded = (load_registry(content, self._cipher), signature)
        except RegistryFormatError as error:
            raise RegistryLoadError(self.location, str(error)) from None
        self._loaded = loaded
        for callback in self._watchers:
            callback(loaded[0])
        return loaded

    def _write(self, state: RegistryState, cipher: PasswordCipher | None = None) -> None:
        content = dump_registry(state, cipher or self._cipher)
        folder = self.path.parent
        # Named for remove_leftovers, which removes what a writer killed before the rename left.
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=temporary_prefix(self.path), suffix=TEMPORARY_SUFFIX)
        try:
            os.fchmod(descriptor, FILE_MODE)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        _fsync_folder(folder)

    def _file_signature(self) -> Signature | None:
        try:
            return _signature(os.stat(self.path))
        except FileNotFoundError:
            return None

    def _current_signature(self) -> Signature:
        """The signature of the file just written (under the file lock, so it is ours)."""
        signature = self._file_signature()
        if signature is None:
            raise RegistryLoadError(self.location, "the file disappeared right after it was written")
        return signature

    @contextmanager
    def _file_lock(self) -> Iterator[None]:
        descriptor = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing releases the flock


def _signature(info: os.stat_result) -> Signature:
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def _fsync_folder(folder: Path) -> None:
    # The rename is durable only once the folder's entry is on disk.
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)

