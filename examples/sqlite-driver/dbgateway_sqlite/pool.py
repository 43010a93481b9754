"""``SQLitePool``: one SQLite file, each query on a fresh read-only connection in a worker thread.

The file is opened with ``mode=ro``, so SQLite itself refuses every write.
``check_query`` compiles the statement under the token's grants (``grants.py``)
before any work (and refuses parameter values: this example binds none); ``run_query`` sets the same authorizer again on the connection
that runs it.

sqlite3 blocks, so every call runs in this pool's worker threads. The statement
time limit and a cancelled request (the client went away) both call
``Connection.interrupt()``, the one sqlite3 call meant for another thread; the
request then waits for its worker to stop before the connection is closed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import structlog

from dbgateway_sqlite.grants import FOLDER, GrantsAuthorizer, SQLiteQuery, check_statement, names_in_file
from gateway.contract.driver_protocol import (
    AcquireWaitTally,
    CatalogTable,
    ColumnInfo,
    PoolLimits,
    PoolStats,
    Row,
    TableKind,
    TableRef,
)
from gateway.errors import DatabaseUnavailable, QueryFailed, QueryRejected, QueryTimeout, RefusalReason

_CATALOG_SQL = (
    "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite~_%' ESCAPE '~'"
)
_KINDS = {"table": TableKind.TABLE, "view": TableKind.VIEW}
T = TypeVar("T")


class SQLitePool:
    """Implements ``gateway.contract.driver_protocol.DatabasePool`` for one SQLite file."""

    def __init__(
        self, path: Path, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger, directory: Path | None
    ) -> None:
        self._path = path
        self._directory = directory
        self._limits = limits
        self._logger = logger
        self._slots = asyncio.Semaphore(limits.max_size)
        self._running: set[SQLiteResult] = set()
        self._acquire_waits = AcquireWaitTally()
        # One thread per query slot, and one more so catalog reads and checks are not stuck behind them.
        self._threads = concurrent.futures.ThreadPoolExecutor(limits.max_size + 1, thread_name_prefix="sqlite")

    def connect(self) -> sqlite3.Connection:
        if self._directory is None:
            raise DatabaseUnavailable(
                "the sqlite driver serves no file until [drivers.sqlite] directory names the folder it may read"
            )
        if not self._path.is_absolute():
            raise DatabaseUnavailable(f"the SQLite file must be given as an absolute path, not {str(self._path)!r}")
        # Resolved at every open, links and ".." followed: a link made inside the folder later cannot lead out.
        resolved = self._path.resolve()
        if not resolved.is_relative_to(self._directory):
            raise DatabaseUnavailable(f"the SQLite file must be inside {str(self._directory)!r} ([drivers.sqlite] directory)")
        # isolation_level=None: no implicit BEGIN, so no transaction outlives a statement.
        return sqlite3.connect(
            resolved.as_uri() + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )

    async def in_thread(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._threads, work)

    async def _read(self, sql: str, *parameters: Any) -> list[Any]:
        """Rows of one statement of the driver's own (no authorizer), on a connection of its own."""

        def read() -> list[Any]:
            with contextlib.closing(self.connect()) as connection:
                return connection.execute(sql, parameters).fetchall()

        try:
            return await self.in_thread(read)
        except sqlite3.Error as error:
            raise DatabaseUnavailable(f"cannot read the SQLite file {str(self._path)!r}: {error}") from None

    async def check(self) -> None:
        await self._read("SELECT count(*) FROM sqlite_master")  # fails on a file that is not SQLite's

    async def read_catalog(self) -> list[CatalogTable]:
        return [CatalogTable(FOLDER, name, _KINDS[kind]) for name, kind in await self._read(_CATALOG_SQL)]

    async def describe_table(self, folder: str, table: str) -> list[ColumnInfo] | None:
        if folder != FOLDER:
            return None
        columns = await self._read("SELECT name, type FROM pragma_table_info(?)", table)
        return [ColumnInfo(name, type_name) for name, type_name in columns] or None

    async def check_query(
        self, sql: str, granted: frozenset[TableRef], *, parameters: Sequence[str | None] = ()
    ) -> SQLiteQuery:
        if parameters:
            # SQLite could bind them, but its parameters ($1 is a *named* one there) do not count as PostgreSQL's:
            # an example driver refuses them plainly rather than bind values to the wrong places.
            raise QueryRejected(
                "this database's driver (sqlite) takes no parameter values (params / param): write the values "
                "into the query", reason=RefusalReason.CONSTRUCT,
            )

        def check() -> SQLiteQuery:
            with contextlib.closing(self.connect()) as connection:
                return check_statement(connection, sql, granted)

        try:
            return await self.in_thread(check)
        except sqlite3.Error as error:  # reading the schema failed; the statement's own errors are answered above
            raise DatabaseUnavailable(f"cannot read the SQLite file {str(self._path)!r}: {error}") from None

    @contextlib.asynccontextmanager
    async def run_query(
        self, checked: SQLiteQuery, *, parameters: Sequence[str | None] = ()
    ) -> AsyncIterator[SQLiteResult]:
        if parameters:  # check_query refused them; never run a query without the values it was sent with
            raise QueryRejected("this database's driver (sqlite) takes no parameter values",
                                reason=RefusalReason.CONSTRUCT)
        waited = time.monotonic()
        try:
            await asyncio.wait_for(self._slots.acquire(), self._limits.acquire_timeout)
        except TimeoutError:
            raise DatabaseUnavailable("no connection became free within the acquire time limit") from None
        finally:
            self._acquire_waits.record(time.monotonic() - waited)
        try:
            result = SQLiteResult(self, self.connect(), self._limits)
            self._running.add(result)
            stopwatch = asyncio.get_running_loop().call_later(self._limits.statement_timeout, result.time_up)
            try:
                await result.start(checked)
                yield result
            finally:
                stopwatch.cancel()
                # In a worker too: closing waits for the connection's lock, which a statement that
                # ignored its interrupt would hold; the event loop must never wait on it.
                def close() -> None:
                    result.connection.close()
                    self._running.discard(result)  # only now: until then close() may need to interrupt it

                await self.in_thread(close)
        finally:
            self._slots.release()

    def stats(self) -> PoolStats:
        return PoolStats(
            in_use=len(self._running),
            idle=0,
            max_size=self._limits.max_size,
            acquire_waits=self._acquire_waits.snapshot(),
        )

    async def close(self) -> None:
        # A statement still running would keep its worker thread, and so the process, alive.
        for result in list(self._running):
            result.connection.interrupt()
        self._threads.shutdown(wait=False, cancel_futures=True)


