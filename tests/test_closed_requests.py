"""A request whose connection closes before its answer ends is 499, not 500: in the log, the metrics, the audit.

A client that goes away (Ctrl-C in curl) while its query runs or while its
answer streams, and a request the gateway's stop cuts at the end of its grace,
are no faults of the gateway: an alert on 5xx must not fire on them. nginx's
status 499 ("client closed request") says what happened; the stop's cut adds
``cut_at_shutdown`` to the request line.
"""

from __future__ import annotations

import asyncio
import json
import signal
import urllib.parse
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from gateway_processes import GatewayProcess
from support import (
    GatewayFactory,
    admin_headers,
    eventually,
    gateway_config,
    grant,
    register_database,
    register_in_process,
    run_sql,
    stalled_getdata,
    user_headers,
    wait_until,
)

from gateway.observability.log_stream import CapturedLog
from gateway.web.app import create_app

TOKEN = "closed-request-token-4b1e"
# Runs for minutes: a three-way cross join of 2000 rows, counted (the statement checks for interrupts).
SLOW_QUERY = "SELECT count(*) AS n FROM public.t a CROSS JOIN public.t b CROSS JOIN public.t c"
# About 60 MB of JSON: streamed, far more than the socket buffers hold.
HUGE_QUERY = "SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 120000) AS g"
DEADLINE = 30.0
"""Seconds to wait for a condition (the gateway noticing the closed connection, a process exiting)."""


SERVED_SQL = "CREATE TABLE public.t AS SELECT g AS id FROM generate_series(1, 2000) g"
"""What the ``served_database`` fixture (conftest.py) holds."""


async def serving(make_gateway: GatewayFactory, served_database: str) -> TestClient:
    client = await make_gateway()
    await register_database(client, "closing", served_database)
    await grant(client, TOKEN, "closing_public_t")
    return client


