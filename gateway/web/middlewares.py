"""The request middleware: one context per request, errors as the contract's JSON body, one observation at its end.

Every request gets an id: the ``X-Request-Id`` a proxy in front sent, when it
is a plain token (letters, digits, ``.``, ``_``, ``:``, ``-``, at most 128
characters), else 16 new hex digits. It is bound to every log event the request
causes (the access line, its audit event, a driver's warning) as ``request_id``
and sent back in the answer's ``X-Request-Id`` header, so a client's complaint
leads to the lines of its request.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from gateway.errors import BadRequest as BadRequestError
from gateway.errors import GatewayError, InternalError, MethodNotAllowed, NotFound, PayloadTooLarge
from gateway.observability.getdata_tally import GetDataTally
from gateway.observability.log_bounds import shortened_path
from gateway.observability.logbook import request_log_fields, request_secrets
from gateway.observability.metrics import route_label
from gateway.observability.observation import REQUEST_CONTEXT, Observation, RequestContext, observe
from gateway.request.auth import (
    ADMIN_TOKEN_HEADERS,
    FINGERPRINT_LENGTH,
    USER_TOKEN_HEADERS,
    hash_user_token,
    presented_token,
    token_fingerprint,
)
from gateway.request.request_tasks import REQUEST_TASKS, connection_closed
from gateway.request.responses import error_response
from gateway.web.keys import AUDITED_ROUTES, AUDITOR, LOGGER, METRICS, REDACTOR, REGISTRY, REQUEST_LOG

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

REQUEST_ID_HEADER = "X-Request-Id"
_PLAIN_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def _request_id(sent: str | None) -> str:
    """The id a proxy sent, if it is a plain token; else a new one."""
    if sent is not None and _PLAIN_REQUEST_ID.fullmatch(sent):
        return sent
    return os.urandom(8).hex()


async def send_request_id(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: every answer, streamed ones too, names its request id."""
    context = request.get(REQUEST_CONTEXT)
    if context is not None:
        response.headers[REQUEST_ID_HEADER] = context.request_id


def request_context(request: web.Request, route: str, started: float) -> RequestContext:
    """The request's ``RequestContext``: its id, the tokens it presents, their hash and fingerprints, the registry."""
    app = request.app
    request_id = _request_id(request.headers.get(REQUEST_ID_HEADER))
    admin_token = presented_token(request, ADMIN_TOKEN_HEADERS)
    user_token = presented_token(request, USER_TOKEN_HEADERS)
    state = app[REGISTRY].state
    log_fields = {"request_id": request_id}
    user_hash = user_fingerprint = None
    if user_token:  # every event of the request says whose it is: a driver's warning about the query too
        user_hash = hash_user_token(state.token_salt, user_token)
        user_fingerprint = log_fields["user_token_fingerprint"] = user_hash[:FINGERPRINT_LENGTH]
    return RequestContext(
        request_id=request_id,
        admin_token=admin_token,
        user_token=user_token,
        user_token_hash=user_hash,
        user_fingerprint=user_fingerprint,
        admin_fingerprint=token_fingerprint(state.token_salt, admin_token) if admin_token else None,
        registry=state,
        started=started,
        getdata=GetDataTally() if route in app[AUDITED_ROUTES] else None,
        log_fields=log_fields,
        secrets=tuple(token for token in (admin_token, user_token) if token),
    )