class SQLiteResult:
    """One running statement (the gateway's ``QueryResult``): its rows as Python values, fetched by a worker.

    The gateway makes the column names unique, encodes the rows, counts them and
    applies the row limit; this hands over ``row_limit`` + 1 rows at most, the
    one beyond telling the gateway the result was cut.
    """

    def __init__(self, pool: SQLitePool, connection: sqlite3.Connection, limits: PoolLimits) -> None:
        self.pool = pool
        self.connection = connection
        self.limits = limits
        self.columns: list[ColumnInfo] = []
        self._timed_out = False
        self._cursor: sqlite3.Cursor | None = None
        self._first: list[Row] = []
        self._handed = 0
        self._exhausted = False

    def time_up(self) -> None:
        self._timed_out = True
        self.connection.interrupt()

    async def step(self, work: Callable[[], T]) -> T:
        """Run ``work`` in a worker; a cancelled request interrupts the statement and waits for the worker."""
        future = asyncio.ensure_future(self.pool.in_thread(work))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            self.connection.interrupt()  # the client went away: stop the statement, do not finish it for nobody
            await asyncio.wait([future])  # the worker leaves the connection before the context closes it
            raise
        except sqlite3.Error as error:
            if self._timed_out:
                limit = self.limits.statement_timeout
                raise QueryTimeout(f"the query ran past the statement time limit ({limit:g} s)") from None
            raise QueryFailed(f"the database refused the query: {str(error)[:1024]}") from None

    async def start(self, checked: SQLiteQuery) -> None:
        def execute() -> tuple[Any, list[Any]]:
            # Again: the check ran on another connection.
            self.connection.set_authorizer(GrantsAuthorizer(checked.granted, names_in_file(self.connection)))
            self._cursor = self.connection.execute(checked.sql)
            return self._cursor.description or (), self._fetch_raw()

        description, first = await self.step(execute)
        # SQLite has no result types; the first row's storage classes are the honest answer (and "" without rows).
        classes = [_storage_class(value) for value in first[0]] if first else [""] * len(description)
        # The database's own names, repeats and all: the gateway makes them unique.
        self.columns = [ColumnInfo(column[0], type_name) for column, type_name in zip(description, classes)]
        self._first = [_row(row) for row in first]

    def _fetch_raw(self) -> list[Any]:
        # One row past the limit, at most, in all: it tells the gateway the limit cut the result.
        size = min(self.limits.batch_size, self.limits.row_limit + 1 - self._handed)
        assert self._cursor is not None
        batch = self._cursor.fetchmany(size) if size > 0 else []
        self._handed += len(batch)
        self._exhausted = len(batch) < size or self._handed > self.limits.row_limit
        return batch

    def _fetch(self) -> list[Row]:
        return [_row(row) for row in self._fetch_raw()]  # converted in the worker too, off the event loop

    async def batches(self) -> AsyncIterator[list[Row]]:
        batch, self._first = self._first, []  # no reference kept: the gateway empties each list as it encodes
        while batch:
            yield batch
            if self._exhausted:
                return
            batch = await self.step(self._fetch)

    def encoded(self, rows: int, size: int) -> None:
        """Nothing to do: fetches are sized in rows, SQLite rows are read from a local file."""


def _row(row: Sequence[Any]) -> list[Any]:
    return [_json_value(value) for value in row]


def _json_value(value: Any) -> Any:
    """One SQLite value (NULL, INTEGER, REAL, TEXT or BLOB) as a value ``driver_protocol.Row`` allows."""
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no infinities; PostgreSQL's driver spells them like this too. (SQLite stores NaN as NULL.)
        return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, bytes):
        return "\\x" + value.hex()  # as PostgreSQL prints bytea
    return value


def _storage_class(value: Any) -> str:
    return {int: "integer", float: "real", str: "text", bytes: "blob"}.get(type(value), "null")
