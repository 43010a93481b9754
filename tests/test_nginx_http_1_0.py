"""Issue 20, 4 as it was found: GetData through nginx with its default upstream protocol (HTTP/1.0).

nginx forwards to the gateway over HTTP/1.0 unless told ``proxy_http_version
1.1``; a streamed answer then ends when the gateway closes the connection, and
nginx ends its own (chunked) answer to the client normally whether the body
was whole or cut. Whether a client can still tell depends on the body alone.
Skipped when nginx is not installed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import orjson
import pytest
from aiohttp.test_utils import TestClient
from support import GatewayFactory, free_port, wait_until_listening
from test_getdata_formats import FORMATS_SQL  # noqa: F401  (conftest's formats_database fixture reads it here)
from test_getdata_formats import TOKEN, open_formats
from test_nginx_config import needs_nginx, nginx
from test_whole_or_cut import BIG_QUERY, getdata_target, kill_backends

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://127.0.0.1:{upstream};   # proxy_http_version left at its default, 1.0
            proxy_buffering off;
        }}
    }}
}}
"""


@pytest.fixture
def start_nginx(tmp_path: Path) -> Iterator[object]:
    """``start(upstream_port) -> port``: an nginx in front of a gateway, stopped after the test."""
    started: list[subprocess.Popen[str]] = []

    def start(upstream: int) -> int:
        assert nginx is not None
        folder, port = tmp_path / "nginx", free_port()
        folder.mkdir()
        (folder / "nginx.conf").write_text(NGINX_CONF.format(folder=folder, port=port, upstream=upstream))
        process = subprocess.Popen([nginx, "-p", str(folder), "-c", str(folder / "nginx.conf")], text=True)
        started.append(process)
        wait_until_listening(process, port)
        return port

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=10)


async def through_nginx(port: int, query: str, chosen: str, *, meanwhile: object = None) -> tuple[int, bytes, bool]:
    """(status, body, whether the client saw the body end properly) of GetData through nginx, as HTTP/1.1."""
    body = bytearray()
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{port}" + getdata_target(query, chosen)
        async with session.get(url, headers={"User-Token": TOKEN}) as response:
            try:
                async for chunk in response.content.iter_chunked(1 << 16):
                    body += chunk
                    if meanwhile is not None and len(body) >= 1 << 20:
                        await meanwhile()  # type: ignore[operator]
                        meanwhile = None
            except aiohttp.ClientPayloadError:
                return response.status, bytes(body), False
            return response.status, bytes(body), True


@needs_nginx
class TestBehindNginxDefaults:
    async def test_a_large_csv_answer_is_refused_not_cut_unseen(
        self, make_gateway: GatewayFactory, formats_database: str, start_nginx: object
    ) -> None:
        """The issue's case: a cut CSV stream reached the client as a normal 200. Now: 426 through nginx."""
        client: TestClient = await open_formats(await make_gateway(row_limit=2_000_000), formats_database)
        port = start_nginx(client.port)  # type: ignore[operator]
        status, body, _ = await through_nginx(port, BIG_QUERY.format(rows=1_000_000), "csv")
        assert status == 426, body[:200]
        assert orjson.loads(body)["error"] == "upgrade_required"
        status, body, ended = await through_nginx(port, BIG_QUERY.format(rows=1000), "csv")
        assert (status, ended, body.count(b"\r\n")) == (200, True, 1001)  # small: whole, with its length

    @pytest.mark.parametrize("chosen", ["json", "ndjson"])
    async def test_a_cut_stream_shows_in_the_body(
        self, make_gateway: GatewayFactory, formats_database: str, start_nginx: object, chosen: str
    ) -> None:
        """nginx ends the client's answer normally; the body itself shows the cut."""
        client: TestClient = await open_formats(await make_gateway(row_limit=2_000_000), formats_database)
        port = start_nginx(client.port)  # type: ignore[operator]
        query = BIG_QUERY.format(rows=1_500_000)
        status, body, _ = await through_nginx(port, query, chosen, meanwhile=kill_backends(formats_database))
        assert status == 200 and len(body) >= 1 << 20
        if chosen == "json":
            with pytest.raises(orjson.JSONDecodeError):
                orjson.loads(body)
        else:
            assert b'"row_count"' not in body.rstrip(b"\n").rsplit(b"\n", 1)[-1]
