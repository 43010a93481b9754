"""The two middlewares: an access-log line and request metrics per request; errors as the contract's JSON body."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from gateway.auth import ADMIN_TOKEN_HEADERS, USER_TOKEN_HEADERS, presented_token, token_fingerprint
from gateway.errors import (
    GatewayError,
    InternalError,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
)
from gateway.errors import BadRequest as BadRequestError
from gateway.keys import LOGGER, METRICS, REDACTOR, REGISTRY
from gateway.logbook import request_secrets
from gateway.responses import error_response

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def access_log_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Log every request once at info (method, path, status, duration, token fingerprints); count it in the metrics."""
    admin_token = presented_token(request, ADMIN_TOKEN_HEADERS)
    user_token = presented_token(request, USER_TOKEN_HEADERS)
    request_secrets.set(tuple(t for t in (admin_token, user_token) if t))
    started = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    finally:
        elapsed = time.perf_counter() - started
        request.app[METRICS].observe_request(request, status, elapsed)
        salt = request.app[REGISTRY].state.token_salt
        request.app[LOGGER].info(
            "request",
            method=request.method,
            path=request.path,
            status=status,
            duration_ms=round(elapsed * 1000, 3),
            admin_token_fingerprint=token_fingerprint(salt, admin_token) if admin_token else None,
            user_token_fingerprint=token_fingerprint(salt, user_token) if user_token else None,
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
