"""The console's page and assets as HTTP answers: the strict policy on each, served by the gateway itself.

No browser here: what the headers and files say. ``test_webconsole_safety.py``
shows in Chromium that the policy does what it says.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from gateway.web.openapi_document import OPENAPI_DOCUMENT
from gateway.web.console.routes import ASSETS, PAGE, POLICY, STATIC
from support import ADMIN_TOKEN, GatewayFactory

EXPECTED_POLICY = {
    "default-src": "'none'",
    "script-src": "'self'",
    "style-src": "'self'",
    "connect-src": "'self'",
    "img-src": "'self'",
    "base-uri": "'none'",
    "form-action": "'none'",
    "frame-ancestors": "'none'",
    "require-trusted-types-for": "'script'",
    "trusted-types": "'none'",
}
ASSET_BUDGET_BYTES = 80 * 1024
"""What the page and every asset may weigh together (uncompressed): a page of a data tool, not an application."""


class Tags(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


async def plain_get(client: TestClient, path: str, **headers: str) -> tuple[aiohttp.ClientResponse, bytes]:
    """GET without the contract check: the console's answers are not in the OpenAPI document."""
    async with aiohttp.ClientSession() as session, session.get(client.make_url(path), headers=headers) as response:
        return response, await response.read()


@pytest.mark.parametrize("path", ["/console", "/console/", "/console/assets/main.js", "/console/assets/console.css"])
async def test_every_console_answer_carries_the_strict_policy(gateway: TestClient, path: str) -> None:
    """No inline script or style, nothing from elsewhere, no framing, Trusted Types; and the usual companions."""
    response, _ = await plain_get(gateway, path)
    assert response.status == 200
    policy = dict(part.strip().split(" ", 1) for part in response.headers["Content-Security-Policy"].split(";"))
    assert policy == EXPECTED_POLICY
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "Set-Cookie" not in response.headers


async def test_the_page_has_no_inline_script_or_style_and_loads_only_its_own_assets(gateway: TestClient) -> None:
    """Every script and stylesheet is a file of the gateway's own, and every one it names is served."""
    response, body = await plain_get(gateway, "/console")
    assert response.content_type == "text/html"
    tags = tags_of(body.decode())
    assert not [tag for tag, attrs in tags if tag == "style" or "style" in attrs]
    assert not [(tag, name) for tag, attrs in tags for name in attrs if name.startswith("on")]
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert scripts and all(attrs.get("src", "").startswith("/console/assets/") for attrs in scripts)
    assert b"<script>" not in body and b"<script type=\"module\">" not in body
    linked = [attrs.get("src") or attrs.get("href") for tag, attrs in tags if tag in ("script", "link")]
    for path in linked:
        assert path is not None and path.startswith("/console/assets/"), path
        asset, _ = await plain_get(gateway, path)
        assert asset.status == 200, path
    # Each module imports only modules that are served beside it.
    for name, asset in ASSETS.items():
        for imported in re.findall(rb"from '\./([a-z_]+\.js)'", asset.body):
            assert imported.decode() in ASSETS, (name, imported)
    # No address of another site (the icon's SVG namespace is a name, never fetched).
    every = b"".join(a.body for a in ASSETS.values()) + PAGE.body
    assert not re.search(rb"https?://", every.replace(b'xmlns="http://www.w3.org/2000/svg"', b""))


async def test_assets_have_their_media_types_and_revalidate(gateway: TestClient) -> None:
    """Modules are served as JavaScript (browsers refuse a module otherwise); a second load is a 304."""
    for name, media_type in (("main.js", "text/javascript"), ("console.css", "text/css"), ("icon.svg", "image/svg+xml")):
        response, body = await plain_get(gateway, f"/console/assets/{name}")
        assert (response.status, response.content_type) == (200, media_type), name
        assert body == (STATIC / name).read_bytes()
        again, again_body = await plain_get(gateway, f"/console/assets/{name}", **{"If-None-Match": response.headers["ETag"]})
        assert (again.status, again_body) == (304, b"")
        assert again.headers["Content-Security-Policy"] == POLICY


@pytest.mark.parametrize("path", ["/console/assets/nothing.js", "/console/assets/console.html", "/console/assets/..%2Froutes.py"])
async def test_anything_else_is_the_contracts_404(gateway: TestClient, path: str) -> None:
    """Only the listed assets are served: not the page under another name, nothing outside the folder."""
    response = await gateway.get(path)  # checked against the document: an error in the contract's shape
    assert response.status == 404
    body = await response.json()
    assert body["error"] == "not_found" and "routes.py" not in body["message"]


async def test_the_console_is_small_and_self_contained() -> None:
    """Page and assets together stay within the budget; no third-party code is vendored."""
    total = len(PAGE.body) + sum(len(asset.body) for asset in ASSETS.values())
    assert total <= ASSET_BUDGET_BYTES, total
    assert {path.name for path in STATIC.iterdir()} == {"console.html", *ASSETS}


async def test_the_index_links_the_console_and_the_document_leaves_it_out(gateway: TestClient) -> None:
    """GET / names the console (JSON and HTML); the OpenAPI document describes operations, not the page."""
    body = await (await gateway.get("/")).json()
    assert body["links"]["console"] == "/console"
    page = await (await gateway.get("/", headers={"Accept": "text/html"})).text()
    assert 'href="/console"' in page
    assert not [path for path in gateway.app[OPENAPI_DOCUMENT].document["paths"] if path.startswith("/console")]


async def test_console_requests_are_logged_without_secrets(make_gateway: GatewayFactory) -> None:
    """The page's requests get their access-log line like any other; a token sent along never reaches the log."""
    client = await make_gateway()
    token = "a-token-sent-to-the-console-page-0042"
    await plain_get(client, "/console", **{"User-Token": token})
    log = client.log_stream.getvalue()  # type: ignore[attr-defined]
    assert '"path":"/console"' in log
    assert token not in log and ADMIN_TOKEN not in log
