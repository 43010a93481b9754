"""GET /openapi.json: the OpenAPI 3.1 document of the whole API, as kept in the package (no token needed).

The file is ``gateway/openapi.json`` (package data), written by
``scripts/build_openapi.py``; it is read once and served byte for byte.
"""

from __future__ import annotations

import functools
from importlib import resources

from aiohttp import web

from gateway.responses import JSON_CONTENT_TYPE

DOCUMENT_FILE = "openapi.json"


@functools.cache
def document_bytes() -> bytes:
    """The document as installed with the package."""
    return (resources.files("gateway") / DOCUMENT_FILE).read_bytes()


async def openapi_document(request: web.Request) -> web.Response:
    return web.Response(body=document_bytes(), content_type=JSON_CONTENT_TYPE, charset="utf-8")
