"""How many GetData queries one token runs on one database at once: ``token_query_limit``.

A pool serves every token of its database. Without a limit, one token could
take all ``pool_max_size`` connections with slow queries and every other token
would wait for them. A query counts from before the driver is asked for a
connection until its answer is sent (a streamed answer: until its last chunk),
and on after that for as long as the driver reports that the query's work
still runs in the database (``driver_protocol.query_lingers``: a backend that
ignored the cancel). A query past the limit waits for its token's turn, in
arrival order, up to ``acquire_timeout``, then answers 429 ``too_many_queries``.

A result held for its next pages (``gateway.databases.continuations``) keeps a
turn (``held_turn``) while it is open. A query that finds no free turn first
asks ``make_room`` to close the oldest idle held result of its token on that
database, and takes the turn that frees, rather than waiting behind results
nobody is reading.

Only pairs with a query running or waiting are kept: memory grows with the
requests in flight, not with the tokens ever seen.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

from gateway.contract.driver_protocol import lingering_reported_to
from gateway.contract.waiting import wait_at_most
from gateway.errors import TooManyQueries

QueryKey = tuple[str, str]
"""``(token hash, local database name)``."""


class _Queue:
    """The queries of one token on one database: running, and waiting for a turn."""

    __slots__ = ("running", "turns")

    def __init__(self) -> None:
        self.running = 0
        self.turns: collections.deque[asyncio.Future[None]] = collections.deque()


class TokenQueryLimiter:
    """At most ``limit`` queries per token and database at once; the next ones wait up to ``wait_seconds``."""

    def __init__(self, limit: int, wait_seconds: float) -> None:
        self.limit = limit
        self.wait_seconds = wait_seconds
        self._queues: dict[QueryKey, _Queue] = {}
        self.make_room: Callable[[QueryKey], Awaitable[bool]] | None = None
        """Closes an idle held result of the pair, giving its turn back; True when it closed one."""

    @contextlib.asynccontextmanager
    async def turn(self, token_hash: str, database: str) -> AsyncIterator[None]:
        """Count one query of the token on ``database`` for the block; wait for a turn first, else 429."""
        key = (token_hash, database)
        await self._take(key)
        try:
            with lingering_reported_to(lambda gone: self._count_until(key, gone)):
                yield
        finally:
            self._give_back(key)

    def held_turn(self, key: QueryKey) -> Callable[[], None]:
        """Count a held result as one query of ``key`` now (its request's turn ends just after); returns what
        gives the turn back, once."""
        self._queues.setdefault(key, _Queue()).running += 1
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            if not given_back:
                given_back = True
                self._give_back(key)

        return give_back

    @contextlib.contextmanager
    def lingering_counted(self, key: QueryKey) -> Iterator[None]:
        """A page of a held result (which holds its turn already): a backend it leaves running still counts."""
        with lingering_reported_to(lambda gone: self._count_until(key, gone)):
            yield

    async def _take(self, key: QueryKey) -> None:
        queue = self._queues.setdefault(key, _Queue())
        if not queue.turns and queue.running < self.limit:
            queue.running += 1
            return
        while not queue.turns and queue.running >= self.limit and self.make_room is not None:
            if not await self.make_room(key):
                break
            queue = self._queues.setdefault(key, _Queue())  # dropped when the freed turn left it idle
            if not queue.turns and queue.running < self.limit:
                queue.running += 1
                return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.turns.append(turn)
        try:
            await wait_at_most(turn, self.wait_seconds)
        except asyncio.CancelledError:
            self._withdraw(key, queue, turn)
            raise
        if not turn.done():
            running = queue.running
            self._withdraw(key, queue, turn)
            raise TooManyQueries(
                f"this token already runs {running} {'query' if running == 1 else 'queries'} on database"
                f" {key[1]!r} (the limit per token); wait for one to finish"
            )

    def _withdraw(self, key: QueryKey, queue: _Queue, turn: asyncio.Future[None]) -> None:
        if turn.done():  # the turn came just as the wait ended
            self._give_back(key)
            return
        turn.cancel()
        queue.turns.remove(turn)
        self._drop_if_idle(key, queue)

    def _count_until(self, key: QueryKey, gone: asyncio.Future[None]) -> None:
        # The block that reported it may end first: the pair's queue must then exist again.
        self._queues.setdefault(key, _Queue()).running += 1
        gone.add_done_callback(lambda _: self._give_back(key))

    def _give_back(self, key: QueryKey) -> None:
        queue = self._queues[key]
        queue.running -= 1
        while queue.turns and queue.running < self.limit:
            queue.running += 1
            queue.turns.popleft().set_result(None)
        self._drop_if_idle(key, queue)

    def _drop_if_idle(self, key: QueryKey, queue: _Queue) -> None:
        if queue.running == 0 and not queue.turns:
            del self._queues[key]
