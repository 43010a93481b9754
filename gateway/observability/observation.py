"""One request as the gateway sees it: the context its first middleware builds, and the one observation it ends in.

The request middleware (``gateway.web.middlewares``) builds a ``RequestContext``
once, before anything else runs: the request id, the tokens the request
presents, the user token's hash and the fingerprints logs show, the registry
state the whole request reads, and when it started. It is stored under
``REQUEST_CONTEXT`` and read from there by the operation's access check and by
GetData; nothing looks the tokens, the hashes or the registry up again.

Once the answer's last byte is written (or the writing failed), the same
middleware makes one ``Observation`` of how the request ended: the status sent,
the error answered, GetData's outcome and query outcome, all decided by
``observe`` from the error's class (``gateway.errors``: ``status``, ``code``,
``query_outcome``). The access line, the metrics and GetData's audit entry are
all written from that record.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs
from aiohttp import web

from gateway.errors import GatewayError
from gateway.observability.getdata_tally import GetDataTally
from gateway.registry import RegistryState
from gateway.request.request_tasks import CLIENT_CLOSED_REQUEST


class AuditOutcome(enum.StrEnum):
    """How a GetData request ended, for its audit entry."""

    OK = "ok"
    """The whole answer was sent."""
    ERROR = "error"
    """An error was answered (``status`` and ``error`` say which)."""
    CUT_OFF = "cut_off"
    """The database failed (or a CSV answer passed the row limit) after the answer had begun: the body was left
    unfinished (``error`` says why)."""
    CLIENT_STALLED = "client_stalled"
    """The client stopped reading for ``client_stall_timeout``; the stream was cut."""
    CANCELLED = "cancelled"
    """The client went away, or the gateway stopped, before the answer ended (a write that failed included)."""


@attrs.frozen
class RequestContext:
    """What every part of one request reads of it, built once by the request middleware."""

    request_id: str
    """The ``X-Request-Id`` a proxy sent when it is a plain token, else a new one; sent back in the answer."""
    admin_token: str | None
    """The admin token header as presented (None: absent or empty)."""
    user_token: str | None
    """The user token header as presented (None: absent or empty)."""
    user_token_hash: str | None
    """The user token's HMAC under the registry's salt (what grants are kept by); None without a user token."""
    user_fingerprint: str | None
    """The head of ``user_token_hash`` that logs show."""
    admin_fingerprint: str | None
    """The presented admin token's fingerprint, for the access line."""
    registry: RegistryState
    """The registry state as the request found it: every read of the request is of this one."""
    started: float
    """``time.perf_counter()`` when the request reached the middleware."""
    getdata: GetDataTally | None
    """What GetData did (its handler fills it in); None for every other operation."""
    log_fields: Mapping[str, Any]
    """The fields every log entry the request causes carries (``request_id``, ``user_token_fingerprint``)."""
    secrets: tuple[str, ...]
    """The presented tokens, hidden from anything logged while the request is served."""


REQUEST_CONTEXT = web.RequestKey("request_context", RequestContext)
"""Where the request keeps its ``RequestContext`` (set once, by the request middleware)."""


@attrs.frozen
class Observation:
    """How one request ended: the one record its access line, its metrics and its audit entry are written from."""

    context: RequestContext
    """The request's context (tokens' fingerprints, registry state, GetData's tally)."""
    method: str
    """The HTTP method as sent."""
    path: str
    """The path as sent (the access line shortens it)."""
    route: str
    """The metrics' ``route`` label: the template of the route that served it, or ``unmatched``."""
    status: int
    """The status sent; 499 when the connection closed before the answer ended."""
    error: GatewayError | None
    """The error answered (or the one that cut a streamed answer off); None otherwise."""
    error_code: str | None
    """``error``'s code; ``internal_error`` for a failure the gateway did not expect."""
    outcome: AuditOutcome
    """How the request ended, as GetData's audit entry says it."""
    query_outcome: str | None
    """GetData's ``outcome`` label (the error class's ``query_outcome``, ``ok``); None when nothing is counted
    (the connection closed first)."""
    seconds: float
    """From the context's start to the end of the answer's last byte (or to the failure)."""
    cut_at_shutdown: bool
    """The gateway's stop cut the request at the end of its grace."""


def observe(
    request: web.Request,
    context: RequestContext,
    route: str,
    sent_status: int,
    error: GatewayError | None,
    closed: bool,
    cut_at_shutdown: bool,
    seconds: float,
) -> Observation:
    """The request's one observation: ``sent_status`` and ``error`` are what was answered, ``closed`` whether the
    connection closed before the answer's end.

    The one place an ending is classified; every field comes from the error's class (``status``, ``code``,
    ``query_outcome``), from GetData's tally (an error after the answer began, a stalled client), or from the
    connection.
    """
    tally = context.getdata
    # Cutting a stalled or failed stream closes the connection, which may cancel the task: the gateway's own cut
    # is what ended the request, not the client.
    if tally is not None and tally.stalled:
        status, outcome, query_outcome = 200, AuditOutcome.CLIENT_STALLED, "ok"
    elif tally is not None and tally.late_error is not None:
        error = tally.late_error
        status, outcome, query_outcome = 200, AuditOutcome.CUT_OFF, error.query_outcome
    elif closed:
        status, outcome, query_outcome = CLIENT_CLOSED_REQUEST, AuditOutcome.CANCELLED, None
        error = None
    elif error is not None:
        status, outcome, query_outcome = sent_status, AuditOutcome.ERROR, error.query_outcome
    else:
        status, outcome, query_outcome = sent_status, AuditOutcome.OK, "ok"
    return Observation(
        context=context,
        method=request.method,
        path=request.path,
        route=route,
        status=status,
        error=error,
        error_code=error.code if error is not None else None,
        outcome=outcome,
        query_outcome=query_outcome,
        seconds=seconds,
        cut_at_shutdown=cut_at_shutdown,
    )

