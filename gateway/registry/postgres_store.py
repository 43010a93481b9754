"""The registry in a PostgreSQL database, shared by gateways on several hosts (a ``Registry``).

Each gateway process holds the registry as a ``RegistryState`` in memory and
serves every read from it. The tables are described in ``postgres_schema``.

- **Changes.** ``update`` runs one transaction on the process's writer
  connection: lock the registry row (``SELECT ... FOR UPDATE``: changes of all
  gateways queue there, none is lost), load the stored document if another
  gateway changed it since, apply the change, then write the document with the
  version counted up, ``NOTIFY`` and ``COMMIT`` in one round trip. The answer
  is sent only after the commit.
- **Following others, outages, staleness.** ``postgres_follower``: changes
  made elsewhere are loaded within milliseconds; while the database cannot be
  reached, reads and GetData go on from the state held and changes answer 503
  ``registry_unavailable``, until ``registry_max_staleness`` passes without the
  state confirmed: then the store is ``stale`` and the gateway answers 503.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar

import aiopg
import psycopg2
import psycopg2.errors
import structlog

from gateway.errors import GatewayError, InternalError, RegistryUnavailable, RegistryUnwritable
from gateway.registry.file_format import dump_registry
from gateway.registry.models import RegistryState
from gateway.registry.postgres_follower import RegistryFollower
from gateway.registry.postgres_schema import (
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

STATEMENT_TIMEOUT_SECONDS = 10.0
"""How long one round trip to the registry database may take before the connection is given up."""


class _ConnectionLost(Exception):
    """The writer connection broke before COMMIT was sent: nothing was saved."""


class PostgresRegistryStore:
    """The registry in a PostgreSQL database, followed through LISTEN/NOTIFY."""

    def __init__(self, url: str, display: str, secret_key: str | None = None, *, max_staleness: float = 0.0) -> None:
        self._url = url
        self._database = RegistryDatabase(url, display)
        self._cipher = PasswordCipher(secret_key)
        self._state: RegistryState | None = None
        self._version = 0
        self._unwritable = False
        self._watchers: list[Callable[[RegistryState], None]] = []
        self._lock = asyncio.Lock()  # one change at a time per process; also orders the follower's loads
        self._writer: aiopg.Connection | None = None
        self._follower = RegistryFollower(self.location, max_staleness, self._connect, self._check, lambda: self._version)
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
        if self._follower.stale:
            return RegistryStatus.STALE
        if not self._follower.in_step:
            return RegistryStatus.UNAVAILABLE
        return RegistryStatus.UNWRITABLE if self._unwritable else RegistryStatus.LOADED

    @property
    def unconfirmed_seconds(self) -> float:
        return self._follower.unconfirmed_seconds

    @property
    def encrypts_passwords(self) -> bool:
        return self._cipher.encrypts

    def open(self) -> RegistryState:
        asked = time.monotonic()
        self._accept(*self._database.open(self._cipher))
        self._follower.confirm(asked)
        return self.state

    def watch(self, callback: Callable[[RegistryState], None]) -> None:
        self._watchers.append(callback)

    async def start(self, logger: structlog.typing.FilteringBoundLogger) -> None:
        self._logger = logger
        self._follower.start(logger)

    async def close(self) -> None:
        await self._follower.stop()
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
                asked = time.monotonic()
                await cursor.execute(f"BEGIN; {SELECT_VERSION_FOR_UPDATE}")
                (version,) = await cursor.fetchone()
                if version != self._version:
                    await self._load(cursor)
                self._follower.confirm(asked)  # the row is locked: nothing newer exists
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
        asked = time.monotonic()  # what the answer confirms is the stored version as of this moment
        await cursor.execute(SELECT_CHANGED, (self._version,), timeout=timeout)
        row = await cursor.fetchone()
        if row is None:
            raise RegistryLoadError(self.location, f"the row of {SCHEMA}.registry is gone")
        version, document = row
        if document is not None:
            self._accept(version, await asyncio.to_thread(self._database.parse, document, self._cipher))
        self._follower.confirm(asked)

    async def _check(self, cursor: Any, timeout: float) -> None:
        """The follower's check: load the stored document if its version differs, under the changes' lock."""
        async with self._lock:
            await self._load(cursor, timeout=timeout)

    def _accept(self, version: int, state: RegistryState) -> None:
        self._version, self._state = version, state
        for callback in self._watchers:
            callback(state)