async def send_getdata(client: TestClient, query: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw connection that asked for ``query`` (the test closes it when it wants)."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    target = "/GetData?" + urllib.parse.urlencode({"local_database_name": "closing", "query": query})
    writer.write(f"GET {target} HTTP/1.1\r\nHost: gateway\r\nuser_token: {TOKEN}\r\n\r\n".encode())
    await writer.drain()
    return reader, writer


def entries(log: str, event: str) -> list[dict[str, Any]]:
    return [entry for entry in map(json.loads, log.splitlines()) if entry.get("event") == event]


def getdata_lines(log: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(request lines, audit entries) of GetData in ``log``."""
    requests = [entry for entry in entries(log, "request") if entry["path"] == "/GetData"]
    audits = [entry for entry in entries(log, "audit") if entry.get("action") == "get_data"]
    return requests, audits


async def metric_lines(client: TestClient) -> list[str]:
    response = await client.get("/metrics", headers=admin_headers())
    assert response.status == 200
    return [line for line in (await response.text()).splitlines() if line.startswith("dbgateway_http_requests_total")]


def running_statements(database: str) -> int:
    """How many statements run in ``database`` now (this check's own session is in another database)."""
    rows = run_sql(None, "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND state = 'active'", (database,))
    return int(rows[0][0])


async def test_a_client_that_leaves_while_its_query_runs_is_499(
    make_gateway: GatewayFactory, served_database: str
) -> None:
    """The client closes its connection while the statement runs: request line, metrics and audit say 499."""
    client = await serving(make_gateway, served_database)
    log = client.log_stream  # type: ignore[attr-defined]
    _, writer = await send_getdata(client, SLOW_QUERY)
    await wait_until(lambda: running_statements(served_database) == 1, DEADLINE, "the slow query runs")
    writer.close()
    await wait_until(lambda: getdata_lines(log.getvalue())[1] != [], DEADLINE, "the request ends")
    requests, audits = getdata_lines(log.getvalue())
    assert [entry["status"] for entry in requests] == [499], requests
    assert "cut_at_shutdown" not in requests[0]
    assert [(entry["status"], entry["outcome"]) for entry in audits] == [(499, "cancelled")], audits
    counted = await metric_lines(client)
    assert any('route="/GetData"' in line and 'status="499"' in line and line.endswith(" 1.0") for line in counted)
    assert not any('status="500"' in line for line in counted), counted
    assert not entries(log.getvalue(), "unexpected_error")
    await wait_until(lambda: running_statements(served_database) == 0, DEADLINE, "the statement is cancelled on the server")


async def test_a_client_that_leaves_a_streamed_answer_is_499(
    make_gateway: GatewayFactory, served_database: str
) -> None:
    """The client reads the head of a large streamed answer, then closes: 499, and no unexpected_error."""
    client = await serving(make_gateway, served_database)
    log = client.log_stream  # type: ignore[attr-defined]
    reader, writer = await send_getdata(client, HUGE_QUERY)
    assert (await reader.readuntil(b"\r\n")).startswith(b"HTTP/1.1 200")
    await reader.readexactly(64 * 1024)  # well into the body: the stream has begun
    writer.close()
    await wait_until(lambda: getdata_lines(log.getvalue())[1] != [], DEADLINE, "the request ends")
    requests, audits = getdata_lines(log.getvalue())
    assert [entry["status"] for entry in requests] == [499], requests
    assert [(entry["status"], entry["outcome"]) for entry in audits] == [(499, "cancelled")], audits
    assert audits[0]["bytes"] > 0
    assert not any('status="500"' in line for line in await metric_lines(client))
    assert not entries(log.getvalue(), "unexpected_error") and not entries(log.getvalue(), "library_log")


async def test_a_one_piece_answer_whose_write_fails_is_499_not_ok(tmp_path: Path, served_database: str) -> None:
    """The connection goes as a small answer is about to be written (its headers' write fails): the audit entry
    says 499 cancelled, never ok, and the request line and the metrics agree, since all three are written from
    one observation made after the answer's last byte."""
    log = CapturedLog()
    app = create_app(gateway_config(tmp_path / "data"), log_stream=log)

    async def connection_gone(request: web.BaseRequest, response: web.StreamResponse) -> None:
        # As a client that left this very moment: the transport closes before a byte of the answer is written.
        if request.path == "/GetData" and request.transport is not None:
            request.transport.close()

    app.on_response_prepare.append(connection_gone)
    async with TestClient(TestServer(app)) as client:
        await register_database(client, "closing", served_database)
        await grant(client, TOKEN, "closing_public_t")
        with pytest.raises(aiohttp.ClientError):
            await client.get(
                "/GetData",
                params={"local_database_name": "closing", "query": "SELECT id FROM public.t WHERE id = 1"},
                headers=user_headers(TOKEN),
            )
        await wait_until(lambda: getdata_lines(log.getvalue())[1] != [], DEADLINE, "the request ends")
        requests, audits = getdata_lines(log.getvalue())
        assert [(entry["status"], entry["outcome"]) for entry in audits] == [(499, "cancelled")], audits
        assert [entry["status"] for entry in requests] == [499], requests
        counted = await metric_lines(client)
        assert any('route="/GetData"' in line and 'status="499"' in line for line in counted), counted
        assert not any('route="/GetData"' in line and 'status="200"' in line for line in counted), counted


def test_a_request_cut_at_shutdown_is_499_and_says_so(tmp_path: Path, served_database: str) -> None:
    """SIGTERM while a client has stopped reading a stream: the cut request is logged 499 with cut_at_shutdown."""
    gateway = GatewayProcess(tmp_path / "data", DBGATEWAY_SHUTDOWN_TIMEOUT="1", DBGATEWAY_CLIENT_STALL_TIMEOUT="300")
    try:
        gateway.wait_until_listening()
        register_in_process(gateway.port, "closing", served_database, TOKEN)

        async def stall_then_stop() -> None:
            async with stalled_getdata(gateway.port, TOKEN, "closing", HUGE_QUERY):
                gateway.process.send_signal(signal.SIGTERM)
                assert await asyncio.to_thread(eventually, lambda: gateway.process.poll() is not None, DEADLINE)

        asyncio.run(stall_then_stop())
    finally:
        code = gateway.stop()
    assert code == 0, gateway.log()[-2000:]
    requests, audits = getdata_lines(gateway.log())
    assert [(entry["status"], entry.get("cut_at_shutdown")) for entry in requests] == [(499, True)], requests
    assert [(entry["status"], entry["outcome"]) for entry in audits] == [(499, "cancelled")], audits
    assert '"status":500' not in gateway.log()
