"""``RunawayBackends``: backends that run on after the query runner discarded their connection.

Some built-ins never check for interrupts while they run, so neither the
statement time limit, nor the runner's cancel, nor ``pg_terminate_backend``
stops them before the call returns. The runner then discards the connection
(``query_runner.StreamingQuery._abandon``) and hands the backend's pid here.
Until the server no longer lists that pid in ``pg_stat_activity`` it keeps one
of the pool's ``pool_max_size`` slots (``BackendSlots``), so the database never
sees more than ``pool_max_size`` backends of this pool.

While runaways exist, one watcher task per pool checks about every second which
of them are still there, through a connection of its own outside the pool
(runaways may hold every slot); it sends ``pg_terminate_backend`` once to each,
so the backend ends as soon as the call returns even if the cancel is lost. The
watcher and its connection end with the last runaway, or when the pool closes.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

import aiopg
import attrs
import psycopg2

from drivers.postgres.connections.acquire import first_line
from drivers.postgres.connections.backend_slots import BackendSlots

POLL_SECONDS = 1.0
"""Pause between two looks at ``pg_stat_activity`` while runaways exist."""

WATCHER_APPLICATION_NAME = "dbgateway-watcher"
"""``application_name`` of the watcher's connection, told apart from the pool's ``dbgateway`` sessions."""

STILL_RUNNING_SQL = "SELECT pid FROM pg_catalog.pg_stat_activity WHERE pid = ANY(%s)"
TERMINATE_SQL = "SELECT pg_catalog.pg_terminate_backend(%s)"


@attrs.define
class Runaway:
    """One backend that ran on after its connection was discarded."""

    pid: int
    """The backend's process id on the database server."""
    discarded_at: float
    """Event-loop time its connection was discarded."""
    ended: asyncio.Future[None]
    """Done once the backend is gone (or the pool closed and stopped watching it)."""
    signalled: bool = False
    """Whether ``pg_terminate_backend`` was sent (or refused) already."""


class RunawayBackends:
    """The runaway backends of one pool, each holding a slot of ``slots`` until the server reports it gone."""

    def __init__(
        self, slots: BackendSlots, connect: Callable[[], Awaitable[aiopg.Connection]], logger: Any
    ) -> None:
        self.slots = slots
        """The pool's slots; each runaway holds one."""
        self._connect = connect
        self._logger = logger
        self._running: dict[int, Runaway] = {}
        self._watcher: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def count(self) -> int:
        """Runaway backends still on the server, as far as the last look showed."""
        return len(self._running)

    def add(self, pid: int, reason: str) -> asyncio.Future[None]:
        """Count backend ``pid`` against the pool until it is gone; the future is done then."""
        loop = asyncio.get_running_loop()
        known = self._running.get(pid)
        if known is not None:
            return known.ended
        ended: asyncio.Future[None] = loop.create_future()
        if self._closed:
            ended.set_result(None)
            return ended
        self._running[pid] = Runaway(pid=pid, discarded_at=loop.time(), ended=ended)
        self.slots.runaway_started()
        self._logger.warning(
            "runaway_backend",
            backend_pid=pid,
            reason=reason,
            runaways=len(self._running),
            hint="the statement ignored the cancel; it holds a pool slot until it ends (see pg_stat_activity)",
        )
        if self._watcher is None:
            # A context of its own: the watcher outlives the request that found the first runaway.
            self._watcher = loop.create_task(self._watch(), context=contextvars.Context())
        return ended

    async def close(self) -> None:
        """Stop watching (the watcher's connection closes); whatever still runs is no longer counted."""
        self._closed = True
        watcher = self._watcher
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        for runaway in list(self._running.values()):
            self._forget(runaway)

    async def _watch(self) -> None:
        connection: aiopg.Connection | None = None
        failing = False
        try:
            while self._running:
                try:
                    if connection is None or connection.closed:
                        connection = await self._connect()
                    await self._terminate_new(connection)
                    gone = await self._gone(connection)
                except (psycopg2.Error, OSError, asyncio.TimeoutError) as error:
                    if not failing:
                        self._logger.warning("runaway_watch_failed", reason=first_line(error), runaways=self.count)
                    failing = True
                    if connection is not None:
                        connection.close()
                        connection = None
                else:
                    failing = False
                    for runaway in gone:
                        self._forget(runaway)
                        self._logger.info(
                            "runaway_backend_ended",
                            backend_pid=runaway.pid,
                            seconds=round(asyncio.get_running_loop().time() - runaway.discarded_at, 1),
                        )
                if self._running:
                    await asyncio.sleep(POLL_SECONDS)
        finally:
            if connection is not None:
                connection.close()
            self._watcher = None

    async def _terminate_new(self, connection: aiopg.Connection) -> None:
        for runaway in [r for r in self._running.values() if not r.signalled]:
            try:
                async with connection.cursor() as cursor:
                    await cursor.execute(TERMINATE_SQL, (runaway.pid,))
            except psycopg2.OperationalError:
                raise
            except psycopg2.Error as error:  # e.g. a role that may not signal that backend
                self._logger.warning("runaway_backend_not_terminated", backend_pid=runaway.pid, reason=first_line(error))
            runaway.signalled = True

    async def _gone(self, connection: aiopg.Connection) -> list[Runaway]:
        """The runaways the server no longer lists; only those asked about (more may come in meanwhile)."""
        asked = list(self._running.values())
        async with connection.cursor() as cursor:
            await cursor.execute(STILL_RUNNING_SQL, ([runaway.pid for runaway in asked],))
            still_running = {int(row[0]) for row in await cursor.fetchall()}
        return [runaway for runaway in asked if runaway.pid not in still_running]

    def _forget(self, runaway: Runaway) -> None:
        if self._running.get(runaway.pid) is not runaway:
            return
        del self._running[runaway.pid]
        self.slots.runaway_ended()
        if not runaway.ended.done():
            runaway.ended.set_result(None)
