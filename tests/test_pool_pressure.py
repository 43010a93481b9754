"""Pools under pressure, over real HTTP against a real PostgreSQL.

- a request that finds no free connection answers 503 within the acquire time limit;
- a client that disconnects mid-query gets its statement cancelled on the
  server, and the connection goes back to the pool idle (a real
  ``dbgateway serve`` process, so the production server settings hold);
- PostgreSQL restarted under load: once it is back, every request succeeds
  (a throwaway cluster of this test's own; the shared server is never touched).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from postgres_cluster import ThrowawayCluster, cluster_tools_missing
from support import (
    ADMIN_TOKEN,
    admin_headers,
    database_parameters,
    error_of,
    free_port,
    GatewayFactory,
    grant,
    register_database,
    run_sql,
    start_gateway_process,
    stop_process,
    user_headers,
    wait_until,
    wait_until_listening,
)

TOKEN = "pressure-reader-token-41c9"
LOCAL_DATABASE = "pressure"
TABLE_SQL = "CREATE TABLE public.items (id integer PRIMARY KEY, name text); INSERT INTO public.items VALUES (1, 'one')"
SLOW_QUERY = (
    "SELECT count(*) AS n FROM generate_series(1, 100000) AS a CROSS JOIN generate_series(1, 100000) AS b"
)
"""Ten billion rows to count: runs for minutes unless stopped; the SQL guard lets it through (no pg_sleep)."""
QUICK_QUERY = "SELECT id, name FROM public.items ORDER BY id"


def gateway_statements(database: str, fragment: str) -> list[tuple[Any, ...]]:
    """(pid, state) of gateway sessions on ``database`` whose current or last statement contains ``fragment``."""
    return run_sql(
        None,
        "SELECT pid, state FROM pg_stat_activity WHERE datname = %s AND application_name = 'dbgateway' "
        "AND query LIKE %s AND pid <> pg_backend_pid()",
        (database, f"%{fragment}%"),
    )


def gateway_sessions(database: str) -> list[tuple[Any, ...]]:
    """(pid, state) of every gateway session on ``database``."""
    return run_sql(
        None,
        "SELECT pid, state FROM pg_stat_activity WHERE datname = %s AND application_name = 'dbgateway'",
        (database,),
    )



async def open_items(client: TestClient, database: str) -> None:
    await register_database(client, LOCAL_DATABASE, database)
    await grant(client, TOKEN, f"{LOCAL_DATABASE}_public_items")


async def get_data(client: TestClient, query: str) -> aiohttp.ClientResponse:
    return await client.get(
        "/GetData", params={"local_database_name": LOCAL_DATABASE, "query": query}, headers=user_headers(TOKEN)
    )


class TestAcquireTimeLimit:
    async def test_no_free_connection_answers_503_within_the_acquire_limit(
        self, make_gateway: GatewayFactory, scratch_database: str
    ) -> None:
        """With the only connection busy, GetData answers 503 database_unavailable after about acquire_timeout."""
        run_sql(scratch_database, TABLE_SQL)
        # Two queries of one token at once: the pool, not the per-token limit, must be what refuses.
        client = await make_gateway(
            pool_min_size=0, pool_max_size=1, acquire_timeout=1, statement_timeout=4, token_query_limit=2
        )
        await open_items(client, scratch_database)
        holder = asyncio.create_task(get_data(client, SLOW_QUERY))
        try:
            await wait_until(lambda: gateway_statements(scratch_database, "CROSS JOIN") != [], 5.0, "the gateway's cross join runs")
            started = time.monotonic()
            response = await get_data(client, QUICK_QUERY)
            waited = time.monotonic() - started
            assert response.status == 503
            assert (await error_of(response))["error"] == "database_unavailable"
            # Not before acquire_timeout=1; no upper bound (the machine's load decides it): had the wait not been
            # cut, the quick query would have been answered 200 once the slow one ended (statement_timeout=4).
            assert waited >= 1, waited
        finally:
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)


@pytest.fixture
async def gateway_process(tmp_path: Path) -> AsyncIterator[str]:
    """A ``dbgateway serve`` process with one connection per pool; yields its base URL."""
    port = free_port()
    process = start_gateway_process(
        tmp_path / "data",
        port,
        DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN,
        DBGATEWAY_POOL_MIN_SIZE="0",
        DBGATEWAY_POOL_MAX_SIZE="1",
        DBGATEWAY_STATEMENT_TIMEOUT="20",
        DBGATEWAY_LOG_LEVEL="warning",
    )
    try:
        wait_until_listening(process, port)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process)


class TestClientDisconnect:
    async def test_a_client_that_disconnects_cancels_its_query_and_frees_the_connection(
        self, gateway_process: str, scratch_database: str
    ) -> None:
        """Closing the socket mid-query stops the statement on the server; the pool's one connection serves next."""
        run_sql(scratch_database, TABLE_SQL)
        async with aiohttp.ClientSession(gateway_process) as session:
            registration = database_parameters(LOCAL_DATABASE, scratch_database)
            async with session.put("/Database", params=registration, headers=admin_headers()) as response:
                assert response.status == 200, await response.text()
            granting = {"user_token": TOKEN, "local_table_name": f"{LOCAL_DATABASE}_public_items"}
            async with session.post("/GrantTableAccess/", params=granting, headers=admin_headers()) as response:
                assert response.status == 200, await response.text()

            slow = asyncio.create_task(session.get("/GetData", params=getdata_inputs(SLOW_QUERY), headers=user_headers(TOKEN)))
            await wait_until(lambda: active_statements(scratch_database, "CROSS JOIN") != [], 5.0, "the cross join runs")
            ((backend_pid, _),) = active_statements(scratch_database, "CROSS JOIN")
            slow.cancel()  # aiohttp closes the connection of a request cancelled mid-way
            await asyncio.gather(slow, return_exceptions=True)

            await wait_until(lambda: active_statements(scratch_database, "CROSS JOIN") == [], 3.0, "the cross join is gone")
            async with session.get("/GetData", params=getdata_inputs(QUICK_QUERY), headers=user_headers(TOKEN)) as response:
                assert response.status == 200, await response.text()
                assert (await response.json(content_type=None))[0]["data"] == [{"id": 1, "name": "one"}]
        # The same backend answered: the connection came back idle instead of being dropped.
        assert gateway_sessions(scratch_database) == [(backend_pid, "idle")]


