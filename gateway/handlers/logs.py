"""Logs (GET /Logs/): the newest server log entries at a level and above."""

from __future__ import annotations

from aiohttp import web

from gateway.auth import require_admin
from gateway.errors import BadRequest
from gateway.inputs import read_inputs
from gateway.keys import ADMIN_TOKEN, LOG_RING
from gateway.logbook import LogLevel
from gateway.responses import success


async def read_logs(request: web.Request) -> web.Response:
    """Entries as newline-separated JSON objects, oldest first; ``level`` defaults to debug."""
    require_admin(request, request.app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
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
    lines = request.app[LOG_RING].read(level, limit)
    return success({"logs": "\n".join(lines)}, as_array=True)
