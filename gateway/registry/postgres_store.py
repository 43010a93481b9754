"""The registry in a PostgreSQL database, shared by gateways on several hosts (a ``Registry``).

Each gateway process holds the registry as a ``RegistryState`` in memory and
serves every read from it. The tables are described in ``postgres_schema``.

- **Changes.** ``update`` runs one transaction on the process's writer
  connection: lock the registry row (``SELECT ... FOR UPDATE``: changes of all
  gateways queue there, none is lost), load the stored document if another
  gateway changed it since, apply the change, then write the document with the
  version counted up, ``NOTIFY`` and ``COMMIT`` in one round trip. The answer
  is sent only after the commit.
- **Following others.** A task LISTENs on its own connection; a notification
  with another version than the one held makes it load the document. Every
  ``VERSION_CHECK_SECONDS`` without a notification it compares versions
  anyway, and after every reconnection at once (notifications sent meanwhile
  are lost).
- **Outages.** While the registry database cannot be reached, reads and
  GetData go on from the state held, changes answer 503
  ``registry_unavailable``, ``status`` is ``unavailable``, and the task
  reconnects with backoff; nothing needs a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

import aiopg
import psycopg2
import psycopg2.errors
import structlog

from gateway.errors import GatewayError, InternalError, RegistryUnavailable, RegistryUnwritable
from gateway.registry.file_format import dump_registry
from gateway.registry.models import RegistryState
from gateway.registry.postgres_schema import (
    CHANNEL,
    CONNECT_TIMEOUT_SECONDS,
    CONNECTION_PARAMETERS,
    SAVE_AND_COMMIT,
    SCHEMA,
    SELECT_CHANGED,
    SELECT_VERSION_FOR_UPDATE,
    RegistryDatabase,
    first_line,
    is_connection_lost,
)
from gateway.registry.protocol import Change, RegistryLoadError, RegistryStatus
from gateway.registry.secrets_at_rest import PasswordCipher

T = TypeVar("T")

VERSION_CHECK_SECONDS = 5.0
"""Without a notification for this long, the follower compares versions anyway (a lost notification)."""
STATEMENT_TIMEOUT_SECONDS = 10.0
"""How long one round trip to the registry database may take before the connection is given up."""
CHECK_TIMEOUT_SECONDS = 2.0
"""How long the follower's version check may take (it holds back this process's changes meanwhile)."""
RECONNECT_DELAYS = (0.1, 0.2, 0.5, 1.0, 2.0)
"""Waits between the follower's reconnection attempts; the last repeats."""


class _ConnectionLost(Exception):
    """The writer connection broke before COMMIT was sent: nothing was saved."""