@web.middleware
async def request_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The one middleware: context, the request's task, errors as the JSON body, the answer written, one observation.

    The answer is written here, not by aiohttp after the middleware returns, so that the observation (the access
    line, the metrics, GetData's audit entry) says how the answer's last byte went: a one-piece answer whose write
    fails is 499 ``cancelled``, never ``ok``. A streamed answer was written by its handler.
    """
    started = time.perf_counter()
    app = request.app
    route = route_label(request)
    context = request[REQUEST_CONTEXT] = request_context(request, route, started)
    # In the request's own task (aiohttp copies the context per task): every entry it causes, a driver's
    # warning too, carries its fields and hides its tokens, and the values end with the request.
    request_secrets.set(context.secrets)
    request_log_fields.set(context.log_fields)
    task = asyncio.current_task()
    assert task is not None
    tasks = app[REQUEST_TASKS]  # so a stopping server can cut the request wherever it is
    tasks.add(task)
    error: GatewayError | None = None
    status = 500  # the status answered, once there is an answer
    closed = False
    try:
        try:
            response = await handler(request)
        except Exception as raised:  # a cancellation passes: it is handled below
            if isinstance(raised, ConnectionResetError) and connection_closed(request, raised):
                # The client is gone: nothing can be answered, and aiohttp would log it as a failure. A
                # cancellation is what aiohttp itself raises when a client leaves, and ends the request quietly.
                closed = True
                raise asyncio.CancelledError() from raised
            error, response = _answer_to(request, raised)
        status = response.status
        if not response.prepared:
            await response.prepare(request)
            await response.write_eof()
        return response
    except ConnectionResetError:
        # The write failed on a closed connection. aiohttp tries to finish the answer again and gives up quietly.
        closed = True
        return response
    except asyncio.CancelledError as cancelled:
        closed = closed or connection_closed(request, cancelled)
        if not closed:  # escaped from something the handler awaited, its connection open: the gateway's fault
            error = InternalError("the request was cancelled while its connection was open")
        raise
    except Exception:  # writing the answer failed otherwise: aiohttp answers 500 if it still can
        app[LOGGER].exception("unexpected_error", method=request.method, path=request.path)
        error, status = InternalError("the gateway failed unexpectedly; the error is in its log"), 500
        raise
    finally:
        tasks.discard(task)
        observation = observe(
            request,
            context,
            route,
            status,
            error,
            closed,
            cut_at_shutdown=closed and tasks.was_cut(task),
            seconds=time.perf_counter() - started,
        )
        _record(app, observation)


def _record(app: web.Application, observation: Observation) -> None:
    """The access line, the metrics and (for GetData) the audit entry, all from one observation."""
    app[METRICS].observe(observation)
    context = observation.context
    if context.getdata is not None:
        app[AUDITOR].getdata(observation)
    ending = {"cut_at_shutdown": True} if observation.cut_at_shutdown else {}
    # The path is logged as far as LOGGED_PATH_CHARS (anyone may send a long one; gateway.observability.log_bounds).
    app[REQUEST_LOG].info(
        "request",
        method=observation.method,
        path=shortened_path(observation.path),
        status=observation.status,
        duration_ms=round(observation.seconds * 1000, 3),
        admin_token_fingerprint=context.admin_fingerprint,
        user_token_fingerprint=context.user_fingerprint,
        **ending,
    )


def _answer_to(request: web.Request, raised: Exception) -> tuple[GatewayError, web.Response]:
    """The error ``raised`` means and its JSON answer: never HTML, never a traceback."""
    if isinstance(raised, GatewayError):
        # A message may quote what the database said about an input (a database name holding a DSN, say).
        raised.message = request.app[REDACTOR].redact_text(raised.message)
        if raised.status >= 500:
            cause = str(raised.__cause__) if raised.__cause__ is not None else None
            request.app[LOGGER].error(
                "request_failed", error=raised.code, message=raised.message, cause=cause, path=request.path
            )
        return raised, error_response(raised)
    if isinstance(raised, web.HTTPException):
        return _from_http_exception(request, raised)
    request.app[LOGGER].exception("unexpected_error", method=request.method, path=request.path)
    error = InternalError("the gateway failed unexpectedly; the error is in its log")
    return error, error_response(error)


def _from_http_exception(request: web.Request, http_error: web.HTTPException) -> tuple[GatewayError, web.Response]:
    if isinstance(http_error, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(http_error.allowed_methods))
        error: GatewayError = MethodNotAllowed(f"{request.method} is not allowed on {request.path}; use {allowed}")
        return error, error_response(error, headers={"Allow": allowed})
    if isinstance(http_error, web.HTTPNotFound):
        error = NotFound(f"no operation is served at {request.path}")
    elif isinstance(http_error, web.HTTPRequestEntityTooLarge):
        error = PayloadTooLarge("the request body is too large")
    elif http_error.status < 500:
        error = BadRequestError(http_error.reason)
        error.status = http_error.status  # type: ignore[misc]
    else:
        error = InternalError(http_error.reason)
    return error, error_response(error)
