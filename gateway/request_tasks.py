"""The tasks of the requests being handled, so a stopping server can cut those still running at its deadline.

aiohttp's own shutdown waits for handlers but cannot stop one that is blocked
writing to a client that does not read; cancelling its task can (see
``gateway.serving``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web


class RequestTasks:
    """The set of request-handling tasks running now."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def add(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)

    def discard(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)

    def cancel_all(self) -> int:
        """Cancel every running request; how many there were."""
        running = [task for task in self._tasks if not task.done()]
        for task in running:
            task.cancel()
        return len(running)


REQUEST_TASKS = web.AppKey("request_tasks", RequestTasks)
"""Where the app keeps its ``RequestTasks`` (re-exported by ``gateway.keys``)."""


@web.middleware
async def request_task_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Keep the request's task in the app's ``RequestTasks`` while it is handled."""
    task = asyncio.current_task()
    assert task is not None
    tasks = request.app[REQUEST_TASKS]
    tasks.add(task)
    try:
        return await handler(request)
    finally:
        tasks.discard(task)
