"""Fixtures: a real PostgreSQL, scratch databases, and gateways served over real HTTP."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import psycopg2
import pytest
from aiohttp.test_utils import TestClient, TestServer
from console_page import chromium, open_page  # noqa: F401  (the console's browser fixtures)
from gateway_processes import GatewayProcess, alive, children
from guard_schema import GUARD_SCHEMA_SQL
from openapi_contract import ContractCheckedClient
from support import (
    GatewayFactory,
    connect,
    database_from,
    dsn_under_test,
    gateway_config,
    grant,
    register_database,
    run_sql,
    server_parameters,
)
from tcp_proxy import HangingProxy

from drivers.postgres.guard.model.catalog import CATALOG_SQL
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.process import PolicySource
from gateway.observability.log_stream import CapturedLog
from gateway.web.app import create_app, server_options

CLOSE_TIMEOUT_SECONDS = 60.0
"""How long closing one test gateway (its server, pools and registry follower) may take."""


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


@pytest.fixture(scope="session")
def guard_database() -> Iterator[str]:
    """A scratch database with the tables the guard's unit tests name (``guard_schema.GUARD_SCHEMA_SQL``)."""
    with database_from(GUARD_SCHEMA_SQL) as name:
        yield name


@pytest.fixture(scope="module")
def policy_source(guard_database: str) -> PolicySource:
    """The guard test database's catalog row, as a pool reads it, with the default operator options."""
    (row,) = run_sql(guard_database, CATALOG_SQL)
    return PolicySource(catalog_row=row, allow=frozenset(), deny=frozenset())


@pytest.fixture(scope="module")
def policy(policy_source: PolicySource) -> GuardPolicy:
    """The SQL guard's policy built from the test server's own pg_catalog, as a pool builds it."""
    return policy_source.build_policy()


@pytest.fixture(scope="module")
def shop_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A scratch database made from the test module's ``SHOP_SQL``, for the module's tests to read."""
    with database_from(request.module.SHOP_SQL) as name:
        yield name


@pytest.fixture(scope="module")
def items_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A scratch database made from the test module's ``ITEMS_SQL`` (a table of items), for the module's tests to read."""
    with database_from(request.module.ITEMS_SQL) as name:
        yield name


SERVED_SQL = "CREATE TABLE public.t (id integer)"
"""What ``served_database`` holds unless the test module says otherwise with its own ``SERVED_SQL``."""


@pytest.fixture(scope="module")
def served_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A scratch database made from the test module's ``SERVED_SQL`` (default: an empty public.t), only read."""
    with database_from(getattr(request.module, "SERVED_SQL", SERVED_SQL)) as name:
        yield name


@pytest.fixture(scope="module")
def formats_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A scratch database made from the test module's ``FORMATS_SQL`` (test_getdata_formats' typed columns)."""
    with database_from(request.module.FORMATS_SQL) as name:
        yield name


@pytest.fixture(scope="module")
def module_registry_database() -> Iterator[str]:
    """An empty scratch database for the test module's registries (see ``registry_database``)."""
    with database_from() as name:
        yield name


@pytest.fixture
def registry_database(module_registry_database: str) -> str:
    """A scratch database holding no registry (emptied here: dropping a database per test costs a checkpoint)."""
    run_sql(module_registry_database, "DROP SCHEMA IF EXISTS dbgateway_registry CASCADE")
    return module_registry_database


@pytest.fixture
def proxy() -> Iterator[HangingProxy]:
    """A TCP proxy to the test server that a test can make hang (see ``tcp_proxy.HangingProxy``)."""
    parameters = server_parameters()
    with HangingProxy(parameters["ip"], int(parameters["port"])) as running:
        yield running


@pytest.fixture
def scratch_database() -> Iterator[str]:
    """A new empty database, dropped (with its sessions) after the test."""
    with database_from() as name:
        yield name


@pytest.fixture
async def make_gateway(tmp_path: Path) -> AsyncIterator[GatewayFactory]:
    """Start gateways over real HTTP; each call may pass settings. All share ``tmp_path/data`` unless told.

    Every request and answer is checked against the OpenAPI document the gateway serves; what breaks it fails the
    test at teardown.
    """
    clients: list[ContractCheckedClient] = []

    async def start(data_dir: Path | None = None, **settings: Any) -> TestClient:
        config = gateway_config(data_dir or tmp_path / "data", **settings)
        log_stream = CapturedLog()
        app = create_app(config, log_stream=log_stream)
        server = TestServer(app)
        # TestServer's constructor drops request-handler options; start_server passes them on.
        await server.start_server(**server_options(config))
        client = ContractCheckedClient(server)
        await client.start_server()
        client.log_stream = log_stream  # type: ignore[attr-defined]
        clients.append(client)
        return client

    yield start
    for client in clients:
        # A gateway that does not stop would hang the whole run at this point: fail the test instead.
        try:
            await asyncio.wait_for(client.close(), CLOSE_TIMEOUT_SECONDS)
        except TimeoutError:
            pytest.fail(f"a gateway did not stop within {CLOSE_TIMEOUT_SECONDS} s of closing", pytrace=False)
    problems = [problem for client in clients for problem in client.contract_problems]
    if problems:
        pytest.fail("requests and answers that break the OpenAPI document:\n" + "\n".join(problems), pytrace=False)


@pytest.fixture
async def gateway(request: pytest.FixtureRequest, make_gateway: GatewayFactory) -> TestClient:
    """One gateway with the test admin token and an empty registry, and the test module's ``GATEWAY_SETTINGS``."""
    return await make_gateway(**getattr(request.module, "GATEWAY_SETTINGS", {}))


@pytest.fixture
async def shop(request: pytest.FixtureRequest, gateway: TestClient, shop_database: str) -> TestClient:
    """``gateway`` with ``shop_database`` registered and tokens granted tables, as the test module says.

    The module's ``SHOP_NAME`` is the local database name (default "shop"), its ``SHOP_REGISTRATION`` the
    AddDatabase parameters that differ from the test server's (a password, a role), and its ``SHOP_GRANTS``
    maps each token to the local table names granted to it (default: none); a ``(name, inputs)`` pair in
    place of a name grants with GrantTableAccess's further inputs (``columns``, ``row_filter``, ...).
    """
    module = request.module
    name = getattr(module, "SHOP_NAME", "shop")
    await register_database(gateway, name, shop_database, **getattr(module, "SHOP_REGISTRATION", {}))
    grants: Mapping[str, Iterable[str | tuple[str, Mapping[str, str]]]] = getattr(module, "SHOP_GRANTS", {})
    for token, tables in grants.items():
        for table in tables:
            if isinstance(table, str):
                await grant(gateway, token, table)
            else:
                await grant(gateway, token, table[0], **table[1])
    return gateway


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """``dbgateway serve`` processes a test started: at the end they are killed, and so is every worker they had
    at the start (or that the test noted in the process's ``workers`` attribute)."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        leftovers = children(process.pid) if process.poll() is None else []
        leftovers += getattr(process, "workers", [])
        process.kill()
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.communicate()


@pytest.fixture
def gateways() -> Iterator[list[GatewayProcess]]:
    """Gateway processes a test started; at the end each is stopped, and any worker of it still alive killed."""
    started: list[GatewayProcess] = []
    yield started
    for gateway in started:
        workers = children(gateway.process.pid) if gateway.process.poll() is None else []
        gateway.stop()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
