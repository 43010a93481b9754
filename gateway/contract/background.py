"""Tasks started and not awaited: kept referenced until they end.

asyncio keeps only weak references to tasks, so a task nobody holds may be
garbage-collected before it finishes (closing an old pool, waking aiopg's
waiters, a connection's clean-up after its request was cancelled). Every such
task is started through ``keep_running``, which holds it until it is done.
A future that may end with an error nobody awaits (a statement abandoned after
a time-out, a guard exchange whose request was cancelled) gets
``retrieve_outcome`` as a done callback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")

_RUNNING: set[asyncio.Future[Any]] = set()


def keep_running(awaitable: Awaitable[T]) -> asyncio.Future[T]:
    """Start ``awaitable`` as a task held until it ends; the caller may await it or not."""
    task = asyncio.ensure_future(awaitable)
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
    return task


def retrieve_outcome(future: asyncio.Future[Any]) -> None:
    """Read the error of a future nobody will await, so asyncio does not report it as never retrieved."""
    if not future.cancelled():
        future.exception()