def getdata_inputs(query: str) -> dict[str, str]:
    return {"local_database_name": LOCAL_DATABASE, "query": query}


def active_statements(database: str, fragment: str) -> list[tuple[Any, ...]]:
    """(pid, state) of gateway sessions on ``database`` running a statement that contains ``fragment``."""
    return [row for row in gateway_statements(database, fragment) if row[1] == "active"]


@pytest.fixture
def throwaway_cluster(tmp_path: Path) -> Iterator[ThrowawayCluster]:
    """A PostgreSQL cluster of this test's own (initdb, trust, a free port), removed afterwards."""
    missing = cluster_tools_missing()
    if missing:
        pytest.skip(missing)
    cluster = ThrowawayCluster.create(free_port())
    try:
        cluster.run_sql(TABLE_SQL)
        yield cluster
    finally:
        cluster.destroy()


class TestDatabaseRestart:
    async def test_after_a_restart_under_load_every_request_succeeds(
        self, make_gateway: GatewayFactory, throwaway_cluster: ThrowawayCluster
    ) -> None:
        """Requests during a restart may get 503; once the server is back, none fails and the gateway was not restarted."""
        client = await make_gateway(pool_min_size=1, pool_max_size=4, acquire_timeout=2, statement_timeout=5)
        await register_database(
            client, LOCAL_DATABASE, "postgres", ip="127.0.0.1", port=str(throwaway_cluster.port), password=""
        )
        await grant(client, TOKEN, f"{LOCAL_DATABASE}_public_items")
        answers: list[tuple[float, int]] = []  # (loop time the request was sent, its status)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        async def keep_asking() -> None:
            while not stop.is_set():
                sent = loop.time()
                response = await get_data(client, QUICK_QUERY)
                answers.append((sent, response.status))
                await response.read()

        def answered_since(moment: float) -> list[int]:
            return [status for sent, status in answers if sent >= moment]

        load = [asyncio.create_task(keep_asking()) for _ in range(4)]
        try:
            await wait_until(lambda: len(answers) >= 4, 30, "the load is answered before the restart")
            await asyncio.to_thread(throwaway_cluster.restart)
            back = loop.time()
            await wait_until(lambda: len(answered_since(back)) >= 20, 30, "20 requests sent after the restart answered")
        finally:
            stop.set()
            await asyncio.gather(*load)
        assert {status for _, status in answers} <= {200, 503}, answers
        after = answered_since(back)
        assert len(after) >= 20 and set(after) == {200}, after
        for _ in range(10):
            assert (await get_data(client, QUICK_QUERY)).status == 200
        # Catalog reads go through the same pool: right after another restart, its idle
        # connections are all dead, and the first describe must still get a live one.
        await asyncio.to_thread(throwaway_cluster.restart)
        described = await client.get(
            "/Table", params={"local_table_name": f"{LOCAL_DATABASE}_public_items"}, headers=user_headers(TOKEN)
        )
        assert described.status == 200, await described.text()
