"""Waiting for a future until a deadline, without ever cancelling it: the gateway's one timed wait.

``asyncio.wait_for`` cancels what it waits for when the time runs out or the
caller is cancelled; a statement, a turn or a pool slot must instead be given
back or cancelled on the server by whoever waited, knowing which. ``asyncio.wait``
leaves it alone but builds sets, a second future per call and a closure per
waited future, for the one future the gateway ever waits on: this does the
same with one timer and one callback. A point lookup waits this way for its
statement, and at high concurrency for its token's turn and a pool slot too.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def wait_until(future: asyncio.Future[Any], deadline: float) -> bool:
    """Wait for ``future`` until the loop's clock (``loop.time()``) reaches ``deadline``; return whether it is done.

    Unlike awaiting it, cancelling the caller never cancels ``future``: what it
    stands for (a statement on the server, a turn given to this request) is the
    caller's to withdraw or give back.
    """
    if future.done():
        return True
    loop = asyncio.get_running_loop()
    woken: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not woken.done():
            woken.set_result(None)

    timer = loop.call_at(deadline, wake)
    future.add_done_callback(wake)
    try:
        await woken
    finally:
        timer.cancel()
        future.remove_done_callback(wake)
    return future.done()


async def wait_at_most(future: asyncio.Future[Any], seconds: float) -> bool:
    """``wait_until`` ``seconds`` from now."""
    return await wait_until(future, asyncio.get_running_loop().time() + seconds)
