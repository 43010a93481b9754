"""``workers`` > 1: several ``dbgateway serve`` processes sharing one port, supervised by the first.

Each test runs the real command; the processes are found through ``/proc``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.config import ConfigError, structure_config
from gateway.workers import STARTUP_GRACE_SECONDS
from support import ADMIN_TOKEN, eventually, free_port, start_gateway_process, stop_process, wait_until_listening


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.extend(int(child) for child in (task / "children").read_text().split())
    return sorted(found)


def listening_inodes(port: int) -> set[str]:
    """Socket inodes of TCP sockets listening on ``port`` (state 0A in /proc/net/tcp)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
            inodes.add(fields[9])
    return inodes


def socket_inodes(pid: int) -> set[str]:
    """Inodes of the sockets ``pid`` holds open."""
    inodes = set()
    for descriptor in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(descriptor)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def list_databases(port: int) -> int:
    """The status of ``GET /Database/list`` with the admin token, on a new connection."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/Database/list", headers={"admin_token": ADMIN_TOKEN})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read())["status"] == "success"
        return response.status


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``dbgateway serve`` with ``DBGATEWAY_WORKERS=2``, listening; yields (process, port)."""
    port = free_port()
    process = start_gateway_process(
        tmp_path / "data", port, DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN, DBGATEWAY_WORKERS="2", DBGATEWAY_LOG_LEVEL="warning"
    )
    try:
        wait_until_listening(process, port)
        assert eventually(lambda: len(children(process.pid)) == 2, 5.0)
        yield process, port
    finally:
        if process.poll() is None:
            stop_process(process)


class TestServing:
    def test_every_worker_listens_on_the_port_and_requests_are_served(
        self, two_workers: tuple[subprocess.Popen[str], int]
    ) -> None:
        """Two worker processes each hold a listening socket on the one port; fresh connections get answers."""
        process, port = two_workers
        workers = children(process.pid)
        assert eventually(lambda: all(socket_inodes(pid) & listening_inodes(port) for pid in workers), 5.0)
        assert len(listening_inodes(port)) == 2, listening_inodes(port)
        assert not socket_inodes(process.pid) & listening_inodes(port), "the supervisor itself must not serve"
        assert [list_databases(port) for _ in range(20)] == [200] * 20

    def test_a_worker_that_dies_is_replaced(self, two_workers: tuple[subprocess.Popen[str], int]) -> None:
        """A worker killed while serving is replaced by a new one; the gateway keeps answering."""
        process, port = two_workers
        time.sleep(STARTUP_GRACE_SECONDS + 0.2)  # sooner, a death counts as a failed start
        victim = children(process.pid)[0]
        os.kill(victim, signal.SIGKILL)
        assert eventually(lambda: victim not in children(process.pid) and len(children(process.pid)) == 2, 5.0)
        assert process.poll() is None
        assert [list_databases(port) for _ in range(10)] == [200] * 10


class TestStopping:
    def test_sigterm_stops_every_worker_and_exits_0(self, two_workers: tuple[subprocess.Popen[str], int]) -> None:
        """SIGTERM to the supervisor stops both workers gracefully; it exits 0 within seconds."""
        process, port = two_workers
        workers = children(process.pid)
        started = time.monotonic()
        code, stderr = stop_process(process)
        assert code == 0, stderr
        assert time.monotonic() - started < 8
        assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()


class TestSetting:
    @pytest.mark.parametrize("workers", [0, -1, 65])
    def test_workers_out_of_range_is_a_config_error(self, tmp_path: Path, workers: int) -> None:
        """``workers`` must be 1 to 64; anything else stops start-up naming the setting."""
        with pytest.raises(ConfigError, match="workers"):
            structure_config({"data_dir": str(tmp_path), "workers": workers})

    def test_one_worker_is_the_default(self, tmp_path: Path) -> None:
        """Without the setting the gateway serves from its own process, as before."""
        assert structure_config({"data_dir": str(tmp_path)}).workers == 1
