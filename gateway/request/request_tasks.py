"""The tasks of the requests being handled, so a stopping server can cut those still running at its deadline.

The request middleware (``gateway.web.middlewares``) adds each request's task while it is handled.

aiohttp's own shutdown waits for handlers but cannot stop one that is blocked
writing to a client that does not read; cancelling its task can (see
``gateway.process.serving``).

A request whose connection closes before its answer ends (the client went
away, or the stop cut it) is no fault of the gateway: ``connection_closed``
tells such an ending from a failure, and logs, metrics and the audit trail give
it nginx's status 499 ("client closed request") instead of 500, so an alert on
5xx fires on the gateway's own faults only.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from aiohttp import web


CLIENT_CLOSED_REQUEST = 499
"""The status logged and counted for a request whose connection closed before its answer ended (nginx's)."""


def connection_closed(request: web.BaseRequest, error: BaseException | None) -> bool:
    """Whether ``error`` ended ``request`` because its connection closed, rather than through a fault.

    A cancellation of the request's own task is one (aiohttp cancels it when the
    client disconnects, ``RequestTasks.cancel_all`` at the end of a stop's grace);
    so is a write that failed because the connection is gone. A ``CancelledError``
    that merely escaped from something the handler awaited, its connection still
    open, is a fault like any other exception.
    """
    if not isinstance(error, asyncio.CancelledError | ConnectionResetError):
        return False
    task = asyncio.current_task()
    if isinstance(error, asyncio.CancelledError) and task is not None and task.cancelling():
        return True
    transport = request.transport
    return transport is None or transport.is_closing()


class RequestTasks:
    """The set of request-handling tasks running now, and those a stop cut."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._cut: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()

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
            self._cut.add(task)
            task.cancel()
        return len(running)

    def was_cut(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether ``cancel_all`` cancelled ``task`` (the stop cut it, rather than its client leaving)."""
        return task is not None and task in self._cut


REQUEST_TASKS = web.AppKey("request_tasks", RequestTasks)
"""Where the app keeps its ``RequestTasks`` (re-exported by ``gateway.web.keys``)."""

