"""Run one checked SELECT on PostgreSQL and stream its rows, a fetched batch at a time.

``run_query`` is an async context manager: entering it takes a connection from
the aiopg pool, declares a server-side cursor over the query and fetches the
first batch in one round trip, so ``columns`` is known before the HTTP response
starts. ``batches()`` then yields the rows as Python values (the gateway
encodes them, ``gateway.results.result_rows``), at most ``batch_size`` rows per round trip
and fewer when rows are large; the next batch is already asked for while the
current one is encoded and written. Later batches give the columns whose caster is a Python
function as text, cast after that next FETCH went out (``deferred_casts``), since psycopg2 allows
no ``fetchmany`` while a statement runs. The cursor reads the query through ``row_bounds.bounded_sql``, so the
database refuses a row over each FETCH's byte cap (``ResultTooLarge``) before
sending it; see ``row_bounds`` for the caps and fetch sizes. Leaving the context ends the
transaction, so the pool gets its connection back idle, or closed when its
state is unknown; never inside a transaction.

A result that fits in one batch costs one round trip: ``DECLARE ...; FETCH ...``
sent as one message runs in an implicit transaction that ends with it (the
session is read-only and time-limited from the connection's start). A larger
result is run again inside ``BEGIN ... READ ONLY`` so its cursor outlives the
first batch; ``MultiBatchQueries`` remembers such query texts so that a repeated
large query goes straight to the explicit transaction.

A result run with ``hold_seconds`` (the gateway may continue it past the row
limit) that the row limit cuts always lives in the explicit transaction: if the
one-round-trip attempt was cut, the query runs again there. ``hold`` then keeps
the connection, the transaction (its snapshot), the cursor and the one row
beyond the limit past the context's end; ``next_page`` yields the same object
for the next rows: that row first, then FETCHes on the same cursor, under a new
statement time limit. A held result's transaction raises its own
``idle_in_transaction_session_timeout`` past ``hold_seconds`` (the session's is
a little over the statement time limit); the pool closes its held results when
it closes.

The statements are SQL text (``DECLARE ...; FETCH ...``) because psycopg2's
asynchronous connections, which aiopg uses, cannot open named cursors, and
psycopg2 keeps the result of the last statement of a batch.

Each statement is awaited without a task of its own (``statements``): aiopg's
own wait closes the connection when the request is cancelled, and the server
would go on running the query for a client that is gone. The runner waits on
aiopg's waiter until the query's deadline instead; on the time limit or a
cancellation it first cancels the statement on the server
(``cancel.start_cancel``: libpq's cancel request, sent without blocking the
process), waits briefly for the connection to answer, and then ends the
transaction, or discards the connection if it does not answer. A backend
discarded so may still run (a built-in that never checks for interrupts): its
pid goes to ``runaways.RunawayBackends``, which counts it against the pool
until it is gone.

The server's cancel (SQLSTATE 57014) reaches the runner as psycopg2's
``QueryCanceledError`` and becomes ``QueryTimeout``. Statements that still go
through aiopg's cursor (the type-name look-up, the closing COMMIT or ROLLBACK)
would have it reported as ``CancelledError`` and logged by the event loop's
exception handler; ``query_errors.CanceledStatementLogFilter`` drops that record.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
from collections.abc import AsyncIterator
from typing import Any

import aiopg
import psycopg2
import psycopg2.extensions as pg_ext

from drivers.postgres.connections import bound, statements
from drivers.postgres.connections.acquire import acquire_live_connection, first_line, release_connection
from drivers.postgres.connections.cancel import start_cancel
from drivers.postgres.connections.runaways import RunawayBackends
from drivers.postgres.results.deferred_casts import Finish, read_as_text
from drivers.postgres.results.missed_arrays import cast_missed_arrays
from drivers.postgres.results.query_errors import bound_error, cut_message, database_error, timeout_error
from drivers.postgres.results.row_bounds import (
    DISCARD_AFTER_ROW_BYTES,
    FETCH_BUDGET_BYTES,
    FetchPlan,
    bounded_sql,
    release_memory,
    row_too_large,
    set_cap_sql,
)
from drivers.postgres.results.typecasters import TypeNameCache, adopt_result_types
from gateway.contract.background import keep_running, retrieve_outcome
from gateway.contract.driver_protocol import AcquireWaitTally, ColumnInfo, PoolLimits, QueryResult, Row, query_lingers
from gateway.contract.waiting import wait_until
from gateway.errors import DatabaseUnavailable, QueryFailed, ResultTooLarge

CURSOR_NAME = "dbgw_cursor"
"""The server-side cursor each query is read through (one per transaction)."""

CLEANUP_GRACE_SECONDS = 2.0
"""How long a cancelled statement or the closing COMMIT/ROLLBACK may take before the connection is discarded."""

class MultiBatchQueries:
    """Which query texts lately needed more than one batch, so ``run_query`` skips the one-round-trip attempt.

    Keeps hashes of the last ``capacity`` such texts, not the texts (a query may
    be 100 KiB). A hash collision only makes a small query take the two-round-trip
    path; the answer is the same either way.
    """

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._hashes: collections.OrderedDict[int, None] = collections.OrderedDict()

    def __contains__(self, sql: str) -> bool:
        key = hash(sql)
        if key in self._hashes:
            self._hashes.move_to_end(key)
            return True
        return False

    def add(self, sql: str) -> None:
        self._hashes[hash(sql)] = None
        self._hashes.move_to_end(hash(sql))
        if len(self._hashes) > self._capacity:
            self._hashes.popitem(last=False)


class StreamingQuery:
    """The ``QueryResult`` that ``run_query`` yields: one server-side cursor, read in batches."""

    def __init__(
        self,
        pool: aiopg.Pool,
        connection: aiopg.Connection,
        limits: PoolLimits,
        logger: Any,
        runaways: RunawayBackends | None = None,
        hold_seconds: float | None = None,
        held: set[StreamingQuery] | None = None,
    ) -> None:
        self.columns: list[ColumnInfo] = []
        self._pool = pool
        self._connection = connection
        self._runaways = runaways
        self._limits = limits
        self._logger = logger
        self._loop = asyncio.get_running_loop()
        self._deadline = self._loop.time() + limits.statement_timeout
        self._cursor: Any = None
        """The psycopg2 cursor that holds each FETCH's result (``statements.send`` runs on it)."""
        self._first_batch_rows: int | None = None
        self._missed_arrays: list[tuple[int, Any]] = []
        self._oids: list[int] = []
        """The result's column types, for read_as_text once a second batch comes."""
        self._ran_twice = False
        self._in_flight: asyncio.Future[None] | None = None
        self._asked = 0
        self._cap = 0
        self._plan = FetchPlan(batch_size=limits.batch_size, max_row_bytes=limits.max_row_bytes)
        self._received = 0
        self._row_count = 0
        self._completed = False
        self._iterated = False
        self._closed = False
        self._parameters: tuple[str | None, ...] = ()
        """The values of the query's ``$1``..``$n``: bound by the server (``bound.py``), never in the text."""
        self._hold_seconds = hold_seconds
        """Set when the gateway may hold the result past its first page (``hold``): how long it may stay idle."""
        self._held_queries = held
        """The pool's held results, closed with it; this one is in it while held."""
        self._page_limit = limits.row_limit
        self._explicit = False
        """True once the cursor lives in an explicit transaction, which outlives each FETCH (and a page)."""
        self._carried: Row | None = None
        """The row beyond the last page's limit: yielded (and dropped by the gateway), it opens the next page."""
        self._later: Finish | None = None
        """Once later batches come as text (``read_as_text``): the cast of their Python-cast columns."""
        self._text_later = False
        self._held = False

    @property
    def completed(self) -> bool:
        """True once every row up to the limit was yielded without error."""
        return self._completed

    @property
    def ran_twice(self) -> bool:
        """True when the one-round-trip attempt found more than one batch, so the query ran again."""
        return self._ran_twice

    async def start(self, sql: str, type_names: TypeNameCache, *, one_round_trip_first: bool = True,
                    parameters: tuple[str | None, ...] = ()) -> None:
        """Run the query, fetch the first batch, and learn the columns.

        With ``one_round_trip_first`` the cursor lives in the implicit transaction
        of a single ``DECLARE ...; FETCH ...`` message (the session is read-only
        and time-limited already): a result that fits in one batch, or is cut by
        the row limit within it, is then complete and the connection idle again
        after that one round trip. A larger result loses its cursor when that
        implicit transaction ends, so the query runs again in an explicit
        transaction that keeps the cursor open for the next batches; the first
        attempt's rows are dropped, so every row sent comes from one snapshot.
        A query with ``parameters`` always takes the explicit transaction: its
        DECLARE goes through the extended protocol (``bound.py``), where a
        cursor needs a transaction block.
        """
        self._parameters = parameters
        try:
            self._cursor = self._connection.raw.cursor()
        except psycopg2.Error as exc:  # closed since it went back to the pool (the server ended it)
            raise DatabaseUnavailable(
                f"the database connection failed: {cut_message(first_line(exc))}"
            ) from exc
        received = await self._first_batch(bounded_sql(sql), one_round_trip_first)
        description = self._cursor.description or ()
        oids = [column.type_code for column in description]
        type_names_in_order = await self._lookup_type_names(type_names, oids)
        missed = adopt_result_types(self._connection.raw, oids, type_names.is_text_array)
        self._missed_arrays = [(index, missed[oid]) for index, oid in enumerate(oids) if oid in missed]
        self._oids = oids
        self.columns = [
            ColumnInfo(name=column.name, type_name=type_name)
            for column, type_name in zip(description, type_names_in_order)
        ]
        self._first_batch_rows = received

    async def _first_batch(self, bounded: str, one_round_trip_first: bool) -> int:
        """DECLARE the cursor and FETCH the first batch; return how many rows came.

        The first FETCH asks up to ``batch_size`` rows, each capped at its share
        of the fetch budget. When the database refuses a row over that share, the
        query runs again in an explicit transaction asking one row at a time at
        ``max_row_bytes`` (the fetch sizes then follow the rows' sizes).
        """
        room = self._limits.row_limit + 1
        self._asked, self._cap = self._plan.rows_and_cap(room, first=True)
        try:
            if one_round_trip_first and not self._parameters:
                received = await self._run(self._declare_and_fetch(bounded, explicit=False))
                cut = received > self._limits.row_limit
                # A cut result the gateway may hold needs its cursor past this message: it runs again, explicit.
                if received < self._asked or (self._asked > self._limits.row_limit and not (cut and self._hold_seconds)):
                    return received
                self._ran_twice = True
            return await self._open_explicitly(bounded)
        except ResultTooLarge:
            if self._cap >= self._limits.max_row_bytes:
                raise
        self._ran_twice = True
        self._asked, self._cap = 1, self._limits.max_row_bytes
        return await self._open_explicitly(bounded)

    async def _open_explicitly(self, bounded: str) -> int:
        """Open the cursor in an explicit transaction and fetch the first batch; with parameters, the
        transaction, the row cap and the DECLARE go as one pipeline whose values the server binds, then the
        FETCH as usual (two round trips)."""
        if not self._parameters:
            return await self._run(self._declare_and_fetch(bounded, explicit=True))
        pipeline: list[bound.Statement] = []
        if self._connection.raw.get_transaction_status() != pg_ext.TRANSACTION_STATUS_IDLE:
            pipeline.append(("ROLLBACK", ()))  # an earlier attempt's transaction
        pipeline.append(("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", ()))
        idle_limit = self._held_idle_limit()
        if idle_limit:
            pipeline.append((idle_limit, ()))
        pipeline += [
            (set_cap_sql(self._cap), ()),
            (f"DECLARE {CURSOR_NAME} NO SCROLL CURSOR FOR {bounded}", self._parameters),
        ]
        self._explicit = True
        await self._receive(self._start(lambda: bound.send(self._connection, pipeline)))
        return await self._run(f"FETCH FORWARD {self._asked} FROM {CURSOR_NAME}")

    def _declare_and_fetch(self, bounded: str, *, explicit: bool) -> str:
        """The message that (re)starts the query: the row cap, DECLARE and the first FETCH, in one round trip."""
        begin = ""
        if explicit:
            failed = self._connection.raw.get_transaction_status() == pg_ext.TRANSACTION_STATUS_INERROR
            begin = ("ROLLBACK; " if failed else "") + "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
            idle_limit = self._held_idle_limit()
            if idle_limit:
                begin += f"{idle_limit}; "
            self._explicit = True
        return (
            f"{begin}{set_cap_sql(self._cap)}; DECLARE {CURSOR_NAME} NO SCROLL CURSOR FOR {bounded}"
            f"; FETCH FORWARD {self._asked} FROM {CURSOR_NAME}"
        )

    def _held_idle_limit(self) -> str:
        """The statement that lets a result the gateway may hold idle in its transaction between pages, or ''."""
        if self._hold_seconds is None:
            return ""
        # The session's idle limit (a little over the statement time limit) would end it; the gateway's expiry
        # comes first, this is the backstop.
        idle_ms = math.ceil((self._hold_seconds + self._limits.statement_timeout) * 1000) + 5000
        return f"SET LOCAL idle_in_transaction_session_timeout = {idle_ms}"

    def encoded(self, rows: int, size: int) -> None:
        """The gateway wrote ``rows`` rows as ``size`` bytes: later fetches are sized by the rows' bytes."""
        self._plan.saw(rows, size, size // max(1, rows))

    async def batches(self) -> AsyncIterator[list[Row]]:
        """Yield the rows of each fetched batch, up to ``row_limit`` + 1 in all (the last shows there is more).

        The next FETCH is sent before this batch is handed over (the database
        works while the gateway encodes it) unless it may bring more than the fetch
        budget (a one-row fetch capped at ``max_row_bytes``): it then waits until
        this batch is written out. The gateway empties each list as it encodes it,
        so the values of a batch are gone before the next one is received. A later
        page of a held result (``next_page``) starts with the row beyond the last
        page's limit, then FETCHes on from the same cursor.
        """
        if self._iterated or self._closed:
            raise RuntimeError("batches() can be iterated once per page, inside run_query's or next_page's context")
        self._iterated = True
        wanted = self._page_limit + 1  # the row beyond the limit tells the gateway the result was cut
        carried, self._carried = self._carried, None
        finish: Finish | None = None  # the first batch arrived before read_as_text: cast already
        if self._first_batch_rows is not None:
            received, self._first_batch_rows = self._first_batch_rows, None
        else:
            self._row_count = self._received = 0 if carried is None else 1
            finish = self._later
            received = await self._receive(self._fetch_next(wanted - self._received))
        while True:
            self._received += received
            exhausted = received < self._asked
            room = wanted - self._row_count
            rows = await self._read_batch(min(received, room))
            self._row_count += len(rows)
            more = not (exhausted or self._row_count >= wanted)
            if more and not self._text_later:
                # Later batches come as text where the caster is Python, cast after the next FETCH went out.
                # Set up before that FETCH (its result must find the casters), and only now: most results
                # end with their first batch.
                self._later, self._text_later = read_as_text(self._cursor, self._oids), True
            next_batch: asyncio.Future[None] | None = None
            prefetch = self._asked > 1 or self._cap <= FETCH_BUDGET_BYTES
            if more and prefetch:
                # The database prepares the next batch while this one is encoded and written out.
                next_batch = self._fetch_next(wanted - self._received)
            elif not prefetch and rows:
                # One row of up to max_row_bytes: libpq's result goes (a trivial statement replaces it) before
                # the row is encoded, so it is held three times at most (libpq's input buffer, value, JSON).
                await self._run("SELECT 1")
            if finish is not None:
                await self._finish_batch(rows, finish)  # the database works on the next batch meanwhile
            finish = self._later
            if carried is not None:
                rows.insert(0, carried)
                carried = None
            if not more:
                self._completed = True  # before the last yield: the gateway may stop reading once it has it
                if self._row_count >= wanted and self._hold_seconds is not None:
                    self._carried = rows[-1]  # the gateway drops it from the list; the next page sends it
            if rows:
                yield rows
            del rows  # emptied by the gateway; not held while the next batch is fetched
            if not more:
                return
            if next_batch is None:
                next_batch = self._fetch_next(wanted - self._received)
            received = await self._receive(next_batch)

    @property
    def held(self) -> bool:
        """True while the gateway holds the result for a next page (``hold``), so its context leaves it open."""
        return self._held

    @property
    def closed(self) -> bool:
        """True once the connection went back to the pool (the result read to its end, failed, or closed)."""
        return self._closed

    def hold(self) -> StreamingQuery | None:
        """Keep the cursor, its transaction and connection past this page; None when the result cannot be held.

        Only a result cut at the row limit (its row beyond the limit kept as ``_carried``) whose cursor lives
        in an explicit transaction, run with ``hold_seconds``, can be held.
        """
        if self._closed or self._carried is None or not self._explicit or self._in_flight is not None:
            return None
        self._held = True
        if self._held_queries is not None:
            self._held_queries.add(self)
        return self

    @contextlib.asynccontextmanager
    async def next_page(self, row_limit: int) -> AsyncIterator[QueryResult]:
        """The next at most ``row_limit`` rows (+ 1 to show more) of a held result, within a new statement
        time limit; its end closes the result unless the page was held again (``hold``)."""
        if self._closed or not self._held:
            raise DatabaseUnavailable("the held result was closed")
        self._held = False
        self._iterated = self._completed = False
        self._page_limit = row_limit
        self._deadline = self._loop.time() + self._limits.statement_timeout
        try:
            yield self
        except BaseException:
            await self.close(commit=False)
            raise
        if not self._held:
            await self.close(commit=self._completed)

    def _fetch_next(self, room: int) -> asyncio.Future[None]:
        """Send the next FETCH, its size and row cap following the rows seen so far.

        The cap is a transaction-local setting, and ``self._cap`` the value last
        set in this transaction (the DECLARE's message sets it too): it is sent
        again only when it changes, which for rows of a steady size is never
        after the second FETCH.
        """
        previous_cap = self._cap
        self._asked, self._cap = self._plan.rows_and_cap(room)
        fetch = f"FETCH FORWARD {self._asked} FROM {CURSOR_NAME}"
        if self._cap != previous_cap:
            fetch = f"{set_cap_sql(self._cap)}; {fetch}"
        return self._send(fetch)

    async def _read_batch(self, count: int) -> list[Row]:
        """The first ``count`` rows of the last batch, cast to Python values a slice at a time."""
        raw_cursor = self._cursor
        rows: list[Row] = []
        try:
            while len(rows) < count:
                if rows:
                    await asyncio.sleep(0)
                part = raw_cursor.fetchmany(min(self._plan.slice_rows(), count - len(rows)))
                if self._missed_arrays:
                    part = cast_missed_arrays(part, self._missed_arrays, raw_cursor)
                rows.extend(part)
        except psycopg2.Error as exc:  # the connection was closed under the result (killed, abandoned)
            raise database_error(exc, self._connection, self._limits) from exc
        # Later batches arrive after adopt_result_types registered their casters.
        self._missed_arrays = []
        return rows

    async def _finish_batch(self, rows: list[Row], finish: Finish) -> None:
        """Cast the values ``read_as_text`` left as text, in place, a slice at a time."""
        done = 0
        while done < len(rows):
            if done:
                await asyncio.sleep(0)
            end = done + self._plan.slice_rows()
            rows[done:end] = finish(rows[done:end])
            done = end

    def _remaining(self) -> float:
        return self._deadline - self._loop.time()

    async def _lookup_type_names(self, type_names: TypeNameCache, oids: list[int]) -> list[str]:
        remaining = self._remaining()
        if remaining <= 0:
            raise timeout_error(self._limits)
        try:
            return await type_names.names_for(self._connection, oids, timeout=remaining)
        except asyncio.TimeoutError as exc:  # aiopg closed the connection; it is discarded on close
            raise timeout_error(self._limits) from exc
        except psycopg2.Error as exc:
            raise database_error(exc, self._connection, self._limits) from exc

    async def _run(self, statement: str) -> int:
        """Run one statement within the query's deadline; cancel it on the server if it must stop early."""
        return await self._receive(self._send(statement))

    def _send(self, statement: str) -> asyncio.Future[None]:
        """Start ``statement``; ``_receive`` waits for its outcome (the statement may run meanwhile)."""
        return self._start(lambda: statements.send(self._connection, self._cursor, statement))

    def _start(self, sending: Any) -> asyncio.Future[None]:
        """Call ``sending`` (it sends and returns the waiter) unless the query is over or out of time."""
        if self._closed or self._cursor is None:
            raise RuntimeError("the query's connection was already given back; read batches() inside run_query")
        if self._remaining() <= 0:
            raise timeout_error(self._limits)
        try:
            waiter = sending()
        except (psycopg2.Error, bound.BoundStatementError, ValueError) as exc:
            # Refused before it was sent (a closed connection, a NUL character): _receive reports it, as it
            # reports the errors of statements that were sent.
            waiter = self._loop.create_future()
            waiter.set_exception(exc)
        self._in_flight = waiter
        return waiter

    async def _receive(self, waiter: asyncio.Future[None]) -> int:
        """How many rows the statement ``_send`` started returned, within the query's deadline."""
        try:
            if self._remaining() > 0:
                await wait_until(waiter, self._deadline)
        except asyncio.CancelledError:
            await self._abandon(waiter, reason="request_cancelled")
            raise
        if not waiter.done() or self._remaining() <= 0:
            await self._abandon(waiter, reason="statement_time_limit")
            raise timeout_error(self._limits)
        self._in_flight = None
        statements.forget(self._connection, waiter)
        try:
            waiter.result()
        except psycopg2.Error as exc:
            too_large = row_too_large(exc, self._limits.max_row_bytes)
            if too_large is not None:
                raise too_large from None
            raise database_error(exc, self._connection, self._limits) from exc
        except bound.BoundStatementError as exc:
            raise bound_error(exc, self._connection, self._limits) from None
        except ValueError as exc:  # psycopg2 refuses query text with a NUL character before sending it
            raise QueryFailed(f"the query cannot be sent to the database: {exc}") from exc
        return int(self._cursor.rowcount)

    async def _abandon(self, waiter: asyncio.Future[None], *, reason: str) -> None:
        """Cancel the statement in flight on the server and wait briefly; discard the connection if it stays busy.

        The cancel is sent without blocking (``cancel.start_cancel``) and both it and
        the statement get ``CLEANUP_GRACE_SECONDS``: a statement still running then
        is abandoned (its backend a runaway), and a connection whose statement ended
        while its cancel went unacknowledged is closed, since that cancel could still
        reach the server and cut the next request's statement.
        """
        deadline = self._loop.time() + CLEANUP_GRACE_SECONDS
        cancelling: asyncio.Future[str | None] | None = None
        if not waiter.done():
            self._logger.info("postgres_statement_cancelling", reason=reason)
            cancelling = start_cancel(self._connection.raw, deadline)
            cancelling.add_done_callback(self._cancel_outcome)
        waiter.add_done_callback(retrieve_outcome)  # its error is the cancel we asked for
        try:
            if await wait_until(waiter, deadline) and cancelling is not None:
                await wait_until(cancelling, deadline)
        finally:
            if not waiter.done():
                self._logger.warning("postgres_connection_discarded", reason="statement did not stop after cancel")
                self._discard_running(reason)
            elif cancelling is not None and not cancelling.done():
                self._logger.warning("postgres_connection_discarded", reason="its cancel was not acknowledged")
                self._connection.close()
            statements.forget(self._connection, waiter)

    def _cancel_outcome(self, cancelling: asyncio.Future[str | None]) -> None:
        if cancelling.cancelled():  # the event loop is closing
            return
        failure = cancelling.result()
        if failure is not None:
            self._logger.warning("postgres_cancel_failed", reason=failure)

    def _discard_running(self, reason: str) -> None:
        """Close the connection of a statement that ignored the cancel; its backend runs on as a runaway."""
        try:
            pid = self._connection.raw.get_backend_pid()  # psycopg2 forgets it once closed
        except psycopg2.Error:  # closed already (aiopg's own time-out)
            pid = None
        self._connection.close()
        if pid is not None and self._runaways is not None:
            # The request's token keeps counting this query until the backend is gone.
            query_lingers(self._runaways.add(pid, reason))

    async def close(self, *, commit: bool = False) -> None:
        """End the transaction and give the connection back to the pool, idle or closed.

        The clean-up runs in a task of its own: a request cancelled meanwhile (its
        client went away) stops waiting for it, but the connection still goes
        back idle rather than being dropped halfway through a ROLLBACK.
        """
        if self._closed:
            return
        self._closed = True
        self._held = False
        self._carried = None
        if self._held_queries is not None:
            self._held_queries.discard(self)
        connection = self._connection
        idle = connection.closed or connection.raw.get_transaction_status() == pg_ext.TRANSACTION_STATUS_IDLE
        if self._in_flight is None and idle:
            # Nothing to wait for (most often a result read whole in one round trip): the connection goes
            # back now, with no await a cancel could cut, so without a task of its own.
            self._give_back()
            return
        await asyncio.shield(keep_running(self._clean_up(commit=commit)))

    async def _clean_up(self, *, commit: bool) -> None:
        connection = self._connection
        try:
            if self._in_flight is not None:  # a batch fetched ahead that nobody will read
                await self._abandon(self._in_flight, reason="result_abandoned")
            await self._end_transaction(commit=commit)
        except asyncio.CancelledError:  # the event loop is shutting down
            connection.close()
            raise
        except Exception as exc:  # the connection's state is unknown: never reuse it
            self._logger.warning("postgres_connection_discarded", reason=first_line(exc))
            connection.close()
        finally:
            self._give_back()

    def _give_back(self) -> None:
        """Return the connection to the pool: idle, or closed when it is not clean."""
        connection = self._connection
        if not connection.closed and connection.raw.get_transaction_status() != pg_ext.TRANSACTION_STATUS_IDLE:
            connection.close()
        if self._plan.largest_row >= DISCARD_AFTER_ROW_BYTES and not connection.closed:
            connection.close()  # libpq keeps its input buffer as large as the largest message it received
        release_connection(self._pool, connection, self._runaways.slots if self._runaways else None)
        release_memory(self._plan.received_bytes)

    async def _end_transaction(self, *, commit: bool) -> None:
        connection = self._connection
        if connection.closed:
            return
        status = connection.raw.get_transaction_status()
        if status == pg_ext.TRANSACTION_STATUS_IDLE:
            return
        if status not in (pg_ext.TRANSACTION_STATUS_INTRANS, pg_ext.TRANSACTION_STATUS_INERROR):
            self._logger.warning("postgres_connection_discarded", reason=f"transaction status {status}")
            connection.close()
            return
        statement = "COMMIT" if commit and status == pg_ext.TRANSACTION_STATUS_INTRANS else "ROLLBACK"
        cursor = await connection.cursor(timeout=CLEANUP_GRACE_SECONDS)
        try:
            await cursor.execute(statement)
        finally:
            cursor.close()


@contextlib.asynccontextmanager
async def run_query(
    pool: aiopg.Pool,
    sql: str,
    limits: PoolLimits,
    type_names: TypeNameCache,
    logger: Any,
    *,
    acquire_waits: AcquireWaitTally | None = None,
    multi_batch: MultiBatchQueries | None = None,
    runaways: RunawayBackends | None = None,
    parameters: tuple[str | None, ...] = (),
    hold_seconds: float | None = None,
    held: set[StreamingQuery] | None = None,
) -> AsyncIterator[QueryResult]:
    """Execute one checked SELECT (no trailing semicolon) and yield its streaming result.

    Raises ``DatabaseUnavailable`` (no connection in time, connection lost),
    ``QueryFailed`` (the database refused the query), ``QueryTimeout`` (past
    ``limits.statement_timeout`` in all). After some batches were yielded,
    those errors come out of ``batches()``. The wait for a connection is
    recorded in ``acquire_waits``, if given. A query text in ``multi_batch``
    skips the one-round-trip attempt (see ``StreamingQuery.start``); one that
    turns out to need more than one batch is added to it. With ``runaways`` the
    connection takes one of its slots, and a backend that ignores the cancel is
    counted there until it is gone; without, neither is bounded beyond aiopg's pool. With ``hold_seconds``
    a result cut at the row limit runs in an explicit transaction, so that the gateway may ``hold`` it for
    its next pages (idle up to ``hold_seconds`` between them); a held result is added to ``held`` (the pool's,
    which closes them with it) and the context's end leaves it open.
    ``parameters`` are the values of the query's ``$1``..``$n``, bound by the server (``connections.bound``).
    """
    slots = runaways.slots if runaways is not None else None
    connection = await acquire_live_connection(pool, limits.acquire_timeout, acquire_waits, logger, slots)
    query = StreamingQuery(pool, connection, limits, logger, runaways, hold_seconds, held)
    try:
        await query.start(sql, type_names, one_round_trip_first=multi_batch is None or sql not in multi_batch,
                          parameters=parameters)
        if query.ran_twice and multi_batch is not None:
            multi_batch.add(sql)
        yield query
    except BaseException:
        await query.close(commit=False)
        raise
    if not query.held:
        await query.close(commit=query.completed)
