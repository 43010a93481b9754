"""Taking connections from an aiopg pool and giving them back: time limit, wake-ups, dead connections, slots.

aiopg's pool has four gaps the query runner needs closed: ``acquire`` has no
time limit of its own that keeps the connection when the caller gives up,
``release`` of a closed connection wakes nobody, a connection the server
ended while it sat idle is handed out as if it were alive, and a discarded
connection whose backend still runs no longer counts against ``maxsize``
(``BackendSlots`` counts it).
"""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import Awaitable
from typing import Any

import aiopg
import psycopg2

from drivers.postgres.connections.backend_slots import BackendSlots
from gateway.contract.background import keep_running
from gateway.contract.driver_protocol import AcquireWaitTally
from gateway.contract.waiting import wait_at_most
from gateway.errors import DatabaseUnavailable


def first_line(exc: BaseException) -> str:
    """The first non-blank line of an error's text (libpq adds hints on further lines)."""
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


async def _take_connection(pool: aiopg.Pool) -> aiopg.Connection:
    return await pool.acquire()


def release_connection(pool: aiopg.Pool, connection: aiopg.Connection, slots: BackendSlots | None = None) -> None:
    """Give ``connection`` back to ``pool`` and its slot to ``slots``, waking a request that waits for one.

    aiopg's ``Pool.release`` wakes waiting ``acquire`` calls only for a connection
    it keeps; after a closed one they sleep until their time limit (503), although
    the pool may open a new connection right away.
    """
    closed = connection.closed
    pool.release(connection)
    if closed:
        keep_running(pool._wakeup())  # noqa: SLF001 - aiopg has no public way to wake its waiters
    if slots is not None:
        slots.give_back()


def _give_back_when_acquired(pool: aiopg.Pool, task: asyncio.Future[aiopg.Connection]) -> None:
    """Stop a pending acquire; if it got a connection anyway, return that to the pool."""

    def give_back(finished: asyncio.Future[aiopg.Connection]) -> None:
        if not finished.cancelled() and finished.exception() is None:
            pool.release(finished.result())

    task.cancel()
    task.add_done_callback(give_back)


async def acquire_connection(
    pool: aiopg.Pool, timeout: float, waits: AcquireWaitTally | None = None, slots: BackendSlots | None = None
) -> aiopg.Connection:
    """A connection from ``pool`` (and a slot of ``slots``) within ``timeout`` seconds, else ``DatabaseUnavailable``.

    The wait, for the slot and the connection, is recorded in ``waits``, if
    given, however the attempt ends. ``release_connection`` gives both back.
    """
    started = time.perf_counter()
    try:
        if slots is None:
            return await _connection_within(pool, timeout, timeout)
        await slots.take(timeout)
        try:
            _keep_runaway_slots_free(pool, slots)
            return await _connection_within(pool, timeout - (time.perf_counter() - started), timeout)
        except BaseException:
            slots.give_back()
            raise
    finally:
        if waits is not None:
            waits.record(time.perf_counter() - started)


def _keep_runaway_slots_free(pool: aiopg.Pool, slots: BackendSlots) -> None:
    # aiopg tops its pool up to minsize on every acquire, whether the caller needs a new connection
    # or not; with runaways holding slots that could open more backends than pool_max_size.
    pool._minsize = slots.kept_open  # noqa: SLF001 - aiopg has no public way to lower minsize


def _free_at_once(pool: aiopg.Pool) -> bool:
    """Whether aiopg hands a connection over without waiting: one is free, nobody holds the pool's lock or waits.

    Its ``acquire`` then takes the connection before it ever suspends, so a
    cancellation cannot land between the taking and the caller, and there is no
    wait for a time limit to cut: the task and the timed wait are not needed.
    A request already waiting for a connection comes first: while one waits,
    newcomers queue behind it through the timed path. (A free connection the
    server closed meanwhile makes aiopg open a new one; its own ``timeout``
    bounds that rare wait.)
    """
    condition = pool._cond  # noqa: SLF001 - aiopg has no public way to ask
    return pool.freesize > 0 and not condition.locked() and not condition._waiters  # noqa: SLF001


async def _connection_within(pool: aiopg.Pool, seconds: float, timeout: float) -> aiopg.Connection:
    """A connection from aiopg within ``seconds``, what is left of the request's ``timeout``."""
    if _free_at_once(pool):
        return await _connected(_take_connection(pool))
    task = asyncio.ensure_future(_take_connection(pool))
    try:
        done = await wait_at_most(task, max(0.0, seconds))
    except asyncio.CancelledError:
        _give_back_when_acquired(pool, task)
        raise
    if not done:
        busy = pool.freesize == 0 and pool.maxsize is not None and pool.size >= pool.maxsize
        _give_back_when_acquired(pool, task)
        why = (
            f"every connection of the pool ({pool.maxsize}) is in use"
            if busy
            else "the database server did not accept a new connection in time"
        )
        raise DatabaseUnavailable(
            f"no connection to the database became free within {timeout:g} s ({why}); try again later"
        )
    return await _connected(task)


async def _connected(taking: Awaitable[aiopg.Connection]) -> aiopg.Connection:
    """The connection ``taking`` gives, or ``DatabaseUnavailable`` saying why there is none."""
    try:
        return await taking
    except psycopg2.Error as exc:
        raise DatabaseUnavailable(f"cannot connect to the database: {first_line(exc)}") from exc
    except (asyncio.TimeoutError, OSError, RuntimeError) as exc:  # aiopg's own time-out; closed pool
        raise DatabaseUnavailable(f"cannot connect to the database: {first_line(exc)}") from exc


def ended_by_server(connection: aiopg.Connection) -> bool:
    """Whether an idle connection is closed, or the server has already sent it something (its goodbye).

    An idle session receives nothing unless the server ends it: a restart or
    ``pg_terminate_backend`` sends a FATAL message and closes the socket. aiopg
    notices on its next read; this looks without waiting (no round trip).
    """
    if connection.closed:
        return True
    watcher = select.poll()
    watcher.register(connection.raw.fileno(), select.POLLIN | select.POLLPRI)
    return bool(watcher.poll(0))


async def acquire_live_connection(
    pool: aiopg.Pool, timeout: float, waits: AcquireWaitTally | None, logger: Any, slots: BackendSlots | None = None
) -> aiopg.Connection:
    """``acquire_connection``, passing over connections the server has ended since they were last used.

    After a database restart every idle connection of the pool is dead; each is
    dropped here instead of failing the request it would serve, and the pool
    opens a fresh one. A statement that fails later (the server ended the
    session while it ran) is not retried: it may have run, and it gets a 503.
    """
    for _ in range((pool.maxsize or 0) + 1):
        connection = await acquire_connection(pool, timeout, waits, slots)
        if not ended_by_server(connection):
            return connection
        logger.info("postgres_connection_replaced", reason="the server ended it while it was idle in the pool")
        connection.close()
        release_connection(pool, connection, slots)
    return await acquire_connection(pool, timeout, waits, slots)
