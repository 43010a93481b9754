"""``PostgresPool``: one registered PostgreSQL database behind an aiopg pool.

Every connection starts with the session settings GetData relies on, passed
in libpq's ``options`` so they cost no round trip: read-only transactions by
default, the statement time limit, a ``search_path`` of ``pg_catalog`` only
(an unqualified name can never reach a user schema), UTC, ISO dates and ISO
8601 intervals, and full float precision.

A request takes one of ``pool_max_size`` slots (``BackendSlots``) before it
takes a connection; a backend that runs on after its connection was discarded
keeps its slot until it is gone (``RunawayBackends``), so the database never
sees more than ``pool_max_size`` backends of one pool, plus, while runaways
exist, the watcher's one connection.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiopg
import attrs
import psycopg2
import structlog

from drivers.postgres.catalog import CATALOG_SQL, COLUMNS_SQL, catalog_tables, table_columns
from drivers.postgres.connections.acquire import acquire_live_connection, release_connection
from drivers.postgres.connections.backend_slots import BackendSlots
from drivers.postgres.connections.runaways import WATCHER_APPLICATION_NAME, RunawayBackends
from drivers.postgres.guard.cache import GuardCache
from drivers.postgres.guard.grants.enforce import check_narrowed
from drivers.postgres.guard.grants.narrowed_cache import NarrowedGuardCache
from drivers.postgres.guard.grants.row_filters import RowFilterRefused, normalized_filter
from drivers.postgres.guard.grants.table_grant import TableGrant, narrowing_key
from drivers.postgres.guard.inheritance import PARTITIONED_TABLES_SQL, read_as_only
from drivers.postgres.guard.model.catalog import CATALOG_SQL as GUARD_CATALOG_SQL
from drivers.postgres.guard.policy import GuardLimits, GuardPolicy
from drivers.postgres.guard.process import LONG_TEXT_CHARS, LongTextGuard, PolicySource
from drivers.postgres.guard.rules.function_policy import is_denied_builtin
from drivers.postgres.guard.sql_guard import ParsedQuery, check_query, require_granted
from drivers.postgres.results.query_runner import MultiBatchQueries, StreamingQuery, run_query
from drivers.postgres.results.typecasters import TypeNameCache, register_json_casters
from gateway.contract.driver_protocol import (
    NO_NARROWING,
    AcquireWaitTally,
    CatalogTable,
    ColumnInfo,
    ConnectionData,
    NarrowedGrant,
    PoolLimits,
    PoolStats,
    QueryResult,
    TableRef,
)
from gateway.errors import BadRequest, DatabaseUnavailable

INLINE_CHECK_CHARS = 2048
"""Query texts up to this long are checked on the event loop (well under a millisecond); longer ones in a
thread, and those over ``guard_process.LONG_TEXT_CHARS`` in a child process."""


@attrs.frozen
class GuardOptions:
    """The operator's settings of the SQL guard (``[drivers.postgres]``)."""

    allow: frozenset[str] = frozenset()
    """Extra pg_catalog function names to allow."""
    deny: frozenset[str] = frozenset()
    """Function names to refuse; wins over ``allow`` and the built-in list."""
    limits: GuardLimits = GuardLimits()
    """The limits of the guard's size and cost model."""


def session_options(limits: PoolLimits) -> str:
    """libpq ``options``: the settings every gateway session runs with."""
    settings = {
        "default_transaction_read_only": "on",
        "statement_timeout": str(max(1, math.ceil(limits.statement_timeout * 1000))),
        # An idle transaction left by a bug must not hold locks or a snapshot for long.
        "idle_in_transaction_session_timeout": str(max(1, math.ceil(limits.statement_timeout * 1000)) + 5000),
        "search_path": "pg_catalog",
        "TimeZone": "UTC",
        "IntervalStyle": "iso_8601",
        "DateStyle": "ISO",
        "extra_float_digits": "3",
        "bytea_output": "hex",
        # The SQL guard reads string literals this way; a server default of "off" would let a
        # backslash make the server see code where the guard saw a string.
        "standard_conforming_strings": "on",
        # LLVM compiling the row-size check wrapped around every query (row_bounds) took 65-130 ms in
        # any plan estimated expensive, while the query itself ran in 4 ms: docs/security.md, layer 2.
        "jit": "off",
    }
    return " ".join(f"-c {name}={value}" for name, value in settings.items())