class PostgresRegistryStore:
    """The registry in a PostgreSQL database, followed through LISTEN/NOTIFY."""

    def __init__(self, url: str, display: str, secret_key: str | None = None) -> None:
        self._url = url
        self._database = RegistryDatabase(url, display)
        self._cipher = PasswordCipher(secret_key)
        self._state: RegistryState | None = None
        self._version = 0
        self._in_step = True
        self._unwritable = False
        self._watchers: list[Callable[[RegistryState], None]] = []
        self._lock = asyncio.Lock()  # one change at a time per process; also orders the follower's loads
        self._writer: aiopg.Connection | None = None
        self._follower: asyncio.Task[None] | None = None
        self._failed_attempts = 0
        self._logger: structlog.typing.FilteringBoundLogger = structlog.get_logger()

    # -- the Registry protocol ---------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self._database.location

    @property
    def state(self) -> RegistryState:
        if self._state is None:
            raise RuntimeError("PostgresRegistryStore.open() was not called")
        return self._state

    @property
    def status(self) -> RegistryStatus:
        if not self._in_step:
            return RegistryStatus.UNAVAILABLE
        return RegistryStatus.UNWRITABLE if self._unwritable else RegistryStatus.LOADED

    @property
    def encrypts_passwords(self) -> bool:
        return self._cipher.encrypts

    def open(self) -> RegistryState:
        self._accept(*self._database.open(self._cipher))
        return self.state

    def watch(self, callback: Callable[[RegistryState], None]) -> None:
        self._watchers.append(callback)

    async def start(self, logger: structlog.typing.FilteringBoundLogger) -> None:
        self._logger = logger
        self._follower = asyncio.get_running_loop().create_task(self._follow())

    async def close(self) -> None:
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower
            self._follower = None
        self._drop_writer()

    def rotate_key(self, new_key: str) -> int:
        new_cipher = PasswordCipher(new_key)
        count = self._database.rotate_key(self._cipher, new_cipher)
        self._cipher = new_cipher
        return count

    def read_existing(self) -> RegistryState:
        return self._database.read_existing(self._cipher)

    def replace(self, state: RegistryState, *, force: bool) -> None:
        self._database.replace(state, self._cipher, force=force)

    async def update(self, change: Change[T]) -> T:
        async with self._lock:
            reused = self._writer is not None and not self._writer.closed
            try:
                try:
                    return await self._change(change)
                except _ConnectionLost:
                    if not reused:
                        raise
                # A connection the server ended while idle (a restart, pg_terminate_backend) fails at
                # its first statement, before anything was saved: once more, on a new connection.
                return await self._change(change)
            except _ConnectionLost:
                raise RegistryUnavailable(
                    "the registry database cannot be reached, so nothing was changed; reads go on from what this"
                    " gateway holds, repeat the change once the registry is back (GET /readyz shows it)"
                ) from None
            except RegistryLoadError as error:
                self._logger.error("registry_unreadable", registry=self.location, reason=str(error))
                raise InternalError(
                    "the registry can no longer be read, so nothing was changed; the log names the problem"
                ) from None

    # -- changes -----------------------------------------------------------------------------------

    async def _change(self, change: Change[T]) -> T:
        """One transaction on the writer connection; raises ``_ConnectionLost`` when nothing can have been saved."""
        try:
            connection = await self._writer_connection()
            async with connection.cursor() as cursor:
                await cursor.execute(f"BEGIN; {SELECT_VERSION_FOR_UPDATE}")
                (version,) = await cursor.fetchone()
                if version != self._version:
                    await self._load(cursor)
                state = self.state
                try:
                    new_state, result = change(state)
                except GatewayError:
                    await cursor.execute("ROLLBACK")
                    raise
                if new_state is state:
                    await cursor.execute("ROLLBACK")
                    return result
                await self._save(cursor, new_state)
                return result
        except GatewayError:
            raise
        except BaseException as error:
            # Cancelled, refused or broken mid-transaction: the server rolls back with the connection.
            self._drop_writer()
            if is_connection_lost(error):
                raise _ConnectionLost() from error
            if isinstance(error, psycopg2.Error):
                self._logger.error("registry_change_refused", registry=self.location, reason=first_line(error))
                raise RegistryUnavailable(
                    "the registry database refused the change, so nothing was changed; the gateway log says why"
                ) from None
            raise

    async def _save(self, cursor: Any, new_state: RegistryState) -> None:
        """Write, notify and commit in one round trip; then hold the new state."""
        document = (await asyncio.to_thread(dump_registry, new_state, self._cipher)).decode()
        version = self._version + 1
        try:
            await cursor.execute(SAVE_AND_COMMIT, {"version": version, "document": document})
        except psycopg2.errors.DiskFull:
            self._drop_writer()  # its transaction is aborted
            self._unwritable = True
            raise RegistryUnwritable(
                "the registry database has no room to store the change, so nothing was changed;"
                " its administrator must free space"
            ) from None
        except BaseException as error:
            if not is_connection_lost(error):
                raise
            self._drop_writer()
            self._logger.error("registry_commit_unknown", registry=self.location, reason=first_line(error))
            raise RegistryUnavailable(
                "the connection to the registry database broke while the change was committed, so it may or may"
                " not be saved; look (e.g. list the grants) before repeating it"
            ) from None
        self._unwritable = False
        self._accept(version, new_state)

    async def _writer_connection(self) -> aiopg.Connection:
        if self._writer is None or self._writer.closed:
            self._writer = await self._connect()
        return self._writer

    def _drop_writer(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    async def _connect(self) -> aiopg.Connection:
        async with asyncio.timeout(CONNECT_TIMEOUT_SECONDS):
            return await aiopg.connect(
                self._url,
                timeout=STATEMENT_TIMEOUT_SECONDS,
                enable_json=False,
                enable_hstore=False,
                enable_uuid=False,
                **CONNECTION_PARAMETERS,
            )

    async def _load(self, cursor: Any, timeout: float | None = None) -> None:
        """Take the stored document if its version differs from the one held (the caller holds the lock)."""
        await cursor.execute(SELECT_CHANGED, (self._version,), timeout=timeout)
        row = await cursor.fetchone()
        if row is None:
            raise RegistryLoadError(self.location, f"the row of {SCHEMA}.registry is gone")
        version, document = row
        if document is not None:
            self._accept(version, await asyncio.to_thread(self._database.parse, document, self._cipher))

    def _accept(self, version: int, state: RegistryState) -> None:
        self._version, self._state = version, state
        for callback in self._watchers:
            callback(state)

    # -- following changes made elsewhere ----------------------------------------------------------

    async def _follow(self) -> None:
        while True:
            try:
                await self._listen()
            except Exception as error:  # noqa: BLE001 - whatever happens, the follower reconnects and goes on
                self._lost(error)
            delay = RECONNECT_DELAYS[min(self._failed_attempts, len(RECONNECT_DELAYS) - 1)]
            self._failed_attempts += 1
            await asyncio.sleep(delay)

    async def _listen(self) -> None:
        connection = await self._connect()
        try:
            async with connection.cursor() as cursor:
                await cursor.execute(f"LISTEN {CHANNEL}")
                while True:
                    async with self._lock:
                        await self._load(cursor, timeout=CHECK_TIMEOUT_SECONDS)
                    self._found()
                    await self._next_notice(connection)
        finally:
            connection.close()

    async def _next_notice(self, connection: aiopg.Connection) -> None:
        """Return on a notification of another version than the one held, or after ``VERSION_CHECK_SECONDS``."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(VERSION_CHECK_SECONDS):
                while True:
                    notice = await connection.notifies.get()
                    if notice.payload != str(self._version):
                        return

    def _lost(self, error: BaseException) -> None:
        if self._in_step:
            self._logger.warning("registry_unavailable", registry=self.location, reason=first_line(error))
        self._in_step = False

    def _found(self) -> None:
        self._failed_attempts = 0
        if not self._in_step:
            self._logger.info("registry_available", registry=self.location, version=self._version)
        self._in_step = True
