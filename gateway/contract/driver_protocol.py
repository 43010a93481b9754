"""What the gateway needs from a database backend.

A driver is found by its ``base_type`` (the AddDatabase parameter) through the
``dbgateway.drivers`` entry-point group; see ``gateway.databases.driver_loader`` and
``docs/drivers.md``. The gateway only ever talks to a backend through the
protocols below, so a new backend never needs an edit in ``gateway/``.

A driver owns only its database. It declares its connection fields
(``Driver.connection_fields``; ``gateway.contract.connection_fields`` checks inputs,
stores and answers them), checks and runs queries, and hands over rows as
Python values (``QueryResult.batches``); the gateway makes column names
unique, encodes every result format, counts rows and applies the row limit
(``gateway.results.result_rows``).

Errors a driver raises are the ones in ``gateway.errors``, never with a
status (the gateway decides each one's): ``DatabaseUnavailable`` (cannot
connect, no free connection), ``QueryRejected`` (the SQL is not allowed),
``QueryFailed`` (the database refused it), ``QueryTimeout`` and
``ResultTooLarge`` (a row larger than the driver reads). Anything else becomes
a 500 and is logged.

A driver whose query goes on working in the database after the query's
context ended (a backend that ignored the cancel) calls ``query_lingers`` with
a future that is done when that work is gone; the gateway keeps counting the
query against its token's limit until then (``gateway.databases.token_queries``).

The acquire-wait histogram stays with the driver (``AcquireWaitTally`` does
the bookkeeping): only the driver knows where, inside ``check``,
``read_catalog``, ``check_query`` or entering ``run_query``, a wait for a
connection ends.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import contextvars
import enum
import itertools
import types
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import attrs
import structlog

from gateway.contract.connection_fields import ConnectionData, ConnectionField, FieldKind

__all__ = [
    "ACQUIRE_WAIT_BUCKETS",
    "AcquireWaitTally",
    "AcquireWaits",
    "CatalogTable",
    "CheckedQuery",
    "ColumnInfo",
    "ConnectionData",
    "ConnectionField",
    "DatabasePool",
    "Driver",
    "FieldKind",
    "GrantNote",
    "HeldResult",
    "HoldableResult",
    "NarrowedGrant",
    "NO_NARROWING",
    "PoolLimits",
    "PoolStats",
    "QueryResult",
    "Row",
    "TableKind",
    "TableRef",
    "lingering_reported_to",
    "query_lingers",
]


@attrs.frozen
class PoolLimits:
    """Operator settings that bound every pool a driver opens."""

    min_size: int
    """Connections kept open once the pool is used."""
    max_size: int
    """Connections at most, per registered database."""
    acquire_timeout: float
    """Seconds a request waits for a free connection before 503."""
    statement_timeout: float
    """Seconds a query may run in all before 504."""
    row_limit: int
    """Rows a GetData answer carries at most; more sets ``truncated``."""
    batch_size: int = 5000
    """Rows fetched from the database per round trip while streaming, at most (fewer when rows are large);
    the operator's ``fetch_batch_size``, a driver setting."""
    max_row_bytes: int = 64 * 1024 * 1024
    """Largest result row (its size in the database) a query may return; a larger one fails the query
    (``ResultTooLarge``); the operator's ``max_row_bytes``, a driver setting."""


ACQUIRE_WAIT_BUCKETS: tuple[float, ...] = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds, in seconds, of the acquire-wait histogram every driver reports in ``AcquireWaits``."""


def _no_waits() -> tuple[int, ...]:
    return (0,) * len(ACQUIRE_WAIT_BUCKETS)


@attrs.frozen
class AcquireWaits:
    """How long taking a connection from the pool took, summed up since the pool opened (a histogram)."""

    count: int = 0
    """Acquire attempts that ended, whether or not they got a connection."""
    sum_seconds: float = 0.0
    """Their waits added up."""
    bucket_counts: tuple[int, ...] = attrs.field(factory=_no_waits)
    """Attempts that waited at most each bound of ``ACQUIRE_WAIT_BUCKETS``, cumulative, in the same order."""


@attrs.frozen
class PoolStats:
    """A pool's connections right now, and its acquire waits so far; read when metrics are scraped."""

    in_use: int
    """Connections lent out (or being opened) right now."""
    idle: int
    """Open connections waiting in the pool."""
    max_size: int
    """Connections the pool opens at most."""
    acquire_waits: AcquireWaits = AcquireWaits()
    """Every acquire attempt since the pool opened; starts again from zero for a new pool."""
    runaway: int = 0
    """Backends of earlier queries still running after their connection was discarded; each counts against ``max_size``."""


