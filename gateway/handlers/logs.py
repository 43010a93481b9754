"""Logs (GET /Logs/): the newest server log entries at a level and above, of every worker of this host.

With ``workers`` > 1 the answering worker merges its siblings' entries with its
own (``gateway.log_sharing``); the answer holds at most ``log_buffer_size``
entries in all, the newest.
"""

from __future__ import annotations

import re

from aiohttp import web

from gateway.auth import require_admin
from gateway.errors import BadRequest
from gateway.inputs import RequestInputs, read_inputs
from gateway.keys import ADMIN_TOKEN, LOG_RING, LOG_SIBLINGS, LOGGER
from gateway.log_sharing import merge_newest
from gateway.logbook import LogLevel, LogQuery
from gateway.responses import success

_EVENT_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,100}")


async def read_logs(request: web.Request) -> web.Response:
    """Entries as newline-separated JSON objects, oldest first; ``level`` defaults to debug."""
    require_admin(request, request.app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    query = log_query(inputs)
    app = request.app
    ring = app[LOG_RING]
    siblings = app.get(LOG_SIBLINGS)
    if siblings is None:
        entries = ring.read(query)
    else:
        found, missing = await siblings.gather(query)
        if missing:
            # Logged before reading this worker's own ring, so the answer carries the warning too.
            app[LOGGER].warning("logs_incomplete", missing_workers={str(pid): why for pid, why in missing.items()})
        entries = merge_newest([ring.read(query), *found], min(query.limit or ring.capacity, ring.capacity))
    return success({"logs": "\n".join(line for _, line in entries)}, as_array=True)


def log_query(inputs: RequestInputs) -> LogQuery:
    """The ``level``, ``limit`` and ``event`` parameters, checked."""
    level_text = inputs.get("level") or "debug"
    try:
        level = LogLevel.parse(level_text)
    except KeyError:
        raise BadRequest(
            f"parameter 'level' must be one of debug (or degug), info, warning, error; got {level_text!r}"
        ) from None
    limit_text = inputs.get("limit")
    limit = None
    if limit_text is not None:
        if not limit_text.isdigit() or int(limit_text) < 1:
            raise BadRequest(f"parameter 'limit' must be a positive integer, got {limit_text!r}")
        limit = int(limit_text)
    event = inputs.get("event")
    if event is not None and not _EVENT_NAME.fullmatch(event):
        raise BadRequest("parameter 'event' must be an event name: 1 to 100 letters, digits, '_', '.' or '-'")
    return LogQuery(minimum=level, limit=limit, event=event)
