"""Building the gateway's JSON answers (orjson; one place sets the content type)."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from gateway.errors import GatewayError

JSON_CONTENT_TYPE = "application/json"
GETDATA_CONTENT_TYPE = "text/javascript"
"""GetData's media type by default (the specification's); the body is JSON either way."""


def success(payload: dict[str, Any], *, as_array: bool) -> web.Response:
    """A 200 with ``"status": "success"`` first; wrapped in a one-element array where the spec says so."""
    body = {"status": "success", **payload}
    return web.Response(
        body=orjson.dumps([body] if as_array else body), content_type=JSON_CONTENT_TYPE, charset="utf-8"
    )


def error_response(error: GatewayError, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        status=error.status,
        body=orjson.dumps(error.to_body()),
        content_type=JSON_CONTENT_TYPE,
        charset="utf-8",
        headers={**error.headers, **(headers or {})},
    )