class AcquireWaitTally:
    """One pool's running ``AcquireWaits``: ``record`` each acquire attempt, ``snapshot`` in ``stats()``."""

    def __init__(self) -> None:
        self._per_bucket = [0] * len(ACQUIRE_WAIT_BUCKETS)
        self._count = 0
        self._sum_seconds = 0.0

    def record(self, seconds: float) -> None:
        self._count += 1
        self._sum_seconds += seconds
        # Waits above the last bound show only in count (the +Inf bucket).
        bucket = bisect.bisect_left(ACQUIRE_WAIT_BUCKETS, seconds)
        if bucket < len(self._per_bucket):
            self._per_bucket[bucket] += 1

    def snapshot(self) -> AcquireWaits:
        return AcquireWaits(
            count=self._count,
            sum_seconds=self._sum_seconds,
            bucket_counts=tuple(itertools.accumulate(self._per_bucket)),
        )


LingeringSink = Callable[["asyncio.Future[None]"], None]
"""Receives the futures ``query_lingers`` reports for the queries of one request."""

_lingering_sink: contextvars.ContextVar[LingeringSink | None] = contextvars.ContextVar("lingering_sink", default=None)


def query_lingers(gone: asyncio.Future[None]) -> None:
    """Report that the current query's work goes on in the database until ``gone`` is done.

    Drivers call this from the query's task (or a task it started), e.g. when a
    backend ignored the cancel and its connection was discarded. Outside a
    request that collects such reports it does nothing.
    """
    sink = _lingering_sink.get()
    if sink is not None:
        sink(gone)


@contextlib.contextmanager
def lingering_reported_to(sink: LingeringSink) -> Iterator[None]:
    """Within the block (and tasks started in it), ``query_lingers`` hands its futures to ``sink``."""
    reset = _lingering_sink.set(sink)
    try:
        yield
    finally:
        _lingering_sink.reset(reset)


class TableKind(enum.StrEnum):
    """The relation kinds every database has; a driver names others with strings of its own (``CatalogTable.kind``)."""

    TABLE = "table"
    VIEW = "view"


@attrs.frozen
class CatalogTable:
    """One relation found in a database's catalog; a driver may subclass it to carry what it needs later.

    The gateway reads ``folder`` and ``table`` only; it hands the same objects
    back to the driver's ``grant_notes``.
    """

    folder: str
    """Schema (the specification's folder), exactly as the database spells it."""
    table: str
    """Relation name inside the folder, exactly as the database spells it."""
    kind: str
    """What sort of relation it is: a ``TableKind``, or the driver's own word (lower-case, ``_`` between words)."""


@attrs.frozen
class GrantNote:
    """What an operator should know about a grant, in the driver's words; the gateway logs it at warning.

    E.g. tables whose rows a granted table's rows would include in the database, which the driver
    never returns through it and the grants leave out.
    """

    event: str
    """The log event, lower-case with ``_``."""
    fields: Mapping[str, Any]
    """Its fields (never a secret); the gateway adds ``local_table_name``, ``table`` (``folder.table``) and
    ``not_granted_to`` (whose grants were compared)."""


@attrs.frozen
class ColumnInfo:
    """A column as the database describes it."""

    name: str
    """Column name."""
    type_name: str
    """Type name as the database reports it (``timestamp without time zone``, ``text``)."""


TableRef = tuple[str, str]
"""A relation inside one database: ``(folder, table)``."""


@attrs.frozen
class NarrowedGrant:
    """A grant narrower than its table (issue 22): what ``check_query``'s ``narrowing`` says of one relation."""

    columns: tuple[str, ...] | None = None
    """The granted columns (None: every column); the token sees no other, system columns included."""
    row_filter: str | None = None
    """The administrator's filter as the driver's ``normalize_row_filter`` wrote it (None: every row)."""


NO_NARROWING: Mapping[tuple[str, str], NarrowedGrant] = types.MappingProxyType({})
"""``check_query``'s default: every granted relation whole."""


