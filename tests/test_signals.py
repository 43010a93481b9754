"""SIGHUP is a graceful stop, as SIGTERM is: running answers are finished, it is logged, the exit status is 0.

Issue 20: SIGHUP was undocumented and killed at once; with one worker a running
stream was cut and nothing was logged. Real processes, a stream read slowly
across the signal.
"""

from __future__ import annotations

import http.client
import json
import signal
import socket
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from gateway_processes import GatewayProcess
from support import eventually, register_in_process
from test_workers import WORKER_START_SECONDS, children, listening_inodes

TOKEN = "signal-reader-token-3b9d"
ROWS = 40000
# About 9 MB of JSON: more than the socket buffers between the gateway and a client that pauses reading.
QUERY = f"select g, repeat('x', 200) as pad from generate_series(1, {ROWS}) as g"


def log_entries(gateway: GatewayProcess, event: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gateway.log().splitlines() if f'"event":"{event}"' in line]


def paused_stream(port: int) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """A GetData of QUERY whose head was read, and nothing more yet (a small receive buffer keeps it running)."""
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.settimeout(30)
    client.connect(("127.0.0.1", port))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.sock = client
    target = "/GetData?" + urllib.parse.urlencode({"local_database_name": "big", "query": QUERY})
    connection.request("GET", target, headers={"user_token": TOKEN})
    response = connection.getresponse()
    assert response.status == 200
    return connection, response


@pytest.mark.parametrize("workers", [1, 2])
def test_sighup_finishes_running_answers_logs_and_exits_0(
    tmp_path: Path, gateways: list[GatewayProcess], served_database: str, workers: int
) -> None:
    """SIGHUP (and a second signal during the drain) let a stream being read finish whole; exit status 0."""
    gateway = GatewayProcess(
        tmp_path / "data",
        DBGATEWAY_WORKERS=str(workers),
        DBGATEWAY_SHUTDOWN_TIMEOUT="60",  # far beyond the test: the stream must end because it was read
        DBGATEWAY_CLIENT_STALL_TIMEOUT="300",
    )
    gateways.append(gateway)
    gateway.wait_until_listening()
    forked = workers if workers > 1 else 0
    assert eventually(
        lambda: len(children(gateway.process.pid)) == forked and len(listening_inodes(gateway.port)) == workers,
        WORKER_START_SECONDS,
    )
    register_in_process(gateway.port, "big", served_database, TOKEN)
    connection, response = paused_stream(gateway.port)
    try:
        gateway.process.send_signal(signal.SIGHUP)
        assert eventually(lambda: len({e["pid"] for e in log_entries(gateway, "gateway_stopping")}) == workers, 30), (
            gateway.log()[-2000:]
        )
        gateway.process.send_signal(signal.SIGHUP)  # a repeat changes nothing
        assert eventually(lambda: bool(log_entries(gateway, "stop_signal_ignored")), 30), gateway.log()[-2000:]
        # Read until the gateway wrote the answer's last byte (its audit entry says so), then pause again: what
        # the process still holds must reach the client although it is about to exit.
        body = bytearray()
        while not [entry for entry in log_entries(gateway, "audit") if entry["action"] == "get_data"]:
            chunk = response.read(65536)
            assert chunk, "the answer ended before the gateway finished it"
            body += chunk
        assert eventually(
            lambda: gateway.process.poll() is not None or bool(log_entries(gateway, "answers_still_sending")), 30
        )
        body += response.read()
        answer = json.loads(body)
    finally:
        connection.close()
    assert answer[0]["row_count"] == ROWS and len(answer[0]["data"]) == ROWS
    gateway.process.wait(timeout=30)
    assert gateway.process.returncode == 0, gateway.log()[-2000:]
    stopping = log_entries(gateway, "workers_stopping" if workers > 1 else "gateway_stopping")
    assert [entry["signal"] for entry in stopping] == ["SIGHUP"], stopping
