"""Logs (GET /Logs/): the newest server log entries at a level and above, of every worker of this host.

With ``workers`` > 1 the answering worker merges its siblings' entries with its
own (``gateway.observability.log_sharing``); the answer holds at most ``log_buffer_size``
entries and ``log_buffer_bytes`` bytes of them in all, the newest.
"""

from __future__ import annotations

import re

import attrs
from aiohttp import web

from gateway.errors import BadRequest
from gateway.observability.log_ring import LogLevel, LogQuery
from gateway.observability.log_sharing import merge_newest
from gateway.request.responses import success
from gateway.web.keys import LOG_RING, LOG_SIBLINGS, LOGGER
from gateway.web.openapi_schemas import Component, any_case, one_element_array, success_object
from gateway.web.operations import ACCESS_DENIED, BAD_INPUT, Access, Operation, json_answer
from gateway.web.parameters import ReadContext, parameter

_EVENT_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,100}")


def _level(name: str, text: str | None, context: ReadContext) -> LogLevel:
    level_text = text or "debug"
    try:
        return LogLevel.parse(level_text)
    except KeyError:
        raise BadRequest(
            f"parameter 'level' must be one of debug (or degug), info, warning, error; got {level_text!r}"
        ) from None


def _limit(name: str, text: str | None, context: ReadContext) -> int | None:
    if text is None:
        return None
    if not text.isdigit() or int(text) < 1:
        raise BadRequest(f"parameter 'limit' must be a positive integer, got {text!r}")
    return int(text)


def _event(name: str, text: str | None, context: ReadContext) -> str | None:
    if text is not None and not _EVENT_NAME.fullmatch(text):
        raise BadRequest("parameter 'event' must be an event name: 1 to 100 letters, digits, '_', '.' or '-'")
    return text


@attrs.frozen(kw_only=True)
class LogsInputs:
    """The Logs operation's filters."""

    level: LogLevel = parameter(
        "Lowest level returned, any case (degug: the specification's spelling); absent means debug.",
        schema=any_case("debug", "degug", "info", "warning", "error"),
        reader=_level,
    )
    """Entries at this level and above."""
    limit: int | None = parameter(
        "Only the newest N entries.",
        schema={"type": "integer", "minimum": 1},
        reader=_limit,
    )
    """Only the newest this many; None: all kept."""
    event: str | None = parameter(
        "Only entries with this event name, e.g. audit (GetData and administrative changes) or request.",
        schema={"type": "string", "pattern": "^[A-Za-z0-9_.\\-]{1,100}$"},
        reader=_event,
    )
    """Only entries of this event."""


async def read_logs(request: web.Request, inputs: LogsInputs) -> web.Response:
    """Entries as newline-separated JSON objects, oldest first; ``level`` defaults to debug."""
    query = LogQuery(minimum=inputs.level, limit=inputs.limit, event=inputs.event)
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
        entries = merge_newest(
            [ring.read(query), *found], min(query.limit or ring.capacity, ring.capacity), ring.max_bytes
        )
    return success({"logs": "\n".join(line for _, line in entries)}, as_array=True)


OPERATIONS = (
    Operation(
        "Logs",
        ("GET",),
        "/Logs",
        read_logs,
        Access.ADMIN,
        "The newest server log entries at a level and above (optionally of one event)",
        inputs=LogsInputs,
        answers={
            200: json_answer(
                "The entries",
                Component(
                    "Logs",
                    one_element_array(
                        success_object(
                            logs={
                                "type": "string",
                                "description": "Newline-separated JSON objects, oldest first, each with timestamp, "
                                "level, event, pid and instance; with workers > 1, the entries of every worker of the "
                                "host, merged.",
                            }
                        )
                    ),
                ),
            )
        },
        errors=(BAD_INPUT, ACCESS_DENIED),
        reads_registry=False,
    ),
)