def describe_connection_error(error: BaseException) -> str:
    """The driver's reason in one line; libpq never puts the password in its messages."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text.removeprefix("FATAL: ").strip()


class PostgresPool:
    """Implements ``gateway.contract.driver_protocol.DatabasePool`` for one PostgreSQL database."""

    def __init__(
        self,
        connection: ConnectionData,
        limits: PoolLimits,
        logger: structlog.typing.FilteringBoundLogger,
        guard_options: GuardOptions,
    ) -> None:
        self._connection = connection
        self._limits = limits
        self._logger = logger
        self._guard_options = guard_options
        self._pool: aiopg.Pool | None = None
        self._opening = asyncio.Lock()
        self._query_policy: GuardPolicy | None = None
        self._long_texts: LongTextGuard | None = None
        """Checks texts over ``LONG_TEXT_CHARS`` in a child process (``guard_process.py``); made with the policy."""
        self._partitioned_tables: frozenset[TableRef] | None = None
        self._catalog_reading = asyncio.Lock()
        self._acquire_waits = AcquireWaitTally()
        self.type_names = TypeNameCache()
        self._multi_batch_queries = MultiBatchQueries()
        self._held_results: set[StreamingQuery] = set()
        """Results held for their next pages (their connections lent out); closed first when the pool closes."""
        self.guard_cache = GuardCache()
        """Decisions of the guard for queries that differ only in numeric constants (``guard_cache.py``)."""
        self.narrowed_cache = NarrowedGuardCache()
        """The same for tokens whose grants narrow a relation (``guard/grants/narrowed_cache.py``), per narrowing."""
        self._guard_thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sql-guard")
        self._runaways = RunawayBackends(
            BackendSlots(limits.max_size, limits.min_size), self._open_watcher_connection, logger
        )

    async def _aiopg_pool(self) -> aiopg.Pool:
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._pool is None:
                self._pool = await self._create_pool()
        return self._pool

    def _connection_arguments(self, application_name: str) -> dict[str, Any]:
        connection, limits = self._connection, self._limits
        return {
            "host": connection["ip"],
            "port": connection["port"],
            "dbname": connection["database"],
            "user": connection["username"],
            "password": connection.get("password", ""),
            "options": session_options(limits),
            "application_name": application_name,
            "connect_timeout": max(1, math.ceil(limits.acquire_timeout)),
            "enable_json": False,
            "enable_hstore": False,
            "enable_uuid": False,
        }

    async def _create_pool(self) -> aiopg.Pool:
        limits = self._limits
        try:
            return await asyncio.wait_for(
                aiopg.create_pool(
                    **self._connection_arguments("dbgateway"),
                    minsize=limits.min_size,
                    maxsize=limits.max_size,
                    # aiopg cancels a statement after this; the database's own limit must fire first.
                    timeout=limits.statement_timeout + 10,
                    on_connect=_prepare_connection,
                ),
                timeout=limits.acquire_timeout + 1,
            )
        except (psycopg2.Error, OSError, asyncio.TimeoutError) as error:
            raise DatabaseUnavailable(f"cannot connect to the database: {describe_connection_error(error)}") from None

    async def _open_watcher_connection(self) -> aiopg.Connection:
        """The runaway watcher's connection: outside the pool, whose slots runaways may all hold."""
        return await aiopg.connect(
            **self._connection_arguments(WATCHER_APPLICATION_NAME), timeout=self._limits.acquire_timeout + 1
        )

    @asynccontextmanager
    async def _cursor(self) -> AsyncIterator[aiopg.Cursor]:
        pool = await self._aiopg_pool()
        slots = self._runaways.slots
        connection = await acquire_live_connection(
            pool, self._limits.acquire_timeout, self._acquire_waits, self._logger, slots
        )
        try:
            async with connection.cursor() as cursor:
                yield cursor
        except (psycopg2.OperationalError, psycopg2.InterfaceError) as error:
            connection.close()
            raise DatabaseUnavailable(f"the database connection failed: {describe_connection_error(error)}") from None
        finally:
            release_connection(pool, connection, slots)

    async def _fetch_all(self, sql: str, parameters: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        async with self._cursor() as cursor:
            await cursor.execute(sql, parameters)
            return list(await cursor.fetchall())

    async def check(self) -> None:
        await self._fetch_all("SELECT 1")

    async def read_catalog(self) -> list[CatalogTable]:
        return catalog_tables(await self._fetch_all(CATALOG_SQL))

    async def describe_table(self, folder: str, table: str) -> list[ColumnInfo] | None:
        return table_columns(await self._fetch_all(COLUMNS_SQL, {"folder": folder, "table": table}))

    async def query_policy(self) -> GuardPolicy:
        """What GetData queries may do here, decided from this database's own pg_catalog once per pool."""
        if self._query_policy is not None:
            return self._query_policy
        # The first queries after a start or a refresh arrive together: one reads and builds, the others wait.
        async with self._catalog_reading:
            if self._query_policy is None:
                (row,) = await self._fetch_all(GUARD_CATALOG_SQL)
                options = self._guard_options
                # The child process that checks long texts builds the same policy from the same source.
                source = PolicySource(catalog_row=tuple(row), allow=options.allow, deny=options.deny,
                                      limits=options.limits)
                # Some 50 ms of work on 300 KiB of catalog: not on the event loop.
                policy = await asyncio.get_running_loop().run_in_executor(self._guard_thread, source.build_policy)
                # Denylist reasons were logged at start-up (PostgresDriver.startup_warnings); the
                # catalog's reasons (volatile, catalog-lookup types...) are known only now.
                for name, reason in policy.functions.overridden.items():
                    if not is_denied_builtin(name):
                        self._logger.warning("allow_functions_overrides_denial", function=name, reason=reason)
                self._long_texts = LongTextGuard(source)
                self._query_policy = policy
                self._logger.debug("function_allowlist_loaded", allowed=len(policy.functions.allowed))
            return self._query_policy

    async def partitioned_tables(self) -> frozenset[TableRef]:
        """This database's partitioned tables, read once per pool: GetData reads every other table as ONLY."""
        if self._partitioned_tables is not None:
            return self._partitioned_tables
        async with self._catalog_reading:
            if self._partitioned_tables is None:
                rows = await self._fetch_all(PARTITIONED_TABLES_SQL)
                self._partitioned_tables = frozenset((str(schema), str(name)) for schema, name in rows)
            return self._partitioned_tables

    async def normalize_row_filter(self, folder: str, table: str, text: str) -> str:
        """The filter as ``check_query``'s narrowing embeds it; ``BadRequest`` saying what to change."""
        policy = await self.query_policy()
        try:
            return normalized_filter(folder, table, text, policy)
        except RowFilterRefused as refused:
            raise BadRequest(refused.message) from None

    async def check_query(
        self,
        sql: str,
        granted: frozenset[TableRef],
        *,
        parameters: Sequence[str | None] = (),
        narrowing: Mapping[TableRef, NarrowedGrant] = NO_NARROWING,
    ) -> ParsedQuery:
        policy = await self.query_policy()
        partitioned = await self.partitioned_tables()
        values = tuple(parameters)
        grants = {ref: TableGrant(columns=grant.columns, row_filter=grant.row_filter)
                  for ref, grant in narrowing.items() if ref in granted}
        key = narrowing_key(grants)

        def checked() -> ParsedQuery:
            if key and values:
                # The narrowed cache keys by text alone; sizes may depend on the values, so each is checked fresh.
                narrowed = check_narrowed(sql, granted, policy, grants, values)
                return require_granted(read_as_only(narrowed.parsed, partitioned), granted)
            if key:  # the token's view of the catalog, its narrowed relations read through their fences
                return self.narrowed_cache.check(sql, granted, key, lambda text: check_narrowed(
                    text, granted, policy, grants), partitioned)
            # The cache runs the grant check itself; the guard checks everything else once per key.
            return self.guard_cache.check(
                sql, granted, lambda text: check_query(text, granted, policy, values), partitioned, values)

        if len(sql) <= INLINE_CHECK_CHARS:
            return checked()
        if len(sql) > LONG_TEXT_CHARS and not key:  # the child process knows no narrowing: a thread checks those
            # Turning a 100 KiB text's parse tree into Python objects holds the GIL for tens of milliseconds,
            # in any thread: such texts (which the guard cache does not keep) are checked in a child process.
            assert self._long_texts is not None  # made with the policy
            return require_granted(await self._long_texts.check(sql, partitioned, granted, values), granted)
        # Parsing and walking up to 16 KiB of SQL takes up to some 10 ms: on the event loop, every other
        # request of the process would wait that long. One thread per pool takes them in turn; pglast
        # parses without the GIL and the walk yields it every few milliseconds.
        return await asyncio.get_running_loop().run_in_executor(self._guard_thread, checked)

    holds_results = True
    """A result cut at the row limit can be held for its next pages (``StreamingQuery.hold``)."""

    def run_query(
        self, checked: ParsedQuery, *, parameters: Sequence[str | None] = (), hold_seconds: float | None = None
    ) -> Any:
        return self._run_query(checked, tuple(parameters), hold_seconds)

    @asynccontextmanager
    async def _run_query(
        self, checked: ParsedQuery, parameters: tuple[str | None, ...], hold_seconds: float | None
    ) -> AsyncIterator[QueryResult]:
        pool = await self._aiopg_pool()
        async with run_query(
            pool,
            checked.sql,
            self._limits,
            self.type_names,
            self._logger,
            acquire_waits=self._acquire_waits,
            multi_batch=self._multi_batch_queries,
            runaways=self._runaways,
            parameters=parameters,
            hold_seconds=hold_seconds,
            held=self._held_results,
        ) as result:
            yield result

    def stats(self) -> PoolStats:
        pool = self._pool
        # aiopg's size counts idle, lent-out and being-opened connections.
        idle = pool.freesize if pool is not None else 0
        in_use = pool.size - idle if pool is not None else 0
        return PoolStats(
            in_use=in_use,
            idle=idle,
            max_size=self._limits.max_size,
            acquire_waits=self._acquire_waits.snapshot(),
            runaway=self._runaways.count,
        )

    async def close(self) -> None:
        # Held results keep their connections lent out: aiopg's pool would wait for them to come back.
        await asyncio.gather(*(held.close(commit=False) for held in list(self._held_results)), return_exceptions=True)
        self._guard_thread.shutdown(wait=False, cancel_futures=True)
        if self._long_texts is not None:
            await self._long_texts.close()
        await self._runaways.close()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
            await pool.wait_closed()


async def _prepare_connection(connection: aiopg.Connection) -> None:
    register_json_casters(connection.raw)
