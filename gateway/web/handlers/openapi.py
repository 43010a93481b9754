"""GET /openapi.json: the OpenAPI 3.1 document of this gateway (no token needed).

``gateway.web.app`` builds it once from the operations' declarations, with this
gateway's settings and drivers (``gateway.web.openapi_document``); it is served byte
for byte.
"""

from __future__ import annotations

from aiohttp import web

from gateway.request.responses import JSON_CONTENT_TYPE
from gateway.web.openapi_document import OPENAPI_DOCUMENT
from gateway.web.openapi_schemas import Component
from gateway.web.operations import Access, Operation, json_answer


async def openapi_document(request: web.Request, inputs: None) -> web.Response:
    return web.Response(body=request.app[OPENAPI_DOCUMENT].body, content_type=JSON_CONTENT_TYPE, charset="utf-8")


OPERATIONS = (
    Operation(
        "OpenAPI",
        ("GET",),
        "/openapi.json",
        openapi_document,
        Access.PUBLIC,
        "This document",
        answers={
            200: json_answer(
                "The OpenAPI 3.1 document",
                Component(
                    "OpenAPIDocument", {"type": "object", "required": ["openapi", "info", "paths"], "description": "This document."}
                ),
            )
        },
        reads_registry=False,
    ),
)
