"""A request aiohttp cannot read as HTTP gets the contract's JSON error, not aiohttp's own text page.

aiohttp answers a request line, header or body framing it cannot parse from its
protocol handler (``RequestHandler.handle_error``), before any application
middleware runs: a ``text/plain`` page that quotes the offending bytes. The
contract wants every error as the one JSON body, and the bytes a client sent
have no place in it. ``install`` makes aiohttp's servers build their
connection handlers from ``JsonErrorRequestHandler``, which keeps aiohttp's
logging and status and answers with the JSON body; aiohttp names no hook for
this, so the handler class is replaced where aiohttp's ``Server`` looks it up.
"""

from __future__ import annotations

from aiohttp import http_exceptions, web_protocol, web_server
from aiohttp.web_request import BaseRequest
from aiohttp.web_response import StreamResponse

from gateway.errors import GatewayError
from gateway.request.responses import error_response

_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (http_exceptions.LineTooLong, "a line of the request (its first line or a header) is too long"),
    (http_exceptions.BadHttpMethod, "the request does not start with an HTTP method"),
    (http_exceptions.BadStatusLine, "the request line is not 'METHOD target HTTP/1.1'"),
    (http_exceptions.InvalidHeader, "a header is malformed"),
    (http_exceptions.InvalidURLError, "the request target is malformed"),
    (http_exceptions.PayloadEncodingError, "the body does not match its Content-Length or Transfer-Encoding"),
)
_CODES = {400: "bad_request", 413: "payload_too_large", 431: "bad_request"}


class ProtocolError(GatewayError):
    """The request could not be read as HTTP; its status is aiohttp's."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status  # type: ignore[misc]  # per instance: aiohttp decided it
        self.code = _CODES.get(status, "bad_request" if status < 500 else "internal_error")  # type: ignore[misc]


def protocol_error(status: int, exc: BaseException | None) -> GatewayError:
    """The contract's error for what aiohttp's protocol handler refused (never quoting the request's bytes)."""
    if status >= 500:
        return ProtocolError(status, "the gateway could not handle the request; see its log")
    reason = next((why for kind, why in _REASONS if isinstance(exc, kind)), None)
    if reason is None:  # aiohttp's C parser raises plain BadHttpMessage: its own words say what, after the bytes
        reason = "a header is malformed" if "header" in str(exc).lower() else "it is not valid HTTP/1.1"
    return ProtocolError(status, f"the request could not be read: {reason}")


class JsonErrorRequestHandler(web_protocol.RequestHandler):
    """aiohttp's connection handler, answering what it cannot parse with the contract's JSON error."""

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> StreamResponse:
        if request.writer.output_size > 0:  # as aiohttp: an answer began, so the connection is broken
            raise ConnectionError("an answer was being sent when the request failed")
        error = protocol_error(status, exc)
        if status >= 500:
            self.log_exception("Error handling request", exc_info=exc)
        else:
            # aiohttp logs the parser's message, which quotes the client's bytes (a token, a password): not here.
            self.logger.warning("unreadable request from %s: %s (%s)", request.remote, error.message,
                             type(exc).__name__ if exc is not None else "no exception")
        response = error_response(error)
        response.force_close()
        return response


def install() -> None:
    """Make aiohttp's servers use ``JsonErrorRequestHandler`` (idempotent)."""
    web_server.RequestHandler = JsonErrorRequestHandler  # type: ignore[misc]
