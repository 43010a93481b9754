"""A served database that stops answering while its TCP connections stay open must not hang the worker.

Issue 20, item 1: past the statement limit the gateway cancels the statement on
the server; with libpq's blocking cancel, that cancel hung too on a blackholed
path, holding the whole process (``/healthz`` and every other database) until
the database came back. A client that disconnects from such a query took the
same path. Here the database is registered through a ``HangingProxy`` the test
tells to go silent; a real ``dbgateway serve`` process serves it and a healthy
database beside it.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway_processes import GatewayProcess
from support import ADMIN_TOKEN, eventually, server_parameters
from tcp_proxy import HangingProxy

TOKEN = "hung-database-reader-7c1e"
QUERY = "SELECT id FROM public.t ORDER BY id"
STATEMENT_TIMEOUT = 2.0
"""The gateway's statement_timeout here: the hung query's deadline."""

ANSWER_DEADLINE = 10.0
"""How long a request to the gateway may go unanswered before the test calls the worker stuck."""


SERVED_SQL = "CREATE TABLE public.t (id integer); INSERT INTO public.t VALUES (1), (2)"
"""What the ``served_database`` fixture (conftest.py) holds."""


@pytest.fixture
def worker(tmp_path: Path, served_database: str, proxy: HangingProxy) -> Iterator[GatewayProcess]:
    """One worker serving ``served_database`` twice: ``direct``, and ``proxied`` through ``proxy``."""
    process = GatewayProcess(
        tmp_path / "data",
        DBGATEWAY_STATEMENT_TIMEOUT=str(STATEMENT_TIMEOUT),
        DBGATEWAY_ACQUIRE_TIMEOUT="2",
    )
    try:
        process.wait_until_listening()
        for local_name, port in (("direct", server_parameters()["port"]), ("proxied", str(proxy.port))):
            parameters = {
                **server_parameters(),
                "port": port,
                "local_database_name": local_name,
                "database": served_database,
                "base_type": "postgres",
            }
            assert call(process, "PUT", "/Database", parameters, admin=True)[0] == 200
            params = {"user_token": TOKEN, "local_table_name": f"{local_name}_public_t"}
            assert call(process, "POST", "/GrantTableAccess", params, admin=True)[0] == 200
        yield process
    finally:
        proxy.resume()  # a worker stuck on the hung database gets its answer and can stop
        process.stop()


def call(
    gateway: GatewayProcess,
    method: str,
    path: str,
    params: dict[str, str] | None = None,
    *,
    admin: bool = False,
    timeout: float = ANSWER_DEADLINE,
) -> tuple[int, Any]:
    """(status, parsed body) of one request on a new connection; fails the test if unanswered within ``timeout``."""
    headers = {"Accept": "application/json", **({"admin_token": ADMIN_TOKEN} if admin else {"user_token": TOKEN})}
    query = "?" + urllib.parse.urlencode(params) if params else ""
    request = urllib.request.Request(gateway.url(path + query), method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    except (TimeoutError, socket.timeout, urllib.error.URLError) as error:
        raise AssertionError(f"{method} {path}: no answer within {timeout} s ({error})") from None


def get_data(gateway: GatewayProcess, local_database_name: str, *, timeout: float = ANSWER_DEADLINE) -> tuple[int, Any]:
    params = {"local_database_name": local_database_name, "query": QUERY}
    return call(gateway, "GET", "/GetData", params, timeout=timeout)


def events(gateway: GatewayProcess, event: str) -> list[dict[str, Any]]:
    """The gateway's log entries named ``event``, oldest first."""
    found = []
    for line in gateway.log().splitlines():
        if f'"{event}"' in line:
            entry = json.loads(line)
            if entry.get("event") == event:
                found.append(entry)
    return found


def assert_the_worker_serves_others(gateway: GatewayProcess) -> None:
    """/healthz and a query to the healthy database are answered while the other database hangs."""
    assert call(gateway, "GET", "/healthz")[0] == 200
    status, body = get_data(gateway, "direct")
    assert status == 200, body


class TestHungDatabase:
    def test_a_statement_past_its_limit_on_a_hung_database_holds_nothing_else(
        self, worker: GatewayProcess, proxy: HangingProxy
    ) -> None:
        """The hung query ends with 504 query_timeout; meanwhile and after, the worker answers everything else;
        its connection is discarded and its backend counted until the database is back."""
        assert get_data(worker, "proxied")[0] == 200  # the pool holds a connection through the proxy
        proxy.hang()
        outcome: list[tuple[int, Any]] = []
        hung = threading.Thread(target=lambda: outcome.append(get_data(worker, "proxied", timeout=60)))
        hung.start()
        try:
            # Past the statement limit the gateway tries to cancel: a new connection reaches the silent path.
            assert eventually(lambda: proxy.connections_while_hung >= 1, 30), "the gateway never tried to cancel"
            assert_the_worker_serves_others(worker)
            hung.join(30)
            assert not hung.is_alive(), "the hung query got no answer"
            status, body = outcome[0]
            assert (status, body["error"]) == (504, "query_timeout"), body
            assert_the_worker_serves_others(worker)
            assert events(worker, "postgres_cancel_failed")
            assert [entry["reason"] for entry in events(worker, "runaway_backend")] == ["statement_time_limit"]
        finally:
            proxy.resume()
            hung.join(60)
        # The database is back: served again, and the discarded backend's slot is freed once it is gone.
        assert eventually(lambda: get_data(worker, "proxied")[0] == 200, 30)
        assert eventually(lambda: bool(events(worker, "runaway_backend_ended")), 30)

    def test_a_client_that_leaves_a_query_on_a_hung_database_holds_nothing_else(
        self, worker: GatewayProcess, proxy: HangingProxy
    ) -> None:
        """A client that disconnects while its statement hangs: the worker cancels without waiting on the
        database, keeps answering, and discards the connection once the cancel's deadline passes."""
        assert get_data(worker, "proxied")[0] == 200
        proxy.hang()
        client = socket.create_connection(("127.0.0.1", worker.port))
        try:
            target = "/GetData?" + urllib.parse.urlencode({"local_database_name": "proxied", "query": QUERY})
            client.sendall(f"GET {target} HTTP/1.1\r\nHost: gateway\r\nuser_token: {TOKEN}\r\n\r\n".encode())
            assert eventually(lambda: proxy.held_from_clients > 0, 30), "the statement never left the gateway"
        finally:
            client.close()
        assert eventually(lambda: proxy.connections_while_hung >= 1, 30), "the gateway never tried to cancel"
        assert_the_worker_serves_others(worker)
        assert eventually(lambda: bool(events(worker, "runaway_backend")), 30)
        assert [entry["reason"] for entry in events(worker, "runaway_backend")] == ["request_cancelled"]
        assert_the_worker_serves_others(worker)
