"""``ThreadedPool``: a base for the pool of a blocking client library, so a driver writes only database code.

Most databases' Python clients block (sqlite3, duckdb, many DB-API modules). This
base does what every such driver would otherwise write again, and what is easy
to get subtly wrong:

- slots: ``PoolLimits.max_size`` queries at most at once, each on a fresh
  connection in a worker thread of the pool's own;
- the acquire time limit: no free slot within ``acquire_timeout`` is
  ``DatabaseUnavailable``, every wait recorded in an ``AcquireWaitTally``;
- the statement timer: past ``statement_timeout`` the statement is interrupted
  and the query answers ``QueryTimeout``;
- cancel: a request cancelled mid-statement (its client went away) interrupts
  the statement and waits for the worker to leave the connection before it is
  closed, so the event loop never waits on the database;
- fetching ``row_limit`` + 1 rows at most, ``batch_size`` per round trip,
  converted in the worker; ``stats()`` and ``close()``.

A driver subclasses it and writes ``connect`` (open one connection),
``execute`` (start a checked statement on it, returning a ``Statement``),
``interrupt`` (the one call another thread may make on a busy connection) and
the catalog methods, which read through ``on_connection``. Its own errors from
``gateway.errors`` pass through; the client library's (``database_errors``)
become ``QueryFailed``, or ``QueryTimeout`` once the timer interrupted.
"""

from __future__ import annotations

import abc
import asyncio
import concurrent.futures
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import ClassVar, Generic, Protocol, TypeVar

import structlog

from gateway.contract.driver_protocol import AcquireWaitTally, ColumnInfo, PoolLimits, PoolStats, Row
from gateway.errors import DatabaseUnavailable, QueryFailed, QueryTimeout

C = TypeVar("C")
"""The client library's connection."""
Q = TypeVar("Q")
"""The driver's checked query (what its ``check_query`` returns)."""
T = TypeVar("T")


class Statement(Protocol):
    """A statement the driver started on a connection (``ThreadedPool.execute``); used only in its worker thread."""

    def fetch(self, size: int) -> list[Row]:
        """The next ``size`` rows at most, converted to ``Row`` values; fewer only at the end (blocking)."""
        ...

    @property
    def columns(self) -> Sequence[ColumnInfo]:
        """The result's columns; read once, after the first ``fetch``."""
        ...


class ThreadedPool(abc.ABC, Generic[C, Q]):
    """A ``DatabasePool`` for a blocking client library; subclass it (see the module docstring)."""

    database_errors: ClassVar[tuple[type[BaseException], ...]] = ()
    """The client library's error classes: a statement's become ``QueryFailed`` (or ``QueryTimeout``),
    a catalog read's ``DatabaseUnavailable``."""

    def __init__(self, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger) -> None:
        self.limits = limits
        self.logger = logger
        self._slots = asyncio.Semaphore(limits.max_size)
        self._running: set[ThreadedResult[C, Q]] = set()
        self._acquire_waits = AcquireWaitTally()
        # One thread per query slot, and one more so catalog reads and checks are not stuck behind them.
        self._threads = concurrent.futures.ThreadPoolExecutor(limits.max_size + 1, thread_name_prefix="dbdriver")

    # -- the driver's part ------------------------------------------------------------------------------

    @abc.abstractmethod
    def connect(self) -> C:
        """Open one connection (blocking; called in a worker). Raise ``DatabaseUnavailable`` saying why it cannot."""

    @abc.abstractmethod
    def execute(self, connection: C, checked: Q) -> Statement:
        """Start ``checked`` on ``connection`` (blocking; in the worker that will fetch its rows)."""

    @abc.abstractmethod
    def interrupt(self, connection: C) -> None:
        """Stop the statement running on ``connection``; called from the event loop while a worker uses it."""

    def close_connection(self, connection: C) -> None:
        """Close ``connection`` (blocking; in a worker): ``connection.close()`` unless overridden."""
        connection.close()  # type: ignore[attr-defined]

    def unavailable(self, error: BaseException) -> DatabaseUnavailable:
        """What a catalog read's ``database_errors`` error is answered as; override to name the database."""
        return DatabaseUnavailable(f"cannot read the database: {error}")

    # -- what the base does -----------------------------------------------------------------------------

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Run blocking ``work`` in one of the pool's workers."""
        return await asyncio.get_running_loop().run_in_executor(self._threads, work)

    async def on_connection(self, work: Callable[[C], T]) -> T:
        """``work`` on a connection of its own, in a worker, closed after; no slot taken (catalog reads, checks)."""

        def run() -> T:
            connection = self.connect()
            try:
                return work(connection)
            finally:
                self.close_connection(connection)

        try:
            return await self.in_thread(run)
        except self.database_errors as error:
            raise self.unavailable(error) from None

    @contextlib.asynccontextmanager
    async def run_query(self, checked: Q) -> AsyncIterator[ThreadedResult[C, Q]]:
        waited = time.monotonic()
        try:
            await asyncio.wait_for(self._slots.acquire(), self.limits.acquire_timeout)
        except TimeoutError:
            raise DatabaseUnavailable("no connection became free within the acquire time limit") from None
        finally:
            self._acquire_waits.record(time.monotonic() - waited)
        try:
            try:
                connection = await self.in_thread(self.connect)
            except self.database_errors as error:
                raise self.unavailable(error) from None
            result = ThreadedResult(self, connection)
            self._running.add(result)
            stopwatch = asyncio.get_running_loop().call_later(self.limits.statement_timeout, result.time_up)
            try:
                await result.start(checked)
                yield result
            finally:
                stopwatch.cancel()

                # In a worker too: closing may wait for a lock a statement that ignored its interrupt holds.
                def close() -> None:
                    self.close_connection(connection)
                    self._running.discard(result)  # only now: until then close() may need to interrupt it

                try:
                    await self.in_thread(close)
                except RuntimeError:  # the pool was closed meanwhile (its workers gone): the statement was interrupted
                    close()
        finally:
            self._slots.release()

    def stats(self) -> PoolStats:
        return PoolStats(
            in_use=len(self._running), idle=0, max_size=self.limits.max_size, acquire_waits=self._acquire_waits.snapshot()
        )

    async def close(self) -> None:
        # A statement still running would keep its worker thread, and so the process, alive.
        for result in list(self._running):
            self.interrupt(result.connection)
        self._threads.shutdown(wait=False, cancel_futures=True)


