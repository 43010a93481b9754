"""Helpers the test modules share: the server under test, direct SQL, and gateway calls.

``DBGATEWAY_TEST_DSN`` points the suite at another server (libpq URL or
key=value string, default ``postgresql://postgres@127.0.0.1:5432/postgres``).
The account must be allowed to create databases.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg2
import psycopg2.extensions
from aiohttp.test_utils import TestClient

from gateway.settings.config import GatewayConfig, structure_config
from gateway.web.keys import CONFIG

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
ADMIN_TOKEN = "test-admin-token-0123456789"


def dsn_under_test() -> str:
    """The libpq DSN of the PostgreSQL server the suite uses."""
    return os.environ.get("DBGATEWAY_TEST_DSN", DEFAULT_DSN)


def server_parameters() -> dict[str, Any]:
    """host, port, user, password of the test server, as AddDatabase wants them."""
    parameters = psycopg2.extensions.parse_dsn(dsn_under_test())
    return {
        "ip": parameters.get("host", "127.0.0.1"),
        "port": str(parameters.get("port", "5432")),
        "username": parameters.get("user", "postgres"),
        "password": parameters.get("password", ""),
    }


def connect(database: str | None = None) -> psycopg2.extensions.connection:
    """An autocommit psycopg2 connection to the test server (to ``database`` if given)."""
    parameters = psycopg2.extensions.parse_dsn(dsn_under_test())
    if database is not None:
        parameters["dbname"] = database
    connection = psycopg2.connect(**parameters)
    connection.autocommit = True
    return connection


def run_sql(database: str | None, sql: str, parameters: Any = None) -> list[tuple[Any, ...]]:
    """Run SQL directly (not through the gateway), autocommit, and return its rows, if any."""
    connection = connect(database)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, parameters)
            return cursor.fetchall() if cursor.description else []
    finally:
        connection.close()


def gateway_config(data_dir: Path, **settings: Any) -> GatewayConfig:
    return structure_config({"data_dir": str(data_dir), "admin_token": ADMIN_TOKEN, **settings})


GatewayFactory = Callable[..., Awaitable[TestClient]]


def admin_headers(**extra: str) -> dict[str, str]:
    return {"admin_token": ADMIN_TOKEN, "Accept": "application/json", **extra}


def user_headers(token: str) -> dict[str, str]:
    return {"user_token": token, "Accept": "application/json"}


async def register_database(client: TestClient, local_name: str, database: str, **overrides: str) -> Any:
    """AddDatabase for a database on the test server; returns the parsed JSON answer."""
    parameters = {**server_parameters(), "local_database_name": local_name, "database": database, "base_type": "postgres"}
    parameters.update(overrides)
    response = await client.put("/Database", params=parameters, headers=admin_headers())
    assert response.status == 200, await response.text()
    return await response.json()


async def grant(client: TestClient, user_token: str, local_table_name: str, **inputs: str) -> None:
    response = await client.post(
        "/GrantTableAccess/",
        params={"user_token": user_token, "local_table_name": local_table_name, **inputs},
        headers=admin_headers(),
    )
    assert response.status == 200, await response.text()


def message_template(message: str, *names: str) -> str:
    """``message`` with each of ``names`` replaced by ``<>``: answers that must not tell names apart compare equal."""
    for name in sorted(names, key=len, reverse=True):
        message = message.replace(name, "<>")
    return message


async def error_of(response: Any) -> dict[str, Any]:
    """The JSON error body, after checking it has the contract's shape."""
    assert response.content_type == "application/json", response.content_type
    body = await response.json()
    assert set(body) == {"status", "error", "message"}, body
    assert body["status"] == "error"
    assert body["message"]
    return body


# -- added for the HTTP suites (databases, tables, grants, logs, registry, conventions, cli) ----------

DISTINCTIVE_PASSWORD = "pw-Zebra-913"
"""A password no log line or answer may ever show (trust authentication accepts any password)."""


def database_parameters(local_name: str, database: str, **overrides: Any) -> dict[str, Any]:
    """The AddDatabase parameters for ``database`` on the test server, under ``local_name``."""
    parameters: dict[str, Any] = {
        **server_parameters(),
        "local_database_name": local_name,
        "database": database,
        "base_type": "postgres",
    }
    parameters.update(overrides)
    return parameters


def create_database(setup_sql: str | None = None) -> str:
    """A new scratch database ``dbgw_test_<hex>``, filled by ``setup_sql`` if given; ``drop_database`` drops it."""
    name = f"dbgw_test_{secrets.token_hex(6)}"
    run_sql(None, f'CREATE DATABASE "{name}"')
    if setup_sql:
        run_sql(name, setup_sql)
    return name


