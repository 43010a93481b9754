"""``SQLitePool``: one SQLite file, each query on a fresh read-only connection in a worker thread.

Three layers keep GetData read-only and within its grants:

1. the file is opened with ``mode=ro``: SQLite itself refuses every write;
2. an authorizer (``GrantsAuthorizer``) is consulted by SQLite's own compiler for
   every table, column and action of the statement: it allows reading granted
   tables (and what a granted view reads) and denies everything else;
3. ``check_query`` compiles the statement (as ``EXPLAIN``, which runs nothing)
   under that authorizer, so a refusal comes before any work, and ``run_query``
   sets the authorizer again on the connection that runs it.

sqlite3 blocks, so every call runs in this pool's worker threads. The statement
time limit and a cancelled request (the client went away) both call
``Connection.interrupt()``, the one sqlite3 call meant for another thread; the
request then waits for its worker to stop before the connection is closed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs
import structlog

from dbgateway_sqlite import rows as result_rows
from gateway.driver_protocol import (
    AcquireWaitTally,
    CatalogTable,
    ColumnInfo,
    PoolLimits,
    PoolStats,
    RowEncoding,
    TableKind,
    TableRef,
)
from gateway.errors import DatabaseUnavailable, QueryFailed, QueryRejected, QueryTimeout, RefusalReason

FOLDER = "main"
"""The one folder: SQLite's name for the file's own schema (ATTACH, which would add others, is denied)."""

_CATALOG_SQL = "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite~_%' ESCAPE '~'"
_NAMES_SQL = "SELECT lower(name) FROM sqlite_master WHERE type IN ('table', 'view')"
_PAGES_SQL = "SELECT rootpage, tbl_name FROM sqlite_master WHERE rootpage > 0"
_OPENING_OPCODES = {"OpenRead", "ReopenIdx", "OpenWrite"}
_KINDS = {"table": TableKind.TABLE, "view": TableKind.VIEW}
_ALWAYS_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
T = TypeVar("T")


@attrs.frozen
class SQLiteQuery:
    """A query ``check_query`` compiled under the token's grants (the gateway's ``CheckedQuery``)."""

    sql: str
    """The text as sent; it runs unchanged."""
    granted: frozenset[TableRef]
    """The token's grants, for the authorizer of the connection that runs it."""
    relations: frozenset[TableRef]
    """Every table or view the statement reads itself (not those a granted view reads for it)."""
    fingerprint: str
    """Of the text without constants, comments and layout (``fingerprint``)."""


class GrantsAuthorizer:
    """SQLite's authorizer callback: reading granted relations is all a statement may do."""

    def __init__(self, granted: frozenset[TableRef], names_in_file: frozenset[str]) -> None:
        # SQLite matches names case-insensitively (ASCII): FROM ITEMS reads the table the catalog calls items.
        self.granted = {table.lower(): (folder, table) for folder, table in granted if folder == FOLDER}
        self.names_in_file = names_in_file
        """Lower-cased names of the file's tables and views."""
        self.read: set[TableRef] = set()
        """Granted relations the statement reads itself (the audit's ``relations``)."""
        self.refusal: QueryRejected | None = None
        """Why the last denial denied, for a message better than SQLite's "not authorized"."""

    def __call__(self, action: int, first: str | None, second: str | None, database: str | None, via: str | None) -> int:
        if action in _ALWAYS_ALLOWED:
            return sqlite3.SQLITE_OK
        if action != sqlite3.SQLITE_READ or first is None:
            # Writes, PRAGMA, ATTACH, transactions, schema changes, temporary objects: none of them is a read.
            self.refusal = QueryRejected("only one SELECT reading granted tables is allowed", reason=RefusalReason.STATEMENT)
            return sqlite3.SQLITE_DENY
        if via is not None and via.lower() not in self.granted:
            self.refusal = not_granted(via)  # the view as the query names it, never a table behind it
            return sqlite3.SQLITE_DENY
        # A relation read for its row count only (count(*)) comes without database or column, and so
        # does a WITH query's or a subquery's name: those read no table, but a name in the file does.
        if database is None and not second and first.lower() not in self.names_in_file:
            return sqlite3.SQLITE_OK
        relation = self.granted.get(first.lower()) if database in (None, FOLDER) else None
        if relation is None:
            # Kept simple: a granted view is read only when the tables it reads are granted too.
            self.refusal = not_granted(first) if via is None else QueryRejected(
                f'view "{via}" reads a table not granted to this token', reason=RefusalReason.NOT_GRANTED
            )
            return sqlite3.SQLITE_DENY
        if via is None:
            self.read.add(relation)
        return sqlite3.SQLITE_OK


