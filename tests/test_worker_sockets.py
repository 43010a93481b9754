"""The port's listening sockets with ``workers`` > 1: no connection is ever routed to a socket nobody accepts on,
and a second gateway cannot start on a port a gateway already serves.

Issue 20, items 2 and 3. Every worker's socket used to be bound before the
forks, so older workers held later workers' sockets open: once a later worker
died, or began its SIGTERM drain, the kernel went on queuing new connections on
its socket, and they hung. A second multi-worker gateway on the same port
started and split the traffic (``SO_REUSEPORT``). Real processes; workers are
found through ``/proc``.
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from gateway.process.workers import STARTUP_GRACE_SECONDS
from gateway_processes import GatewayProcess, alive, children
from support import ADMIN_TOKEN, eventually, register_in_process, start_gateway_process
from test_shutdown import stalled_getdata
from test_workers import WORKER_START_SECONDS, listening_inodes, socket_inodes

NEW_CONNECTIONS = 60
"""New connections made at once after a fault; each must be answered (or, while draining, refused)."""

ANSWER_DEADLINE = 10.0
"""How long a new connection may go without an answer before the test calls it hanging."""

READER_TOKEN = "shutdown-reader-token-5d1e"  # test_shutdown.stalled_getdata's token


def outcome_of_a_new_connection(port: int) -> str:
    """GET /healthz on a new connection: the answer's status, "refused", "reset", "closed", or "no answer"."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_DEADLINE) as client:
            client.sendall(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n")
            head = client.recv(64)
    except ConnectionRefusedError:
        return "refused"
    except ConnectionResetError:
        return "reset"
    except (TimeoutError, socket.timeout):
        return "no answer"
    if not head:
        return "closed"
    return head.split()[1].decode()


def outcomes_of_new_connections(port: int, count: int = NEW_CONNECTIONS) -> list[str]:
    """``count`` new connections made at once, each as ``outcome_of_a_new_connection``."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        return list(pool.map(outcome_of_a_new_connection, [port] * count))


def seconds_running(pid: int) -> float:
    """How long ``pid`` has been running, from /proc."""
    start_ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def newest(pids: list[int]) -> int:
    """The process of ``pids`` started last (the one whose socket older workers used to hold)."""
    return min(pids, key=lambda pid: (seconds_running(pid), -pid))


def start_workers(started: list[GatewayProcess], data_dir: Path, workers: int, **settings: str) -> GatewayProcess:
    """A gateway with ``workers`` workers, each listening on the port; added to ``started`` (to be stopped)."""
    gateway = GatewayProcess(data_dir, DBGATEWAY_WORKERS=str(workers), **settings)
    started.append(gateway)
    gateway.wait_until_listening()
    forked = workers if workers > 1 else 0  # one worker: the process serves by itself
    assert eventually(
        lambda: len(children(gateway.process.pid)) == forked and len(listening_inodes(gateway.port)) == workers,
        WORKER_START_SECONDS,
    ), gateway.log()[-2000:]
    return gateway


@pytest.mark.parametrize("workers", [2, 4])
def test_after_a_worker_is_killed_every_new_connection_is_answered(
    tmp_path: Path, gateways: list[GatewayProcess], workers: int
) -> None:
    """SIGKILL the worker forked last: every new connection gets an answer, from the others and then from its
    replacement; none waits on the dead worker's socket."""
    gateway = start_workers(gateways, tmp_path / "data", workers, DBGATEWAY_LOG_LEVEL="warning")
    supervisor = gateway.process.pid
    # Dying sooner than this after its start (by the supervisor's clock, taken a moment after the fork), a worker
    # counts as failing to start and stops the gateway.
    old_enough = STARTUP_GRACE_SECONDS + 0.5
    assert eventually(lambda: all(seconds_running(pid) > old_enough for pid in children(supervisor)), 30)
    victim = newest(children(supervisor))
    os.kill(victim, signal.SIGKILL)
    assert eventually(lambda: not alive(victim), 10)
    outcomes = outcomes_of_new_connections(gateway.port)
    assert outcomes == ["200"] * NEW_CONNECTIONS, (collections.Counter(outcomes), gateway.log()[-3000:])
    assert eventually(
        lambda: victim not in children(supervisor)
        and len(children(supervisor)) == workers
        and len(listening_inodes(gateway.port)) == workers,
        WORKER_START_SECONDS,
    )
    outcomes = outcomes_of_new_connections(gateway.port)
    assert outcomes == ["200"] * NEW_CONNECTIONS, (collections.Counter(outcomes), gateway.log()[-3000:])
    assert gateway.process.poll() is None


def established_inodes(port: int) -> set[str]:
    """Socket inodes of established TCP connections whose local port is ``port`` (state 01 in /proc/net/tcp)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
            inodes.add(fields[9])
    return inodes


@pytest.mark.parametrize("workers", [2, 4])
def test_connections_made_during_a_sigterm_drain_are_answered_or_refused(
    tmp_path: Path, gateways: list[GatewayProcess], served_database: str, workers: int
) -> None:
    """While every worker drains a stream after SIGTERM, new connections are refused (or answered), never left
    waiting on a socket no worker accepts on any more."""
    gateway = start_workers(
        gateways, tmp_path / "data", workers,
        DBGATEWAY_SHUTDOWN_TIMEOUT="60",  # the drain outlasts the test: only the streams' end finishes it
        DBGATEWAY_CLIENT_STALL_TIMEOUT="300",
        DBGATEWAY_TOKEN_QUERY_LIMIT="10",
    )  # fmt: skip
    register_in_process(gateway.port, "big", served_database, READER_TOKEN)
    streams: list[socket.socket] = []
    try:
        # A stream that stopped being read on every worker, so that every worker drains.
        def every_worker_streams() -> bool:
            streams.append(stalled_getdata(gateway.port))
            serving = established_inodes(gateway.port)
            return all(socket_inodes(pid) & serving for pid in children(gateway.process.pid))

        assert eventually(every_worker_streams, 60)
        gateway.process.send_signal(signal.SIGTERM)

        def every_worker_drains() -> bool:
            stopping = {json.loads(line)["pid"] for line in gateway.log().splitlines() if '"gateway_stopping"' in line}
            return len(stopping) == workers

        assert eventually(every_worker_drains, 30), gateway.log()[-2000:]
        outcomes = outcomes_of_new_connections(gateway.port)
        assert gateway.process.poll() is None, "the drain ended before the connections were tried"
        assert "no answer" not in outcomes, collections.Counter(outcomes)
    finally:
        for stream in streams:
            stream.close()
    assert gateway.stop(timeout=30) == 0, gateway.log()[-2000:]


@pytest.mark.parametrize(("first", "second"), [(1, 4), (4, 1), (4, 4)])
def test_a_second_gateway_on_a_served_port_is_one_line_and_exit_2(
    tmp_path: Path, gateways: list[GatewayProcess], first: int, second: int
) -> None:
    """Whatever the worker counts on either side: the second gateway says the port is in use and exits 2,
    and the first goes on serving the port alone."""
    gateway = start_workers(gateways, tmp_path / "first" / "data", first, DBGATEWAY_LOG_LEVEL="warning")
    served_by = listening_inodes(gateway.port)
    (tmp_path / "second").mkdir()
    other = start_gateway_process(
        tmp_path / "second" / "data", gateway.port, DBGATEWAY_WORKERS=str(second), DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN
    )
    try:
        _, stderr = other.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("the second gateway started on the served port") from None
    finally:
        if other.poll() is None:
            other.send_signal(signal.SIGTERM)
            other.communicate()
    lines = stderr.strip().splitlines()
    assert other.returncode == 2, stderr
    assert len(lines) == 1 and lines[0].startswith("dbgateway: ") and "already in use" in lines[0], stderr
    assert f"127.0.0.1:{gateway.port}" in lines[0]
    assert listening_inodes(gateway.port) == served_by
    assert outcomes_of_new_connections(gateway.port, 10) == ["200"] * 10
