"""GET /: the gateway's name, version and service paths; JSON, or a self-contained HTML page for a browser."""

from __future__ import annotations

import re

import pytest
from aiohttp.test_utils import TestClient

from gateway import __version__

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
LINKS = ["/console", "/openapi.json", "/healthz", "/readyz", "/metrics"]


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "text/html, application/json"])
async def test_index_is_json_by_default(gateway: TestClient, accept: str | None) -> None:
    """Without a browser's Accept, GET / answers JSON naming the gateway, its version and the service paths."""
    response = await gateway.get("/", headers={"Accept": accept} if accept else {})
    assert response.status == 200
    assert response.content_type == "application/json"
    body = await response.json()
    assert body["status"] == "success" and body["name"] == "dbgateway" and body["version"] == __version__
    assert sorted(body["links"].values()) == sorted(LINKS)
    assert body["docs"] == {"api": "docs/api.md", "operations": "docs/operations.md"}


async def test_index_links_lead_somewhere(gateway: TestClient) -> None:
    """Every link of the index is served (200, or 403 for /metrics without the admin token)."""
    body = await (await gateway.get("/")).json()
    for path in body["links"].values():
        response = await gateway.get(path)
        assert response.status in ({200, 403} if path == "/metrics" else {200}), path


async def test_a_browser_gets_a_self_contained_html_page(gateway: TestClient) -> None:
    """A browser's Accept gets HTML linking the same paths, with no script and nothing from another site."""
    response = await gateway.get("/", headers={"Accept": BROWSER_ACCEPT})
    assert response.status == 200
    assert response.content_type == "text/html"
    page = await response.text()
    assert page.startswith("<!doctype html>") and __version__ in page
    assert sorted(re.findall(r'href="([^"]*)"', page)) == sorted(LINKS)
    assert "<script" not in page and "src=" not in page and "://" not in page and "@import" not in page
    assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")


async def test_index_needs_no_token_and_ignores_a_wrong_one(gateway: TestClient) -> None:
    """GET / reveals nothing about the registry, so it answers everyone alike."""
    plain = await (await gateway.get("/")).read()
    with_token = await (await gateway.get("/", headers={"admin_token": "wrong-token-000000000"})).read()
    assert plain == with_token