class CheckedQuery(Protocol):
    """What ``DatabasePool.check_query`` returns: the driver's own object, read by the gateway for its audit log."""

    @property
    def relations(self) -> frozenset[TableRef]:
        """Every ``(folder, table)`` the query reads (all of them granted, or the check would have refused)."""
        ...

    @property
    def fingerprint(self) -> str:
        """A fingerprint of the normalised query: the same for queries that differ only in constants,
        spacing, case of keywords or comments (a parser library's fingerprint where the dialect has one)."""
        ...


Row = Sequence[Any]
"""One result row: its values in column order, each ``None``, ``bool``, ``int``, ``float``, ``str``, a list of
these, or ``orjson.Fragment`` (JSON text the database already wrote, e.g. json/jsonb), as the contract's JSON
writes them. A fragment may be laid out over lines: the gateway writes its line breaks as spaces."""


class QueryResult(Protocol):
    """An executing query whose rows the driver hands over as Python values, a fetched batch at a time.

    The gateway (``gateway.results.result_rows``) does the rest, the same for every
    driver: unique column names, the encoding of each result format, the row
    count, the row limit and ``truncated``.
    """

    @property
    def columns(self) -> Sequence[ColumnInfo]:
        """Result columns in order, known on entering ``run_query``'s context, named as the database names them
        (repeated names too: the gateway makes them unique)."""
        ...

    def batches(self) -> AsyncIterator[list[Row]]:
        """Yield the rows, one list per batch fetched from the database; iterated once, inside the context.

        Yield ``PoolLimits.row_limit`` + 1 rows at most in all: the one beyond the
        limit tells the gateway the result was cut (it is never sent); the gateway
        stops reading there. Fetch the next batch while the gateway encodes the
        current one if you can. The gateway takes the rows out of each list as it
        encodes them (so hand over a fresh list each time and keep no other
        reference to its rows: a large value is then freed once written). Raise the
        errors listed in the module docstring, also after some batches.
        """
        ...

    def encoded(self, rows: int, size: int) -> None:
        """The gateway encoded the next ``rows`` rows as ``size`` bytes; called after each slice it encodes.

        A driver that sizes its fetches by the rows' bytes (a fetch budget in bytes)
        reads it; others do nothing.
        """
        ...


class HeldResult(Protocol):
    """The rest of a result cut at the row limit, held open for its next pages (a driver that ``holds_results``).

    It keeps what reading on needs, and nothing the gateway could not bound: for
    PostgreSQL the connection, its REPEATABLE READ transaction and the cursor (the
    next pages come from the same snapshot), and the one row beyond the last
    page's limit. The gateway counts it against its token's query limit and closes
    it when it expires, at shutdown, or to make room.
    """

    @property
    def closed(self) -> bool:
        """True once it was closed (by ``close``, a failed page, a page that read to the end, the pool's close)."""
        ...

    def next_page(self, row_limit: int) -> AbstractAsyncContextManager[QueryResult]:
        """The next rows as a ``QueryResult`` whose ``batches`` yield at most ``row_limit`` + 1 rows, starting
        with the row beyond the last page's limit. The context's end closes the held result (its connection
        goes back) unless the page's result was held again (``HoldableResult.hold``); an error closes it."""
        ...

    async def close(self) -> None:
        """Give back everything it holds; idempotent."""
        ...


class HoldableResult(QueryResult, Protocol):
    """The ``QueryResult`` of a pool that ``holds_results``, run with ``hold_seconds``."""

    def hold(self) -> HeldResult | None:
        """Keep the rest of the result open past its context (or page); None when it cannot be held.

        Called inside ``run_query``'s (or ``next_page``'s) context after ``batches`` yielded the row beyond
        the limit. The context's end then leaves the result open; an error leaving the context still closes it.
        """
        ...


