"""Fixtures: a real PostgreSQL, scratch databases, and gateways served over real HTTP."""

from __future__ import annotations

import io
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg2
import pytest
from aiohttp.test_utils import TestClient, TestServer

from gateway.app import create_app, server_options
from support import GatewayFactory, connect, dsn_under_test, gateway_config, run_sql


def pytest_sessionstart(session: pytest.Session) -> None:
    try:
        connect().close()
    except psycopg2.OperationalError as error:
        reason = " ".join(str(error).split())
        pytest.exit(
            f"PostgreSQL does not answer at {dsn_under_test()} ({reason}). Start it, or set DBGATEWAY_TEST_DSN "
            "to a server where this account may create databases.",
            returncode=3,
        )


@pytest.fixture
def scratch_database() -> Iterator[str]:
    """A new empty database, dropped (with its sessions) after the test."""
    name = f"dbgw_test_{secrets.token_hex(6)}"
    run_sql(None, f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        run_sql(None, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def make_gateway(tmp_path: Path) -> AsyncIterator[GatewayFactory]:
    """Start gateways over real HTTP; each call may pass settings. All share ``tmp_path/data`` unless told."""
    clients: list[TestClient] = []

    async def start(data_dir: Path | None = None, **settings: Any) -> TestClient:
        config = gateway_config(data_dir or tmp_path / "data", **settings)
        log_stream = io.StringIO()
        app = create_app(config, log_stream=log_stream)
        client = TestClient(TestServer(app, **server_options(config)))
        await client.start_server()
        client.log_stream = log_stream  # type: ignore[attr-defined]
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.close()


@pytest.fixture
async def gateway(make_gateway: GatewayFactory) -> TestClient:
    """One gateway with the test admin token and an empty registry."""
    return await make_gateway()
