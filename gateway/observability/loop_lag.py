"""How late the event loop runs what is due: the one number that shows a request holding up the others.

Everything a gateway process serves shares one event loop, so a piece of work
that keeps it busy (a large query text parsed on it, a huge value encoded)
delays every other request of the process by as long. While an app serves, a
task asks the loop to wake it every ``PROBE_INTERVAL_SECONDS`` and records how
much later than asked it woke, in the histogram ``dbgateway_event_loop_lag_seconds``
(``gateway.observability.metrics``).
The bench reads it around its large-text run; an operator can alert on its
upper buckets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from gateway.observability.metrics import METRICS

PROBE_INTERVAL_SECONDS = 0.05
"""How often the loop is asked to wake the probe (20 times a second: a few microseconds of work each)."""


async def measure_loop_lag(app: web.Application) -> AsyncIterator[None]:
    """``cleanup_ctx``: the probe task runs while the app serves."""
    histogram = app[METRICS].event_loop_lag
    loop = asyncio.get_running_loop()

    async def probe() -> None:
        while True:
            asked = loop.time() + PROBE_INTERVAL_SECONDS
            await asyncio.sleep(PROBE_INTERVAL_SECONDS)
            histogram.observe(max(0.0, loop.time() - asked))

    task = asyncio.create_task(probe(), name="event-loop-lag-probe")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
