"""Building the gateway's JSON answers (orjson; one place sets the content type)."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from gateway.errors import GatewayError

JSON_CONTENT_TYPE = "application/json"
GETDATA_CONTENT_TYPE = "text/javascript"
"""GetData's media type by default (the specification's); the body is JSON either way."""


def getdata_media_type(accept: str | None) -> str:
    """``application/json`` when the request's ``Accept`` prefers it to ``text/javascript``, else the default.

    Generated clients parse only answers declared as JSON, so they ask for it. A header check per
    request, nothing more when the header does not name application/json at all (the usual case).
    """
    if not accept:
        return GETDATA_CONTENT_TYPE
    accept = accept.lower()  # media types are case-insensitive
    if JSON_CONTENT_TYPE not in accept:
        return GETDATA_CONTENT_TYPE
    weights = {JSON_CONTENT_TYPE: 0.0, GETDATA_CONTENT_TYPE: 0.0}
    for item in accept.split(","):
        media, _, parameters = item.partition(";")
        media = media.strip()
        if media in weights:
            weights[media] = max(weights[media], _quality(parameters))
    json_weight = weights[JSON_CONTENT_TYPE]
    # A tie keeps the default: the specification's media type wins unless JSON is preferred.
    return JSON_CONTENT_TYPE if json_weight > weights[GETDATA_CONTENT_TYPE] else GETDATA_CONTENT_TYPE


def _quality(parameters: str) -> float:
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return min(max(float(value), 0.0), 1.0)
            except ValueError:
                return 0.0
    return 1.0


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
