"""A real gateway for scripts/interrupt_audit.py --through-gateway: ``dbgateway serve`` as a child process.

It is started from the venv that runs the audit, on a free port of 127.0.0.1,
with its data directory in a temporary directory, a generated admin token and
the audit's statement limit (``DBGATEWAY_STATEMENT_TIMEOUT``); its log goes to
a file in that directory. The audit registers its scratch database with
AddDatabase, grants every table to one user token, and sends each probe as a
user would: ``POST /GetData`` with a JSON body. What the gateway answers (the
status and the error code) is recorded beside what the backend did. Before
each probe the process is restarted on the same data (``Gateway.restart``), so
that the probe runs on a new backend whose memory is its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import psycopg2.extensions

START_SECONDS = 30.0
"""How long the gateway may take to listen."""


@attrs.frozen
class Answer:
    """What the gateway said to one request."""

    status: int
    """HTTP status (0: no answer before the client's own bound)."""
    error: str | None
    """The error code of an error answer (``query_rejected``, ``query_timeout`` ...)."""
    message: str | None
    """The error's message, cut to its first 300 characters."""
    seconds: float
    """From sending the request to the end of the answer."""

    @property
    def accepted(self) -> bool:
        """The guard let the query through (it ran, whatever happened next)."""
        return self.status != 0 and self.error != "query_rejected"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Gateway:
    """One ``dbgateway serve`` process and the user token the audit sends its probes with."""

    def __init__(self, work_dir: Path, statement_seconds: float) -> None:
        self.work_dir = work_dir
        self.admin_token = secrets.token_urlsafe(24)
        self.user_token = "audit-" + secrets.token_hex(12)
        self.log_path = work_dir / "gateway.log"
        self.environment = {key: value for key, value in os.environ.items() if not key.startswith("DBGATEWAY_")}
        self.environment.update(
            DBGATEWAY_ADMIN_TOKEN=self.admin_token,
            DBGATEWAY_STATEMENT_TIMEOUT=str(statement_seconds),
            DBGATEWAY_LOG_FORMAT="json",
            DBGATEWAY_LOG_LEVEL="warning",
            DBGATEWAY_ROW_LIMIT="1000",
        )
        self._log = self.log_path.open("a")
        self._start()

    def _start(self) -> None:
        self.port = free_port()
        command = [str(Path(sys.executable).parent / "dbgateway"), "serve", "--data-dir", str(self.work_dir / "data"),
                   "--port", str(self.port)]
        self.process = subprocess.Popen(command, env=self.environment, cwd=self.work_dir, stdout=self._log,
                                        stderr=subprocess.STDOUT, text=True)
        self._wait_until_listening()

    def restart(self) -> None:
        """Stop the process and start another on the same data (registry, grants): its pool opens new backends.

        A backend keeps resident much of what earlier statements took, and a statement then reuses it without
        growing: a new backend per probe is what makes its peak memory the probe's own.
        """
        self._stop_process()
        self._start()

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the gateway exited with {self.process.returncode}: {self.log_path.read_text()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return
            time.sleep(0.05)
        raise RuntimeError(f"the gateway did not listen within {START_SECONDS} s")

    def call(self, method: str, path: str, *, params: dict[str, str] | None = None, body: Any = None,
             admin: bool = False, timeout: float = 30.0) -> tuple[int, Any]:
        """One request; (status, parsed JSON body)."""
        query = "?" + urllib.parse.urlencode(params) if params else ""
        headers = {"Accept": "application/json"}
        headers["admin_token" if admin else "user_token"] = self.admin_token if admin else self.user_token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}{query}", data=data, method=method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def register(self, dsn: str, database: str, local_name: str = "audit") -> list[str]:
        """AddDatabase for ``database`` on the server of ``dsn``; grant the user token every table; their names."""
        server = psycopg2.extensions.parse_dsn(dsn)
        params = {
            "local_database_name": local_name, "base_type": "postgres", "database": database,
            "ip": server.get("host", "127.0.0.1"), "port": str(server.get("port", "5432")),
            "username": server.get("user", "postgres"), "password": server.get("password", ""),
        }
        status, body = self.call("PUT", "/Database", params=params, admin=True)
        if status != 200:
            raise RuntimeError(f"AddDatabase answered {status}: {body}")
        status, body = self.call("GET", "/Table/list", admin=True)
        if status != 200:
            raise RuntimeError(f"ListTable answered {status}: {body}")
        for table in body["List"]:
            status, answer = self.call("POST", "/GrantTableAccess", params={"user_token": self.user_token,
                                                                           "local_table_name": table}, admin=True)
            if status != 200:
                raise RuntimeError(f"GrantTableAccess answered {status}: {answer}")
        self.local_name = local_name
        return list(body["List"])

    def get_data(self, query: str, timeout: float) -> Answer:
        """POST /GetData with ``query``; the answer (status 0 if none came within ``timeout``)."""
        started = time.monotonic()
        try:
            status, body = self.call("POST", "/GetData", body={"local_database_name": self.local_name, "query": query},
                                     timeout=timeout)
        except (TimeoutError, urllib.error.URLError, ConnectionError) as error:
            return Answer(0, None, f"no answer: {error}", time.monotonic() - started)
        seconds = time.monotonic() - started
        if status == 200:
            return Answer(status, None, None, seconds)
        error = body.get("error") if isinstance(body, dict) else None
        message = body.get("message") if isinstance(body, dict) else str(body)
        return Answer(status, error, (message or "")[:300], seconds)

    def stop(self) -> None:
        self._stop_process()
        self._log.close()

    def _stop_process(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextlib.contextmanager
def running_gateway(statement_seconds: float) -> Iterator[Gateway]:
    """A gateway in a temporary directory, stopped (and the directory removed) at the end."""
    with tempfile.TemporaryDirectory(prefix="dbgw-audit-") as work_dir:
        gateway = Gateway(Path(work_dir), statement_seconds)
        try:
            yield gateway
        finally:
            gateway.stop()