def opened_tables(program: list[Any], table_of_page: dict[int, str]) -> set[str]:
    """Every table whose b-tree (or an index of it) the compiled program opens, from EXPLAIN's rows.

    The authorizer alone misses one: a table joined ``USING (id)`` or ``NATURAL``
    that the query reads no column of by name is never shown to it.
    """
    return {
        table_of_page.get(page, "sqlite_master") if database == 0 else f"temp.{page}"
        for _, opcode, _, page, database, *_ in program
        if opcode in _OPENING_OPCODES
    }


def names_in_file(connection: sqlite3.Connection) -> frozenset[str]:
    return frozenset(name for (name,) in connection.execute(_NAMES_SQL))


def not_granted(table: str) -> QueryRejected:
    # Worded the same for a table that does not exist: a token holder learns no table name.
    return QueryRejected(f'table "{table}" is not granted to this token', reason=RefusalReason.NOT_GRANTED)


_SKIPPED = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?(?:\*/|$)|\b\d+(?:\.\d*)?(?:e[-+]?\d+)?\b", re.S | re.I)


def fingerprint(sql: str) -> str:
    """The same for texts that differ only in string and number constants, comments, spacing and case."""
    normalised = _SKIPPED.sub(lambda m: " " if m.group().startswith(("-", "/")) else "?", sql)
    return hashlib.sha256(" ".join(normalised.lower().split()).encode()).hexdigest()[:16]


def _compile_error(error: Exception, authorizer: GrantsAuthorizer) -> Exception:
    """What to answer for a statement SQLite would not compile."""
    message = str(error)
    if authorizer.refusal is not None:
        return authorizer.refusal
    if message.startswith("no such table: "):
        return not_granted(message.removeprefix("no such table: ").removeprefix(f"{FOLDER}."))
    if isinstance(error, sqlite3.ProgrammingError) and "one statement" in message:
        return QueryRejected("only one statement is allowed", reason=RefusalReason.STATEMENT)
    if isinstance(error, ValueError) or "syntax error" in message or "incomplete input" in message:
        return QueryRejected(f"the query does not parse: {message}", reason=RefusalReason.SYNTAX)
    return QueryFailed(f"the database refused the query: {message[:1024]}")


