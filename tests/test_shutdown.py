"""Stopping ``dbgateway serve``: within ``shutdown_timeout`` even while a client has stopped reading a stream,
a non-zero exit when a worker had to be killed, and no worker outliving its supervisor.

Real processes; workers are found through ``/proc``. ``shutdown_timeout`` is short here so the suite stays fast.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest

from gateway.process.workers import KILL_MARGIN_SECONDS
from support import (
    ADMIN_TOKEN,
    eventually,
    free_port,
    register_in_process,
    start_gateway_process,
    wait_until_listening,
)
from gateway_processes import alive, children

SHUTDOWN_TIMEOUT = 2.0
"""The ``shutdown_timeout`` the gateways of this module run with."""

EXIT_MARGIN = 1.5
"""What a process may take beyond its promised bound to be seen gone (interpreter exit, a loaded machine)."""

READER_TOKEN = "shutdown-reader-token-5d1e"

# About 60 MB of JSON: far more than the socket buffers between the gateway and a client that stopped reading.
HUGE_QUERY = "select g, repeat('x', 500) as pad from generate_series(1, 120000) as g"


def start(tmp_path: Path, served_database: str, **settings: str) -> tuple[subprocess.Popen[str], int]:
    """A listening ``dbgateway serve`` with the database registered and READER_TOKEN granted its table."""
    port = free_port()
    process = start_gateway_process(
        tmp_path / "data",
        port,
        DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN,
        DBGATEWAY_SHUTDOWN_TIMEOUT=str(SHUTDOWN_TIMEOUT),
        # Far beyond the test: only the shutdown may end the stalled stream.
        DBGATEWAY_CLIENT_STALL_TIMEOUT="300",
        **settings,
    )
    wait_until_listening(process, port)
    if settings.get("DBGATEWAY_WORKERS", "1") != "1":
        assert eventually(lambda: len(children(process.pid)) == int(settings["DBGATEWAY_WORKERS"]), 5.0)
    process.workers = children(process.pid)  # type: ignore[attr-defined]  # for the clean-up, should they outlive it
    register_in_process(port, "big", served_database, READER_TOKEN)
    return process, port


def stalled_getdata(port: int) -> socket.socket:
    """A client that asks for HUGE_QUERY, reads the status line and stops reading (the socket stays open)."""
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.connect(("127.0.0.1", port))
    target = "/GetData?" + urllib.parse.urlencode({"local_database_name": "big", "query": HUGE_QUERY})
    client.sendall(f"GET {target} HTTP/1.1\r\nHost: gateway\r\nuser_token: {READER_TOKEN}\r\n\r\n".encode())
    client.settimeout(30)
    assert client.recv(64).startswith(b"HTTP/1.1 200")
    return client


def stop_and_time(process: subprocess.Popen[str], deadline: float) -> tuple[int, str, float]:
    """SIGTERM, then wait at most ``deadline`` seconds; (exit code, stderr, seconds taken)."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running {deadline} s after SIGTERM") from None
    return process.returncode, stderr, time.monotonic() - started


class TestShutdownBound:
    @pytest.mark.parametrize("workers", ["1", "2"])
    def test_sigterm_cuts_a_stalled_stream_and_exits_0_within_shutdown_timeout(
        self, tmp_path: Path, served_database: str, processes: list[subprocess.Popen[str]], workers: str
    ) -> None:
        """A client that stopped reading a large GetData does not hold the exit past shutdown_timeout; status 0."""
        process, port = start(tmp_path, served_database, DBGATEWAY_WORKERS=workers)
        processes.append(process)
        with stalled_getdata(port):
            code, stderr, _ = stop_and_time(process, SHUTDOWN_TIMEOUT + EXIT_MARGIN)
        assert code == 0, stderr
        assert "requests_cut_at_shutdown" in stderr
        assert "worker_killed" not in stderr and "shutdown_deadline_passed" not in stderr

    def test_a_worker_that_does_not_stop_is_killed_and_the_exit_status_is_1(
        self, tmp_path: Path, served_database: str, processes: list[subprocess.Popen[str]]
    ) -> None:
        """A worker still running past shutdown_timeout + KILL_MARGIN_SECONDS is SIGKILLed; the gateway exits 1."""
        process, _ = start(tmp_path, served_database, DBGATEWAY_WORKERS="2")
        processes.append(process)
        stuck = children(process.pid)[0]
        os.kill(stuck, signal.SIGSTOP)  # it can no longer act on SIGTERM
        code, stderr, _ = stop_and_time(process, SHUTDOWN_TIMEOUT + KILL_MARGIN_SECONDS + EXIT_MARGIN)
        assert code == 1, stderr
        killed = [json.loads(line) for line in stderr.splitlines() if '"worker_killed"' in line]
        assert [entry["worker_pid"] for entry in killed] == [stuck], stderr
        assert not alive(stuck)


class TestSupervisorDeath:
    def test_workers_end_when_the_supervisor_is_killed(
        self, tmp_path: Path, served_database: str, processes: list[subprocess.Popen[str]]
    ) -> None:
        """SIGKILL to the supervisor: both workers stop within shutdown_timeout, the port is no longer served,
        and the workers' runtime folder is gone."""
        temporary = tmp_path / "tmp"
        temporary.mkdir()
        process, port = start(tmp_path, served_database, DBGATEWAY_WORKERS="2", TMPDIR=str(temporary))
        assert [path.name[: len("dbgateway-")] for path in temporary.iterdir()] == ["dbgateway-"]
        processes.append(process)
        workers = children(process.pid)
        process.kill()
        process.wait()  # not communicate(): workers that outlive it would keep its output pipes open
        assert eventually(lambda: not any(alive(pid) for pid in workers), SHUTDOWN_TIMEOUT + EXIT_MARGIN), [
            pid for pid in workers if alive(pid)
        ]
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        assert list(temporary.iterdir()) == []
