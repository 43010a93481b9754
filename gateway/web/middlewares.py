"""The two middlewares: an access-log line, request id and metrics per request; errors as the contract's JSON body.

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

from gateway.request.auth import (
    ADMIN_TOKEN_HEADERS,
    USER_TOKEN_HEADERS,
    hashes_kept_for_the_request,
    presented_token,
    token_fingerprint,
)
from gateway.errors import (
    GatewayError,
    InternalError,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
)
from gateway.errors import BadRequest as BadRequestError
from gateway.web.keys import LOGGER, METRICS, REDACTOR, REGISTRY, REQUEST_ID, REQUEST_LOG
from gateway.observability.log_bounds import shortened_path
from gateway.observability.logbook import request_log_fields, request_secrets
from gateway.registry import one_look_per_request
from gateway.request.request_tasks import CLIENT_CLOSED_REQUEST, REQUEST_TASKS, connection_closed
from gateway.request.responses import error_response

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
    request_id = request.get(REQUEST_ID)
    if request_id is not None:
        response.headers[REQUEST_ID_HEADER] = request_id


@web.middleware
async def access_log_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Log every request once at info (method, path, status, duration, token fingerprints); count it in the metrics.

    The path is logged as far as ``LOGGED_PATH_CHARS`` (anyone may send a long one;
    ``gateway.observability.log_bounds``).
    """
    request_id = request[REQUEST_ID] = _request_id(request.headers.get(REQUEST_ID_HEADER))
    admin_token = presented_token(request, ADMIN_TOKEN_HEADERS)
    user_token = presented_token(request, USER_TOKEN_HEADERS)
    request_secrets.set(tuple(t for t in (admin_token, user_token) if t))
    with one_look_per_request(), hashes_kept_for_the_request():
        fields = {"request_id": request_id}
        if user_token:  # every event of the request says whose it is: a driver's warning about the query too
            fields["user_token_fingerprint"] = token_fingerprint(request.app[REGISTRY].state.token_salt, user_token)
        request_log_fields.set(fields)  # in the request's own task, as request_secrets: it ends with the request
        return await _logged(request, handler, admin_token, user_token)


async def _logged(
    request: web.Request, handler: Handler, admin_token: str | None, user_token: str | None
) -> web.StreamResponse:
    started = time.perf_counter()
    status = 500
    ending: dict[str, bool] = {}
    try:
        response = await handler(request)
        status = response.status
        return response
    except (asyncio.CancelledError, ConnectionResetError) as error:
        if connection_closed(request, error):
            # No fault of the gateway: 499, as nginx logs it, so an alert on 5xx does not fire on every Ctrl-C.
            status = CLIENT_CLOSED_REQUEST
            if request.app[REQUEST_TASKS].was_cut(asyncio.current_task()):
                ending["cut_at_shutdown"] = True
        raise
    finally:
        elapsed = time.perf_counter() - started
        request.app[METRICS].observe_request(request, status, elapsed)
        salt = request.app[REGISTRY].state.token_salt
        request.app[REQUEST_LOG].info(
            "request",
            method=request.method,
            path=shortened_path(request.path),
            status=status,
            duration_ms=round(elapsed * 1000, 3),
            admin_token_fingerprint=token_fingerprint(salt, admin_token) if admin_token else None,
            user_token_fingerprint=token_fingerprint(salt, user_token) if user_token else None,
            **ending,
        )


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Answer every failure with ``{"status": "error", "error", "message"}``: never HTML, never a traceback."""
    try:
        return await handler(request)
    except GatewayError as error:
        # A message may quote what the database said about an input (a database name holding a DSN, say).
        error.message = request.app[REDACTOR].redact_text(error.message)
        if error.status >= 500:
            cause = str(error.__cause__) if error.__cause__ is not None else None
            request.app[LOGGER].error(
                "request_failed", error=error.code, message=error.message, cause=cause, path=request.path
            )
        return error_response(error)
    except web.HTTPException as http_error:
        return _from_http_exception(request, http_error)
    except ConnectionResetError as error:
        if connection_closed(request, error):
            # The client is gone: nothing can be answered, and aiohttp would log it as a failure. A
            # cancellation is what aiohttp itself raises when a client leaves, and ends the request quietly.
            raise asyncio.CancelledError() from error
        request.app[LOGGER].exception("unexpected_error", method=request.method, path=request.path)
        return error_response(InternalError("the gateway failed unexpectedly; the error is in its log"))
    except Exception:
        request.app[LOGGER].exception("unexpected_error", method=request.method, path=request.path)
        return error_response(InternalError("the gateway failed unexpectedly; the error is in its log"))


def _from_http_exception(request: web.Request, http_error: web.HTTPException) -> web.Response:
    if isinstance(http_error, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(http_error.allowed_methods))
        error: GatewayError = MethodNotAllowed(f"{request.method} is not allowed on {request.path}; use {allowed}")
        return error_response(error, headers={"Allow": allowed})
    if isinstance(http_error, web.HTTPNotFound):
        error = NotFound(f"no operation is served at {request.path}")
    elif isinstance(http_error, web.HTTPRequestEntityTooLarge):
        error = PayloadTooLarge("the request body is too large")
    elif http_error.status < 500:
        error = BadRequestError(http_error.reason)
        error.status = http_error.status  # type: ignore[misc]
    else:
        error = InternalError(http_error.reason)
    return error_response(error)
