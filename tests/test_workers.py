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
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from gateway.settings.config import ConfigError, GatewayConfig, structure_config
from gateway.process.workers import KILL_MARGIN_SECONDS, STARTUP_GRACE_SECONDS
from gateway_processes import children
from support import ADMIN_TOKEN, eventually, free_port, start_gateway_process, stop_process, wait_until_listening


STOP_DEADLINE_SECONDS = attrs.fields(GatewayConfig).shutdown_timeout.default + KILL_MARGIN_SECONDS
"""The longest SIGTERM may take by the settings: the default shutdown_timeout, then the supervisor's kill margin."""

WORKER_START_SECONDS = 30.0
"""How long a worker may take to start and listen: a deadline to wait for, not a speed asserted (a loaded
machine has taken more than 5 s to import and build a worker's app)."""


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
        assert eventually(lambda: len(children(process.pid)) == 2, WORKER_START_SECONDS)
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

        def every_worker_listens() -> bool:
            return all(socket_inodes(pid) & listening_inodes(port) for pid in workers)

        assert eventually(every_worker_listens, WORKER_START_SECONDS)
        assert len(listening_inodes(port)) == 2, listening_inodes(port)
        assert not socket_inodes(process.pid) & listening_inodes(port), "the supervisor itself must not serve"
        assert [list_databases(port) for _ in range(20)] == [200] * 20

    def test_a_worker_that_dies_is_replaced(self, two_workers: tuple[subprocess.Popen[str], int]) -> None:
        """A worker killed while serving is replaced by a new one; the gateway keeps answering."""
        process, port = two_workers
        time.sleep(STARTUP_GRACE_SECONDS + 0.2)  # sooner, a death counts as a failed start
        victim = children(process.pid)[0]
        os.kill(victim, signal.SIGKILL)
        assert eventually(
            lambda: victim not in children(process.pid) and len(children(process.pid)) == 2, WORKER_START_SECONDS
        )
        assert process.poll() is None
        assert [list_databases(port) for _ in range(10)] == [200] * 10


class TestStopping:
    def test_sigterm_stops_every_worker_and_exits_0(self, two_workers: tuple[subprocess.Popen[str], int]) -> None:
        """SIGTERM to the supervisor stops both workers gracefully; it exits 0 within seconds."""
        process, port = two_workers
        workers = children(process.pid)
        code, stderr = stop_process(process, timeout=STOP_DEADLINE_SECONDS)
        assert code == 0, stderr
        assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()


LOG_BUFFER_SIZE = 10


@pytest.fixture
def logging_workers(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """Two workers logging at info into buffers of LOG_BUFFER_SIZE entries, instance "gw-test"; (process, port)."""
    port = free_port()
    process = start_gateway_process(
        tmp_path / "data", port, DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN, DBGATEWAY_WORKERS="2",
        DBGATEWAY_LOG_BUFFER_SIZE=str(LOG_BUFFER_SIZE), DBGATEWAY_INSTANCE="gw-test",
    )  # fmt: skip
    try:
        wait_until_listening(process, port)
        # Both workers serving (each listens once its app, log socket included, is up), not just the first.
        assert eventually(lambda: len(listening_inodes(port)) == 2, WORKER_START_SECONDS)
        yield process, port
    finally:
        for pid in children(process.pid) if process.poll() is None else []:
            os.kill(pid, signal.SIGCONT)  # a test may have stopped one
        if process.poll() is None:
            stop_process(process)


def read_logs(port: int, timeout: float = 10, **params: str) -> list[dict[str, object]]:
    """GET /Logs/ on a new connection, parsed into entries."""
    query = "?" + urllib.parse.urlencode(params) if params else ""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/Logs/{query}", headers={"admin_token": ADMIN_TOKEN})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = json.loads(response.read())
    return [json.loads(line) for line in body[0]["logs"].split("\n") if line]


class TestLogs:
    def test_logs_merge_every_worker_in_time_order_whichever_answers(
        self, logging_workers: tuple[subprocess.Popen[str], int]
    ) -> None:
        """Every /Logs/ answer holds entries of both workers, oldest first, each with pid and instance, bounded."""
        process, port = logging_workers
        workers = set(children(process.pid))
        answers: list[list[dict[str, object]]] = []

        def both_workers_in_every_answer() -> bool:
            list_databases(port)
            answers.append(read_logs(port, event="request"))
            return len(answers) >= 6 and all({entry["pid"] for entry in answer} == workers for answer in answers[-6:])

        assert eventually(both_workers_in_every_answer, 20.0), [{e["pid"] for e in answer} for answer in answers]
        for answer in answers:
            assert len(answer) <= LOG_BUFFER_SIZE
            stamps = [str(entry["timestamp"]) for entry in answer]
            assert stamps == sorted(stamps)
            assert {entry["instance"] for entry in answer} == {"gw-test"}
        assert len(read_logs(port, limit="3")) == 3
        # Both buffers are full by now: the merged answer still holds at most one buffer's worth, the newest.
        assert len(read_logs(port)) == LOG_BUFFER_SIZE

    def test_a_worker_that_does_not_answer_is_named_and_the_rest_answered(
        self, logging_workers: tuple[subprocess.Popen[str], int]
    ) -> None:
        """With one worker stopped, the other answers within seconds, naming the stopped one in logs_incomplete."""
        process, port = logging_workers
        stopped, running = children(process.pid)
        os.kill(stopped, signal.SIGSTOP)
        try:
            answer: list[dict[str, object]] = []

            def answered_by_the_running_worker() -> bool:
                try:
                    answer[:] = read_logs(port, timeout=5, level="warning")
                except OSError:  # the kernel handed the connection to the stopped worker
                    return False
                return True

            assert eventually(answered_by_the_running_worker, 30.0)
        finally:
            os.kill(stopped, signal.SIGCONT)
        warnings = [entry for entry in answer if entry["event"] == "logs_incomplete"]
        assert warnings and warnings[-1]["pid"] == running, answer
        assert str(stopped) in warnings[-1]["missing_workers"]  # type: ignore[operator]


class TestSetting:
    @pytest.mark.parametrize("workers", [0, -1, 65])
    def test_workers_out_of_range_is_a_config_error(self, tmp_path: Path, workers: int) -> None:
        """``workers`` must be 1 to 64; anything else stops start-up naming the setting."""
        with pytest.raises(ConfigError, match="workers"):
            structure_config({"data_dir": str(tmp_path), "workers": workers})

    def test_one_worker_is_the_default(self, tmp_path: Path) -> None:
        """Without the setting the gateway serves from its own process, as before."""
        assert structure_config({"data_dir": str(tmp_path)}).workers == 1
