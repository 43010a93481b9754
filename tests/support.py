"""Helpers the test modules share: the server under test, direct SQL, and gateway calls.

``DBGATEWAY_TEST_DSN`` points the suite at another server (libpq URL or
key=value string, default ``postgresql://postgres@127.0.0.1:5432/postgres``).
The account must be allowed to create databases.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg2
import psycopg2.extensions
from aiohttp.test_utils import TestClient

from gateway.config import GatewayConfig, structure_config

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


async def grant(client: TestClient, user_token: str, local_table_name: str) -> None:
    response = await client.post(
        "/GrantTableAccess/",
        params={"user_token": user_token, "local_table_name": local_table_name},
        headers=admin_headers(),
    )
    assert response.status == 200, await response.text()


async def error_of(response: Any) -> dict[str, Any]:
    """The JSON error body, after checking it has the contract's shape."""
    assert response.content_type == "application/json", response.content_type
    body = await response.json()
    assert set(body) == {"status", "error", "message"}, body
    assert body["status"] == "error"
    assert body["message"]
    return body