class SQLitePool:
    """Implements ``gateway.driver_protocol.DatabasePool`` for one SQLite file."""

    def __init__(self, path: Path, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger) -> None:
        self._path = path
        self._limits = limits
        self._logger = logger
        self._slots = asyncio.Semaphore(limits.max_size)
        self._running: set[SQLiteResult] = set()
        self._acquire_waits = AcquireWaitTally()
        # One thread per query slot, and one more so catalog reads and checks are not stuck behind them.
        self._threads = concurrent.futures.ThreadPoolExecutor(limits.max_size + 1, thread_name_prefix="sqlite")

    def connect(self) -> sqlite3.Connection:
        if not self._path.is_absolute():
            raise DatabaseUnavailable(f"the SQLite file must be given as an absolute path, not {str(self._path)!r}")
        # isolation_level=None: no implicit BEGIN, so no transaction outlives a statement.
        return sqlite3.connect(
            self._path.as_uri() + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
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

    async def check_query(self, sql: str, granted: frozenset[TableRef]) -> SQLiteQuery:
        authorizer = GrantsAuthorizer(granted, frozenset())

        def compile_only() -> None:
            with contextlib.closing(self.connect()) as connection:
                authorizer.names_in_file = names_in_file(connection)
                table_of_page = dict(connection.execute(_PAGES_SQL).fetchall())
                connection.set_authorizer(authorizer)
                # Compiled (and authorized) in full, but not run: EXPLAIN lists the program instead.
                program = connection.execute("EXPLAIN " + sql).fetchall()
            opened = opened_tables(program, table_of_page)
            for table in sorted(opened):
                if table.lower() not in authorizer.granted:
                    raise not_granted(table)
            authorizer.read.update(authorizer.granted[table.lower()] for table in opened)

        try:
            await self.in_thread(compile_only)
        except (sqlite3.Error, ValueError) as error:  # ValueError: a NUL in the text
            raise _compile_error(error, authorizer) from None
        return SQLiteQuery(sql, granted, frozenset(authorizer.read), fingerprint(sql))

    @contextlib.asynccontextmanager
    async def run_query(self, checked: SQLiteQuery) -> AsyncIterator[SQLiteResult]:
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
            in_use=len(self._running), idle=0, max_size=self._limits.max_size, acquire_waits=self._acquire_waits.snapshot()
        )

    async def close(self) -> None:
        # A statement still running would keep its worker thread, and so the process, alive.
        for result in list(self._running):
            result.connection.interrupt()
        self._threads.shutdown(wait=False, cancel_futures=True)


class SQLiteResult:
    """One running statement (the gateway's ``QueryResult``), its rows fetched in batches by a worker."""

    def __init__(self, pool: SQLitePool, connection: sqlite3.Connection, limits: PoolLimits) -> None:
        self.pool = pool
        self.connection = connection
        self.limits = limits
        self.columns: list[ColumnInfo] = []
        self.row_count = 0
        self.truncated = False
        self._timed_out = False
        self._cursor: sqlite3.Cursor | None = None
        self._fetched: list[Any] = []
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
                raise QueryTimeout(f"the query ran past the statement time limit ({self.limits.statement_timeout:g} s)") from None
            raise QueryFailed(f"the database refused the query: {str(error)[:1024]}") from None

    async def start(self, checked: SQLiteQuery) -> None:
        def execute() -> tuple[Any, list[Any]]:
            # Again: the check ran on another connection.
            self.connection.set_authorizer(GrantsAuthorizer(checked.granted, names_in_file(self.connection)))
            self._cursor = self.connection.execute(checked.sql)
            return self._cursor.description or (), self._fetch()

        description, self._fetched = await self.step(execute)
        names = result_rows.unique_column_names([column[0] for column in description])
        # SQLite has no result types; the first row's storage classes are the honest answer (and "" without rows).
        first = self._fetched[0] if self._fetched else [None] * len(names)
        self.columns = [ColumnInfo(name, _storage_class(value) if self._fetched else "") for name, value in zip(names, first)]

    def _fetch(self) -> list[Any]:
        # One row past the limit, at most, tells whether the limit cut the result.
        size = min(self.limits.batch_size, self.limits.row_limit + 1 - self.row_count - len(self._fetched))
        assert self._cursor is not None
        batch = self._cursor.fetchmany(size)
        self._exhausted = len(batch) < size
        return batch

    # --- Encoding and the row limit: TO BE DELETED once the gateway encodes rows itself (see rows.py). ---
    async def json_batches(self, encoding: RowEncoding | None = None) -> AsyncIterator[bytes]:
        names = [column.name for column in self.columns]
        batch, self._fetched = self._fetched, []
        while batch:
            batch, self.truncated = result_rows.within_limit(batch, self.row_count, self.limits.row_limit)
            self.row_count += len(batch)
            if batch:
                yield result_rows.encode(names, batch, encoding)
            if self.truncated or self._exhausted:
                return
            batch = await self.step(self._fetch)


def _storage_class(value: Any) -> str:
    return {int: "integer", float: "real", str: "text", bytes: "blob"}.get(type(value), "null")
