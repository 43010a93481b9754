"""Following a registry kept in PostgreSQL: changes made by other gateways, outages, and how fresh the state is.

``RegistryFollower`` is the part of ``PostgresRegistryStore`` that runs while
the gateway serves: a task LISTENs on a connection of its own; a notification
of another version than the one held makes the store load the document; every
``VERSION_CHECK_SECONDS`` without a notification it compares versions anyway,
and after every reconnection at once (notifications sent meanwhile are lost).
While the database cannot be reached the store is ``unavailable`` and the task
reconnects with backoff (``RECONNECT_DELAYS``).

It also knows when the state held was last **confirmed** as the stored one
(``confirm``: the follower's check, or a change of this process, read the
stored version). A replica cut off from the registry database cannot know
whether a grant was revoked elsewhere meanwhile: past ``max_staleness`` (the
setting ``registry_max_staleness``) without a confirmation the store is
``stale``, and the gateway stops serving from what it holds (503
``registry_unavailable``, ``/readyz`` not ready) until the follower is back in
step. Issue 20 saw a partitioned replica answer a revoked token for as long as
the partition lasted.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiopg
import structlog

from gateway.registry.postgres_schema import CHANNEL, first_line

VERSION_CHECK_SECONDS = 5.0
"""Without a notification for this long, the follower compares versions anyway (a lost notification)."""
CHECK_TIMEOUT_SECONDS = 2.0
"""How long the follower's version check may take (it holds back this process's changes meanwhile)."""
RECONNECT_DELAYS = (0.1, 0.2, 0.5, 1.0, 2.0)
"""Waits between the follower's reconnection attempts; the last repeats."""
MIN_MAX_STALENESS_SECONDS = 10.0
"""The smallest ``registry_max_staleness`` (besides 0, no limit): above a version check's period and time limit,
so that a replica in step never counts as stale between two checks."""


class RegistryFollower:
    """The follower task of one store, and the freshness of the state that store holds."""

    def __init__(
        self,
        location: str,
        max_staleness: float,
        connect: Callable[[], Awaitable[aiopg.Connection]],
        check: Callable[[Any, float], Awaitable[None]],
        held_version: Callable[[], int],
    ) -> None:
        self._location = location
        self._max_staleness = max_staleness
        self._connect = connect
        self._check = check
        """Load the stored document if its version is not the one held (under the store's lock), within a time."""
        self._held_version = held_version
        self._confirmed_at = time.monotonic()
        self.in_step = True
        """False from a lost connection until the next successful check."""
        self._failed_attempts = 0
        self._stale_logged = False
        self._task: asyncio.Task[None] | None = None
        self._logger: structlog.typing.FilteringBoundLogger = structlog.get_logger()

    def confirm(self, asked: float) -> None:
        """The stored version was read (and taken) by a statement sent at ``asked`` (``time.monotonic()``)."""
        self._confirmed_at = max(self._confirmed_at, asked)

    @property
    def unconfirmed_seconds(self) -> float:
        return time.monotonic() - self._confirmed_at

    @property
    def stale(self) -> bool:
        """Unconfirmed for longer than ``max_staleness`` (never, when it is 0)."""
        return bool(self._max_staleness) and self.unconfirmed_seconds > self._max_staleness

    def start(self, logger: structlog.typing.FilteringBoundLogger) -> None:
        self._logger = logger
        self._task = asyncio.get_running_loop().create_task(self._follow())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _follow(self) -> None:
        while True:
            try:
                await self._listen()
            except Exception as error:  # noqa: BLE001 - whatever happens, the follower reconnects and goes on
                self._lost(error)
            if self.stale and not self._stale_logged:
                self._stale_logged = True
                self._logger.error(
                    "registry_stale", registry=self._location, seconds=round(self.unconfirmed_seconds, 1),
                    max_seconds=self._max_staleness,
                )
            delay = RECONNECT_DELAYS[min(self._failed_attempts, len(RECONNECT_DELAYS) - 1)]
            self._failed_attempts += 1
            await asyncio.sleep(delay)

    async def _listen(self) -> None:
        connection = await self._connect()
        try:
            async with connection.cursor() as cursor:
                await cursor.execute(f"LISTEN {CHANNEL}")
                while True:
                    await self._check(cursor, CHECK_TIMEOUT_SECONDS)
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
                    if notice.payload != str(self._held_version()):
                        return

    def _lost(self, error: BaseException) -> None:
        if self.in_step:
            self._logger.warning("registry_unavailable", registry=self._location, reason=first_line(error))
        self.in_step = False

    def _found(self) -> None:
        self._failed_attempts = 0
        if not self.in_step:
            self._logger.info("registry_available", registry=self._location, version=self._held_version())
        self.in_step = True
        self._stale_logged = False
