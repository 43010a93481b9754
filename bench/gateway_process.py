"""A real ``dbgateway serve`` for the benchmark: started on a free port, given the database, stopped after.

The process runs with the embedded defaults except what a 1 000 000-row
result needs (``row_limit``) and what the run chooses (``workers``, one per
CPU unless told). Its log
goes to a file in the run's temporary folder (a pipe nobody reads would block
it). Memory is read from ``/proc/<pid>/status`` of the gateway and of its
worker processes, if it has any; CPU time from ``/proc/<pid>/stat`` (``cpu_seconds``).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench.dataset import Server

LOCAL_DATABASE = "bench"
"""The local name the benchmark registers its scratch database under."""

POOL_MAX_SIZE = 10
"""The gateway's default ``pool_max_size``; the pass-through's pool is as large."""

LOCAL_TABLE = "bench_public_bench_rows"
"""The default local name AddDatabase gives ``public.bench_rows`` of ``bench``."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _status_kib(pid: int, field: str) -> int:
    """A ``kB`` field of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/{pid}/status has no {field}")


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time the processes ``pids`` have used so far (``/proc/<pid>/stat``), summed."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime: the 14th and 15th fields of the whole line
    return total / _CLOCK_TICKS


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log_path: Path, timeout: float = 20.0) -> None:
    """Return once ``port`` accepts connections; raise if ``process`` exits or ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}; see {log_path}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listened on port {port} within {timeout} s; see {log_path}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if ``process`` has not exited after 15 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class PassThroughProcess:
    """``python -m bench.passthrough`` on a free port: the bare aiohttp + aiopg + pglast + orjson contender."""

    def __init__(self, work_dir: Path, dsn: str) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = work_dir / "passthrough.log"
        command = [
            sys.executable, "-m", "bench.passthrough", "--port", str(self.port), "--dsn", dsn,
            "--pool-size", str(POOL_MAX_SIZE),
        ]  # fmt: skip
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command, cwd=Path(__file__).resolve().parent.parent, stdout=log, stderr=log
            )
        wait_until_listening(self._process, self.port, self.log_path)

    def pids(self) -> list[int]:
        """Its one process."""
        return [self._process.pid]

    def stop(self) -> None:
        stop_process(self._process)


class GatewayProcess:
    """One ``dbgateway serve`` subprocess with its own data folder, admin token and user token."""

    def __init__(self, work_dir: Path, *, row_limit: int, workers: int) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.admin_token = secrets.token_urlsafe(24)
        self.user_token = secrets.token_urlsafe(24)
        self.work_dir = work_dir
        work_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = work_dir / "gateway.log"
        environment = {key: value for key, value in os.environ.items() if not key.startswith("DBGATEWAY_")}
        environment["DBGATEWAY_ADMIN_TOKEN"] = self.admin_token
        environment["DBGATEWAY_ROW_LIMIT"] = str(row_limit)
        if workers != 1:  # unset is the default, 1
            environment["DBGATEWAY_WORKERS"] = str(workers)
        # The run has one token: let it use the whole pool, as the pass-through does (the default is half).
        environment["DBGATEWAY_TOKEN_QUERY_LIMIT"] = str(POOL_MAX_SIZE)
        command = [
            str(Path(sys.executable).parent / "dbgateway"), "serve",
            "--data-dir", str(work_dir / "data"), "--port", str(self.port),
        ]  # fmt: skip
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(command, env=environment, cwd=work_dir, stdout=log, stderr=log)
        self._wait_until_listening()

    @property
    def pid(self) -> int:
        return self._process.pid

    def _wait_until_listening(self) -> None:
        wait_until_listening(self._process, self.port, self.log_path)

    def _call(self, method: str, path: str, params: dict[str, str], headers: dict[str, str]) -> Any:
        url = f"{self.base_url}{path}?{urllib.parse.urlencode(params)}"
        request = urllib.request.Request(url, method=method, headers={"Accept": "application/json", **headers})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"{method} {path} answered {error.code}: {error.read()[:500]!r}") from None

    def register(self, server: Server, database: str) -> None:
        """AddDatabase for the scratch database, then grant the run's user token its table."""
        self._call(
            "PUT",
            "/Database",
            {
                "local_database_name": LOCAL_DATABASE, "ip": server.host, "port": str(server.port),
                "database": database, "username": server.user, "password": server.password,
                "base_type": "postgres",
            },
            {"admin_token": self.admin_token},
        )  # fmt: skip
        self._call(
            "POST",
            "/GrantTableAccess/",
            {"user_token": self.user_token, "local_table_name": LOCAL_TABLE},
            {"admin_token": self.admin_token},
        )

    def grant(self, user_token: str, **limits: str) -> None:
        """GrantTableAccess of the benchmark table to ``user_token``, narrowed by ``limits`` (issue 22)."""
        self._call(
            "POST", "/GrantTableAccess/", {"user_token": user_token, "local_table_name": LOCAL_TABLE, **limits},
            {"admin_token": self.admin_token},
        )  # fmt: skip

    def get_data(self, query: str, user_token: str | None = None) -> Any:
        """One GetData answer, parsed (for warming up and checking; the measurements use other clients)."""
        return self._call(
            "GET", "/GetData", {"local_database_name": LOCAL_DATABASE, "query": query},
            {"user_token": user_token or self.user_token},
        )  # fmt: skip

    def pids(self) -> list[int]:
        """The gateway process and its worker processes, if any."""
        children: list[int] = []
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            text = (task / "children").read_text().split()
            children.extend(int(pid) for pid in text)
        return [self.pid, *children]

    def resident_kib(self) -> int:
        """Resident memory now, summed over the gateway's processes."""
        return sum(_status_kib(pid, "VmRSS") for pid in self.pids())

    def reset_peaks(self) -> bool:
        """Reset each process's peak resident size to its current one; False if the kernel refused."""
        try:
            for pid in self.pids():
                Path(f"/proc/{pid}/clear_refs").write_text("5")
        except OSError:
            return False
        return True

    def peak_resident_kib(self) -> int:
        """Peak resident memory (``VmHWM``) since the last reset, summed over the gateway's processes."""
        return sum(_status_kib(pid, "VmHWM") for pid in self.pids())

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if the gateway has not exited after 15 s."""
        stop_process(self._process)