class ThreadedResult(Generic[C, Q]):
    """One running statement (the gateway's ``QueryResult``): its rows fetched in batches by a worker.

    Hands over ``row_limit`` + 1 rows at most, the one beyond telling the gateway the result was cut.
    """

    def __init__(self, pool: ThreadedPool[C, Q], connection: C) -> None:
        self.pool = pool
        self.connection = connection
        self.columns: list[ColumnInfo] = []
        self._timed_out = False
        self._statement: Statement | None = None
        self._first: list[Row] = []
        self._handed = 0
        self._exhausted = False

    def time_up(self) -> None:
        self._timed_out = True
        self.pool.interrupt(self.connection)

    async def step(self, work: Callable[[], T]) -> T:
        """Run ``work`` in a worker; a cancelled request interrupts the statement and waits for the worker."""
        future = asyncio.ensure_future(self.pool.in_thread(work))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            self.pool.interrupt(self.connection)  # the client went away: stop the statement, not finish it for nobody
            await asyncio.wait([future])  # the worker leaves the connection before the context closes it
            raise
        except self.pool.database_errors as error:
            if self._timed_out:
                limit = self.pool.limits.statement_timeout
                raise QueryTimeout(f"the query ran past the statement time limit ({limit:g} s)") from None
            raise QueryFailed(f"the database refused the query: {str(error)[:1024]}") from None

    async def start(self, checked: Q) -> None:
        def execute() -> tuple[list[Row], list[ColumnInfo]]:
            self._statement = self.pool.execute(self.connection, checked)
            first = self._fetch()
            return first, list(self._statement.columns)

        self._first, self.columns = await self.step(execute)

    def _fetch(self) -> list[Row]:
        # One row past the limit, at most, in all: it tells the gateway the limit cut the result.
        limits = self.pool.limits
        size = min(limits.batch_size, limits.row_limit + 1 - self._handed)
        assert self._statement is not None
        batch = self._statement.fetch(size) if size > 0 else []
        self._handed += len(batch)
        self._exhausted = len(batch) < size or self._handed > limits.row_limit
        return batch

    async def batches(self) -> AsyncIterator[list[Row]]:
        batch, self._first = self._first, []  # no reference kept: the gateway empties each list as it encodes
        while batch:
            yield batch
            if self._exhausted:
                return
            batch = await self.step(self._fetch)

    def encoded(self, rows: int, size: int) -> None:
        """Nothing to do: fetches are sized in rows."""

