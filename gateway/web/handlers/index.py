"""GET /: what this server is, and where to go next; JSON, or a small HTML page for a browser.

No token needed, nothing about the registry: the name, the version and the
service paths anyone may call. The HTML page is self-contained (no script, no
asset from another site; its Content-Security-Policy forbids both).
"""

from __future__ import annotations

import html

import orjson
from aiohttp import web

from gateway import __version__
from gateway.request.responses import JSON_CONTENT_TYPE
from gateway.web.openapi_schemas import HTML, JSON, Component, closed_object, success_object
from gateway.web.operations import Access, Answer, Operation

LINKS = {
    "console": "/console",
    "openapi": "/openapi.json",
    "healthz": "/healthz",
    "readyz": "/readyz",
    "metrics": "/metrics",
}
"""The paths the index points at, by name."""

DOCS = {
    "api": "docs/api.md",
    "operations": "docs/operations.md",
}
"""The documentation in the gateway's source tree (not served); ``/openapi.json`` is the served description."""

_DESCRIPTIONS = {
    "console": "the console: paste a user token, see its tables, run read-only SQL, download the answer",
    "openapi": "every operation, machine-readable (OpenAPI 3.1)",
    "healthz": "the process is alive",
    "readyz": "the registry is loaded (add ?databases=1 to try every database)",
    "metrics": "Prometheus metrics (the admin token unless metrics_require_admin is off)",
}

_PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'"

_BODY = {"status": "success", "name": "dbgateway", "version": __version__, "links": LINKS, "docs": DOCS}
_JSON = orjson.dumps(_BODY)


def _page() -> bytes:
    items = "".join(
        f'<li><a href="{html.escape(path)}"><code>{html.escape(path)}</code></a>: {html.escape(_DESCRIPTIONS[name])}</li>'
        for name, path in LINKS.items()
    )
    docs = "".join(f"<li><code>{html.escape(path)}</code></li>" for path in DOCS.values())
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>dbgateway</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;"
        "line-height:1.5}code{background:#f3f3f3;padding:0 .2em}</style></head><body>"
        f"<h1>dbgateway <small>{html.escape(__version__)}</small></h1>"
        "<p>An HTTP gateway that lets token holders run read-only SQL over the tables an administrator granted.</p>"
        f"<ul>{items}</ul><p>Documentation, in the gateway's source tree:</p><ul>{docs}</ul>"
        "</body></html>\n"
    ).encode()


_HTML = _page()


def wants_html(accept: str | None) -> bool:
    """A browser's Accept names text/html; anyone who names application/json too gets JSON."""
    if not accept:
        return False
    accept = accept.lower()
    return "text/html" in accept and JSON_CONTENT_TYPE not in accept


async def index(request: web.Request, inputs: None) -> web.Response:
    if wants_html(request.headers.get("Accept")):
        return web.Response(
            body=_HTML, content_type="text/html", charset="utf-8", headers={"Content-Security-Policy": _PAGE_POLICY}
        )
    return web.Response(body=_JSON, content_type=JSON_CONTENT_TYPE, charset="utf-8")


INDEX = Component(
    "Index",
    success_object(
        name={"const": "dbgateway"},
        version={"type": "string"},
        links=closed_object({name: {"const": path} for name, path in LINKS.items()}),
        docs=closed_object({name: {"type": "string"} for name in DOCS}),
    ),
)

OPERATIONS = (
    Operation(
        "Index",
        ("GET",),
        "/",
        index,
        Access.PUBLIC,
        "The gateway's name, version and service paths; a small HTML page when Accept names text/html",
        description="No token needed. JSON by default; an Accept naming text/html (and not application/json) "
        "gets a self-contained HTML page with the same links.",
        answers={
            200: Answer("What this server is and where to go next", {JSON: INDEX, HTML: {"type": "string"}})
        },
        reads_registry=False,
    ),
)