class DatabasePool(Protocol):
    """Connections to one registered database.

    A pool may also have ``holds_results = True`` (PostgreSQL's has): its ``run_query`` then takes a keyword
    ``hold_seconds`` (how long the gateway may leave a held result idle), and yields a ``HoldableResult``.
    A pool without it (the example SQLite driver) has its cut answers carry no continuation.
    """

    async def check(self) -> None:
        """Connect once and run a trivial statement; raise ``DatabaseUnavailable`` if that fails."""
        ...

    async def read_catalog(self) -> list[CatalogTable]:
        """Every user relation outside the system schemas."""
        ...

    async def describe_table(self, folder: str, table: str) -> list[ColumnInfo] | None:
        """Columns in ordinal order, read live; ``None`` when the relation no longer exists."""
        ...

    async def check_query(
        self,
        sql: str,
        granted: frozenset[TableRef],
        *,
        parameters: Sequence[str | None] = (),
        narrowing: Mapping[TableRef, NarrowedGrant] = NO_NARROWING,
    ) -> CheckedQuery:
        """Refuse (``QueryRejected``) anything but one read-only query over ``granted``.

        Returns the checked query for ``run_query``: the driver's own object, of which
        the gateway reads only ``relations`` and ``fingerprint``. Async because a driver
        may need the database's catalog to decide (e.g. which functions exist);
        it should cache whatever does not depend on ``granted``.

        ``parameters`` are the values of the query's positional parameters (``$1``..``$n``
        for PostgreSQL; None is SQL NULL, every other value text, as GetData's ``params``
        and ``param`` inputs give them). The gateway passes the keyword only when the
        request sent values, so a driver without parameters needs no change; one that
        takes them checks the text with them (sizes may depend on the values), refuses a
        count that does not match the query's parameters (``QueryRejected``, naming what
        to fix), and never splices a value into the text: ``run_query`` gets the same
        values and has the database bind them.

        ``narrowing`` holds the granted relations the token may read only in part: the
        query must then see those columns only (a hidden column is refused as unknown) and
        those rows only, whatever its shape, and no condition of the query may run on a row
        the filter removes unless it reveals nothing (docs/security.md). A driver that
        cannot enforce a narrowing must refuse every query that reads a narrowed relation;
        it is empty for tokens whose grants are whole tables.
        """
        ...

    # Optional: ``async def normalize_row_filter(self, folder: str, table: str, text: str) -> str``.
    # Checks an administrator's row filter when it is granted and returns the text ``check_query``'s
    # ``narrowing`` will carry; raises ``gateway.errors.BadRequest`` saying what to change. A pool
    # without it cannot filter rows: GrantTableAccess refuses ``row_filter`` for its databases.

    def run_query(
        self, checked: Any, *, parameters: Sequence[str | None] = ()
    ) -> AbstractAsyncContextManager[QueryResult]:
        """Execute a checked query with the values ``check_query`` saw (passed only when there are some; a value
        the database refuses for its parameter's type is ``QueryFailed`` naming the parameter); the connection
        is returned clean when the context ends."""
        ...

    def stats(self) -> PoolStats:
        """Connections in use and idle now, and the acquire waits so far; cheap, no I/O (called per scrape).

        A pool that has not connected yet answers zeros. Record every attempt to
        take a connection (an ``AcquireWaitTally`` does the bookkeeping), also the
        ones that time out or fail: those waits are the signal an operator needs.
        """
        ...

    async def close(self) -> None:
        """Close every connection; later calls may reopen lazily or fail."""
        ...


class Driver(Protocol):
    """A backend factory, registered under its ``base_type`` name.

    Optional members the gateway looks for (``getattr``): ``startup_warnings()``
    (options that weaken a protection), ``grant_notes(catalog, table, granted)``
    (a list of ``GrantNote``: what an operator should know when ``table`` is
    granted and ``granted`` is all its grantees may read in the database;
    ``catalog`` is the driver's own ``read_catalog`` answer, no I/O), and
    ``refusal_reasons`` (its own ``QueryRejected`` reason slugs, kept as metric labels).
    """

    base_type: str
    """The AddDatabase ``base_type`` this driver serves."""

    connection_fields: tuple[ConnectionField, ...]
    """The AddDatabase parameters its databases need, any names, each of a ``FieldKind``, perhaps secret
    (``gateway.contract.connection_fields``). The gateway refuses another driver's fields, requires the required
    ones, and hands ``open_pool`` a ``ConnectionData`` holding only these (``connection["name"]``). A driver
    without the attribute takes no connection field."""

    def open_pool(
        self,
        connection: ConnectionData,
        limits: PoolLimits,
        logger: structlog.typing.FilteringBoundLogger,
    ) -> DatabasePool:
        """Return a pool for one database; connections open lazily, on first use."""
        ...