def drop_database(name: str) -> None:
    run_sql(None, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def database_from(setup_sql: str | None = None) -> Iterator[str]:
    """A scratch database filled by ``setup_sql`` for the ``with`` block, dropped (with its sessions) after it."""
    name = create_database(setup_sql)
    try:
        yield name
    finally:
        drop_database(name)


def registry_path(client: TestClient) -> Path:
    """The registry file of the gateway behind ``client``."""
    return client.app[CONFIG].registry_path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def success_of(response: Any) -> Any:
    """The JSON body of a 200 answer, after checking status and content type."""
    text = await response.text()
    assert response.status == 200, text
    assert response.content_type == "application/json", response.content_type
    return await response.json()


async def listed(client: TestClient, path: str, headers: dict[str, str], **params: str) -> list[str]:
    """The ``List`` of a successful list answer (``/Database/list`` or ``/Table/list``)."""
    body = await success_of(await client.get(path, headers=headers, params=params))
    assert set(body) == {"status", "List"}, body
    assert body["status"] == "success"
    return body["List"]


async def all_table_names(client: TestClient, **params: str) -> list[str]:
    """Every local table name, as the admin sees it on ``/Table/list``."""
    return await listed(client, "/Table/list", admin_headers(), **params)


async def granted_names(client: TestClient, user_token: str, **params: str) -> list[str]:
    """The local table names ListTable answers for ``user_token``."""
    return await listed(client, "/Database/list", user_headers(user_token), **params)


async def rename_table(client: TestClient, body: dict[str, Any], **params: str) -> Any:
    """ChangeLocalTableName with a JSON body (and optional query parameters); returns the raw response."""
    return await client.post("/Table", json=body, params=params, headers=admin_headers())


async def table_data(client: TestClient, user_token: str, **params: str) -> Any:
    """GetTableData for ``user_token``; returns the raw response."""
    return await client.get("/Table", params=params, headers=user_headers(user_token))


async def read_logs(client: TestClient, **params: str) -> list[dict[str, Any]]:
    """The Logs answer parsed into its entries (oldest first)."""
    body = await success_of(await client.get("/Logs/", params=params, headers=admin_headers()))
    assert isinstance(body, list) and len(body) == 1 and set(body[0]) == {"status", "logs"}, body
    text = body[0]["logs"]
    return [json.loads(line) for line in text.split("\n") if line]


# -- the ``dbgateway`` command as a separate process ----------------------------------------------------

def gateway_command() -> str:
    """The venv's ``dbgateway`` script (beside the running interpreter)."""
    return str(Path(sys.executable).parent / "dbgateway")


COMMAND_TIMEOUT = 30.0
"""How long one ``dbgateway`` command (not ``serve``) may take in a test."""


def run_command(*arguments: str, cwd: Path | None = None, **settings: str) -> subprocess.CompletedProcess[str]:
    """Run ``dbgateway`` to completion in a clean environment plus ``settings``; its output as text."""
    return subprocess.run(
        [gateway_command(), *arguments],
        env=process_environment(**settings),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )


def message_lines(stderr: str) -> list[str]:
    """The lines of a ``dbgateway`` command's stderr that are not JSON log entries (those may tell of other
    matters, as a driver installed beside that fails to load, and come before a refusal's one line)."""
    return [line for line in stderr.strip().splitlines() if not line.startswith("{")]


def process_environment(**settings: str) -> dict[str, str]:
    """This process's environment without any ``DBGATEWAY_*`` variable, plus ``settings``."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("DBGATEWAY_")}
    environment.update(settings)
    return environment


def start_gateway_process(data_dir: Path, port: int, **settings: str) -> subprocess.Popen[str]:
    """``dbgateway serve --data-dir data_dir --port port`` with a clean environment plus ``settings``."""
    return subprocess.Popen(
        [gateway_command(), "serve", "--data-dir", str(data_dir), "--port", str(port)],
        env=process_environment(**settings),
        cwd=data_dir.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_listening(process: subprocess.Popen[str], port: int, timeout: float = 15.0) -> None:
    """Return once ``port`` accepts connections; fail if the process exits or the time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _, stderr = process.communicate()
            raise AssertionError(f"the gateway exited with {process.returncode} before listening: {stderr}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"the gateway did not listen on port {port} within {timeout} s")


def stop_process(process: subprocess.Popen[str], timeout: float = 10.0) -> tuple[int, str]:
    """SIGTERM, then wait; returns (exit code, stderr). Kills the process if it does not exit in time."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"the gateway did not exit within {timeout} s of SIGTERM") from None
    return process.returncode, stderr


def call_process(
    port: int, method: str, path: str, *, params: dict[str, str] | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """One request to a gateway process on a new connection; (status, parsed JSON body)."""
    query = "?" + urllib.parse.urlencode(params) if params else ""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}{query}", method=method, headers={"Accept": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def register_in_process(port: int, local_name: str, database: str, user_token: str) -> None:
    """AddDatabase on a gateway process, then grant ``user_token`` every table it registered."""
    status, body = call_process(
        port, "PUT", "/Database", params=database_parameters(local_name, database), headers={"admin_token": ADMIN_TOKEN}
    )
    assert status == 200, body
    status, body = call_process(port, "GET", "/Table/list", headers={"admin_token": ADMIN_TOKEN})
    assert status == 200, body
    for table in body["List"]:
        params = {"user_token": user_token, "local_table_name": table}
        status, answer = call_process(port, "POST", "/GrantTableAccess", params=params, headers={"admin_token": ADMIN_TOKEN})
        assert status == 200, answer


def eventually(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether ``condition`` holds within ``seconds`` (polled every 50 ms)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@contextlib.asynccontextmanager
async def stalled_getdata(port: int, user_token: str, local_database_name: str, query: str) -> AsyncIterator[None]:
    """A raw client with a tiny receive buffer: asks for ``query``, reads the status line, then nothing more."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    target = "/GetData?" + urllib.parse.urlencode({"local_database_name": local_database_name, "query": query})
    writer.write(f"GET {target} HTTP/1.1\r\nHost: gateway\r\nuser_token: {user_token}\r\n\r\n".encode())
    await writer.drain()
    assert (await reader.read(64)).startswith(b"HTTP/1.1 200")
    try:
        yield
    finally:
        writer.close()


async def wait_until(condition: Callable[[], bool | Awaitable[bool]], seconds: float, what: str) -> None:
    """Return once ``condition()`` holds (a plain or an async check); fail the test if not within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        outcome = condition()
        if await outcome if isinstance(outcome, Awaitable) else outcome:
            return
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        await asyncio.sleep(0.05)
