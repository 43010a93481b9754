"""``BackendSlots``: the ``pool_max_size`` backends one pool may keep busy on the server, runaways included.

aiopg bounds the connections it holds. A connection the query runner discards
because its statement ignored the cancel is no longer aiopg's, yet its backend
goes on running (some built-ins never check for interrupts) until the call
returns; aiopg would open a new connection in its place, and the server would
see more than ``pool_max_size`` backends. Every request therefore takes a slot
here before it takes a connection from aiopg, and a runaway backend keeps a
slot until the server reports it gone (``runaways.RunawayBackends``).

Requests wait for a slot in arrival order, up to ``acquire_timeout``.
"""

from __future__ import annotations

import asyncio
import collections

from gateway.contract.waiting import wait_at_most
from gateway.errors import DatabaseUnavailable


class BackendSlots:
    """Slots for connections lent out and for runaway backends; together never more than ``max_size``."""

    def __init__(self, max_size: int, min_size: int) -> None:
        self.max_size = max_size
        """``pool_max_size``: backends the pool may keep on the server at once."""
        self.min_size = min_size
        """``pool_min_size``: connections aiopg keeps open, lowered while runaways hold slots."""
        self.lent = 0
        """Slots of requests that hold a connection, or are taking one from aiopg."""
        self.runaways = 0
        """Slots of backends whose connection was discarded while they still ran."""
        self._turns: collections.deque[asyncio.Future[None]] = collections.deque()

    def _has_room(self) -> bool:
        return self.lent + self.runaways < self.max_size

    @property
    def kept_open(self) -> int:
        """Idle connections aiopg may keep: ``min_size``, but never into the slots runaways hold."""
        return max(0, min(self.min_size, self.max_size - self.runaways))

    async def take(self, timeout: float) -> None:
        """A slot within ``timeout`` seconds, after the requests that came first; else ``DatabaseUnavailable``."""
        if not self._turns and self._has_room():
            self.lent += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._turns.append(turn)
        try:
            await wait_at_most(turn, timeout)
        except asyncio.CancelledError:
            self._withdraw(turn)
            raise
        if not turn.done():
            self._withdraw(turn)
            raise DatabaseUnavailable(self.busy_message(timeout))

    def _withdraw(self, turn: asyncio.Future[None]) -> None:
        if turn.done():  # the slot was handed over just as the wait ended
            self.give_back()
        else:
            turn.cancel()
            self._turns.remove(turn)

    def give_back(self) -> None:
        """Return a slot ``take`` gave; the next waiting request gets it."""
        self.lent -= 1
        self._hand_over()

    def runaway_started(self) -> None:
        """A backend ran on after its connection was discarded: it keeps a slot (on top of its request's, for now)."""
        self.runaways += 1

    def runaway_ended(self) -> None:
        """A runaway backend is gone from the server: its slot serves the next waiting request."""
        self.runaways -= 1
        self._hand_over()

    def _hand_over(self) -> None:
        while self._turns and self._has_room():
            self.lent += 1
            self._turns.popleft().set_result(None)

    def busy_message(self, timeout: float) -> str:
        """Why no slot became free within ``timeout`` seconds, for the 503 answer."""
        if self.runaways:
            backends = "backend" if self.runaways == 1 else "backends"
            return (
                f"no connection to the database became free within {timeout:g} s: {self.runaways} {backends} of"
                f" earlier queries still run past the time limit and count against the pool ({self.max_size}"
                " connections); try again later"
            )
        return (
            f"no connection to the database became free within {timeout:g} s (every connection of the pool"
            f" ({self.max_size}) is in use); try again later"
        )
