"""GET /console (the page) and GET /console/assets/{name} (its scripts, stylesheet and icon).

The console is a page for people, not an operation for clients, so its routes
are added beside the declared operations (``gateway.operations``) rather than
among them, and the OpenAPI document does not list them: a client generated
from the document has no use for an HTML page or a stylesheet (docs/api.md,
"Console"). They still pass through every middleware: each request gets its
access-log line, its request id and its metrics, and an unknown asset is the
contract's JSON 404.

Every answer carries a strict Content-Security-Policy: scripts, styles and
connections only from the gateway itself, no inline script or style, nothing
from another site, no framing, no form submission, and Trusted Types required,
so that the browser itself refuses any HTML written into the page from a
string (``innerHTML``). The files are read once, at import, and served from
memory with an ETag: they change only with the gateway's version.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import attrs
from aiohttp import web

from gateway.errors import NotFound

STATIC = Path(__file__).parent / "static"
"""Where the page and its assets are kept (package data)."""

PAGE_FILE = "console.html"
"""The page served at ``/console``."""

POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        # Assigning a string to innerHTML, outerHTML, insertAdjacentHTML or document.write throws: every value
        # reaches the page through textContent, and the browser holds the code to it (Chromium; others ignore it).
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    )
)
"""The Content-Security-Policy of every console answer."""

SECURITY_HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate it
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    # Revalidated on every load (a 304 when unchanged), so a new gateway version's scripts are used at once.
    "Cache-Control": "no-cache",
}

CONTENT_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
ASSET_NAME = re.compile(r"[a-z][a-z0-9_]*\.(?:js|css|svg)")
"""What an asset's file name looks like; anything else in ``static/`` (the page, notes) is not an asset."""

PAGE_PATH = "/console"
ASSET_PATH = "/console/assets/{name}"
CONSOLE_PATHS = (PAGE_PATH, PAGE_PATH + "/", ASSET_PATH, ASSET_PATH + "/")
"""Every route the console adds (each path also with a trailing slash, as every path of the gateway)."""


@attrs.frozen
class StaticFile:
    """One file as served: its bytes, media type and ETag."""

    body: bytes
    content_type: str
    etag: str

    @classmethod
    def read(cls, path: Path) -> StaticFile:
        body = path.read_bytes()
        return cls(body, CONTENT_TYPES[path.suffix], '"' + hashlib.sha256(body).hexdigest()[:20] + '"')

    def answer(self, request: web.Request) -> web.Response:
        headers = {**SECURITY_HEADERS, "ETag": self.etag}
        if self.etag in request.headers.get("If-None-Match", ""):
            return web.Response(status=304, headers=headers)
        return web.Response(body=self.body, content_type=self.content_type, charset="utf-8", headers=headers)


PAGE = StaticFile.read(STATIC / PAGE_FILE)
ASSETS = {path.name: StaticFile.read(path) for path in sorted(STATIC.iterdir()) if ASSET_NAME.fullmatch(path.name)}
"""The assets by name: the page's scripts (ES modules), stylesheet and icon."""


async def console_page(request: web.Request) -> web.Response:
    return PAGE.answer(request)


async def console_asset(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    asset = ASSETS.get(name)
    if asset is None:
        # The name is one the request chose: a fixed message, so nothing it sent is echoed into the answer.
        raise NotFound("no such console asset")
    return asset.answer(request)


def add_console_routes(app: web.Application) -> None:
    """Serve the console's page and assets on ``app`` (GET only, with and without a trailing slash)."""
    for path in (PAGE_PATH, PAGE_PATH + "/"):
        app.router.add_route("GET", path, console_page)
    for path in (ASSET_PATH, ASSET_PATH + "/"):
        app.router.add_route("GET", path, console_asset)
