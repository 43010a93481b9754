"""Who may hold a database's backends, over real HTTP against a real PostgreSQL.

- a backend whose statement ignores the cancel (a built-in that never checks for
  interrupts) keeps counting against ``pool_max_size`` until it is gone from
  ``pg_stat_activity``: the gateway never has more backends than that on the
  database, says so in /metrics and in its log, and serves again once it ends;
- one token runs at most ``token_query_limit`` queries on a database at once
  (default: half of ``pool_max_size``); the next one waits for a turn up to
  ``acquire_timeout``, then gets 429, while other tokens are served.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterator
from typing import Any

import pytest
import structlog
from aiohttp.test_utils import TestClient
from prometheus_client.parser import text_string_to_metric_families

from drivers.postgres.pool import GuardOptions, PostgresPool
from drivers.postgres.guard.sql_guard import ParsedQuery
from gateway.settings.config import ConfigError, structure_config
from drivers.postgres import CONNECTION_FIELDS
from gateway.contract.connection_fields import as_connection
from gateway.contract.driver_protocol import PoolLimits
from gateway.errors import DatabaseUnavailable, QueryTimeout
from support import (
    admin_headers,
    connect,
    error_of,
    GatewayFactory,
    grant,
    read_logs,
    register_database,
    run_sql,
    server_parameters,
    user_headers,
    wait_until,
)

LOCAL_DATABASE = "fair"
TABLE = f"{LOCAL_DATABASE}_public_items"
TOKENS = ("fair-token-a-7f3e1", "fair-token-b-2c9d4", "fair-token-c-9a0b6", "fair-token-d-4e8f2")
A, B, C, D = TOKENS

RUNAWAY_POINTS = 3300
RUNAWAY_QUERY = (
    "SELECT pg_catalog.poly_distance(a.p, b.p) AS distance FROM"
    " (SELECT polygon(string_agg(point(cos(g), sin(g))::text, ',')) AS p"
    f" FROM generate_series(1, {RUNAWAY_POINTS}) AS g) AS a,"
    " (SELECT polygon(string_agg(point(cos(g) + 3, sin(g))::text, ',')) AS p"
    f" FROM generate_series(1, {RUNAWAY_POINTS}) AS g) AS b"
)
"""Distance between two polygons of 3300 points: 6-8 s here, comparing edge pairs without one interrupt check."""

ALLOW_POLY_DISTANCE = {"postgres": {"allow_functions": ["poly_distance"]}}
"""An operator taking poly_distance back from the guard, which refuses it outright (PostgreSQL cannot interrupt it).

With it RUNAWAY_QUERY passes every other rule of the guard: the runaways below are queries the guard let
through on the operator's word, the case the pool's slots and the token's limit are there for.
"""

SLOW_QUERY = "SELECT count(*) AS n FROM public.items, generate_series(1, 1000000000) AS g"
"""Runs for minutes, but stops at once when cancelled: the statement time limit ends it."""

QUICK_QUERY = "SELECT count(*) AS n FROM public.items, generate_series(1, 20000) AS g"


ITEMS_SQL = "CREATE TABLE public.items (id integer PRIMARY KEY); INSERT INTO public.items VALUES (1)"
"""The module's scratch database (the ``items_database`` fixture of conftest.py)."""


@pytest.fixture(scope="module", autouse=True)
def runaways_end_before_the_drop(items_database: str) -> Iterator[None]:
    """After the module: wait until no runaway backend is left on ``items_database``, which is dropped next."""
    yield
    # A runaway ignores DROP DATABASE's termination too: wait for it before the drop.
    deadline = time.monotonic() + 120
    while backends(items_database, running="poly_distance") and time.monotonic() < deadline:
        time.sleep(0.2)


async def open_fair(make_gateway: GatewayFactory, database: str, **settings: Any) -> TestClient:
    """A gateway with ``settings`` that has ``database`` as "fair", its table granted to every token of the module."""
    client = await make_gateway(**settings)
    await register_database(client, LOCAL_DATABASE, database)
    for token in TOKENS:
        await grant(client, token, TABLE)
    return client


async def get_data(client: TestClient, token: str, query: str) -> Any:
    return await client.get(
        "/GetData", params={"local_database_name": LOCAL_DATABASE, "query": query}, headers=user_headers(token)
    )


async def status_of(client: TestClient, token: str, query: str) -> tuple[int, dict[str, Any] | None]:
    """The status of a GetData answer, and its error body if it is one."""
    response = await get_data(client, token, query)
    if response.status == 200:
        body = await response.json(content_type=None)
        assert body[0]["status"] == "success", body
        return 200, None
    return response.status, await error_of(response)


BACKENDS_SQL = (
    "SELECT pid, state FROM pg_catalog.pg_stat_activity WHERE datname = %s AND application_name = %s"
    " AND query LIKE %s AND pid <> pg_backend_pid()"
)


def backends(database: str, *, running: str = "", application: str = "dbgateway") -> list[tuple[Any, ...]]:
    """(pid, state) of sessions of ``application`` on ``database`` whose query contains ``running``."""
    return run_sql(None, BACKENDS_SQL, (database, application, f"%{running}%"))



async def metric(client: TestClient, name: str, **labels: str) -> float:
    """The sample ``name`` of the "fair" database (and ``labels``) in a /metrics scrape."""
    response = await client.get("/metrics", headers=admin_headers())
    assert response.status == 200
    wanted = {"database": LOCAL_DATABASE, **labels}
    for family in text_string_to_metric_families(await response.text()):
        for sample in family.samples:
            if sample.name == name and sample.labels == wanted:
                return sample.value
    raise AssertionError(f"no {name} sample for {wanted}")


async def runaway_gauge(client: TestClient) -> float:
    return await metric(client, "dbgateway_runaway_backends")


async def events(client: TestClient, event: str) -> list[dict[str, Any]]:
    return [entry for entry in await read_logs(client) if entry["event"] == event]


class BackendSampler:
    """Counts the gateway's sessions on a database every few milliseconds, in a thread, while it runs."""

    def __init__(self, database: str) -> None:
        self.database = database
        self.peak = 0
        self.samples = 0
        self._stop = False

    def _run(self) -> None:
        connection = connect()
        try:
            with connection.cursor() as cursor:
                while not self._stop:
                    cursor.execute(BACKENDS_SQL, (self.database, "dbgateway", "%"))
                    self.peak = max(self.peak, len(cursor.fetchall()))
                    self.samples += 1
                    time.sleep(0.005)
        finally:
            connection.close()

    async def __aenter__(self) -> BackendSampler:
        self._thread = asyncio.ensure_future(asyncio.to_thread(self._run))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._stop = True
        await self._thread


async def wait_for_runaways_to_end(client: TestClient, database: str, count: int) -> None:
    """Until the server lists no runaway, the gauge is back to 0 and ``count`` ends were logged."""
    await wait_until(lambda: _none_running(database), 90, "the runaway backends end")

    async def released() -> bool:
        return await runaway_gauge(client) == 0 and len(await events(client, "runaway_backend_ended")) == count

    await wait_until(released, 5, "the gateway notices the runaways are gone")


async def _none_running(database: str) -> bool:
    return not await asyncio.to_thread(backends, database, running="poly_distance")


class TestRunawayBackends:
    async def test_the_runaway_query_passes_the_guard_only_with_the_operators_allow_functions(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """By default the guard refuses RUNAWAY_QUERY before it runs; allow_functions lets it through, with a warning."""
        guarded = await open_fair(make_gateway, items_database)
        status, body = await status_of(guarded, A, RUNAWAY_QUERY)
        assert (status, body and body["error"]) == (400, "query_rejected")
        assert 'function "poly_distance" is not allowed' in body["message"]
        assert not backends(items_database, running="poly_distance")

        allowed = await make_gateway(drivers=ALLOW_POLY_DISTANCE)
        (warning,) = await events(allowed, "allow_functions_overrides_denial")
        assert (warning["level"], warning["function"]) == ("warning", "poly_distance")
        assert "cannot interrupt" in warning["reason"]

    async def test_a_runaway_backend_counts_against_the_pool_until_it_ends(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """A backend that ignores the cancel keeps its pool slot and its token's turn until gone; backends stay <= pool_max_size."""
        # pool_min_size=2: topping the pool up to its minimum must not open a backend in the runaway's place either.
        client = await open_fair(
            make_gateway,
            items_database,
            pool_min_size=2,
            pool_max_size=2,
            statement_timeout=1,
            acquire_timeout=0.5,
            drivers=ALLOW_POLY_DISTANCE,
        )
        status, body = await status_of(client, A, RUNAWAY_QUERY)
        assert (status, body and body["error"]) == (504, "query_timeout")

        ((pid, state),) = backends(items_database, running="poly_distance")
        assert state == "active"
        (warning,) = await events(client, "runaway_backend")
        assert warning["level"] == "warning"
        assert (warning["backend_pid"], warning["database"]) == (pid, LOCAL_DATABASE)
        (timed_out,) = [entry for entry in await events(client, "request") if entry["status"] == 504]
        assert warning["user_token_fingerprint"] == timed_out["user_token_fingerprint"], "whose query it was"
        assert await runaway_gauge(client) == 1

        # Other tokens share the one slot left, in turn; the pool opens no backend beside the runaway's.
        async with BackendSampler(items_database) as sampler:
            answers = await asyncio.gather(*(status_of(client, token, QUICK_QUERY) for token in (B, C, D) * 2))
        assert [status for status, _ in answers] == [200] * 6
        assert sampler.samples > 0 and sampler.peak <= 2, sampler.peak
        assert len(backends(items_database)) <= 2
        # The token whose query ran away still counts it (limit 1 with pool_max_size 2).
        status, body = await status_of(client, A, QUICK_QUERY)
        assert (status, body and body["error"]) == (429, "too_many_queries")
        assert backends(items_database, running="poly_distance") == [(pid, "active")], "the runaway ended too early"

        await wait_for_runaways_to_end(client, items_database, 1)
        (ended,) = await events(client, "runaway_backend_ended")
        assert ended["backend_pid"] == pid and ended["seconds"] > 0
        assert (await status_of(client, A, QUICK_QUERY))[0] == 200
        await wait_until(
            lambda: asyncio.to_thread(lambda: not backends(items_database, application="dbgateway-watcher")),
            5,
            "the watcher closes its connection",
        )

    async def test_requests_waiting_for_the_slot_of_a_runaway_are_served_once_it_ends(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """With pool_max_size=1 and a runaway, requests wait without a second backend and are served when it ends."""
        client = await open_fair(
            make_gateway,
            items_database,
            pool_max_size=1,
            statement_timeout=1,
            acquire_timeout=15,
            drivers=ALLOW_POLY_DISTANCE,
        )
        assert (await status_of(client, A, RUNAWAY_QUERY))[0] == 504
        async with BackendSampler(items_database) as sampler:
            waiting = [asyncio.ensure_future(status_of(client, token, QUICK_QUERY)) for token in (B, C)]
            await wait_until(lambda: _none_running(items_database), 90, "the runaway backend ends")
            answers = await asyncio.gather(*waiting)
        assert answers == [(200, None), (200, None)]
        assert sampler.samples > 0 and sampler.peak <= 1, sampler.peak
        (ended,) = await events(client, "runaway_backend_ended")
        served = [entry for entry in await events(client, "request") if entry["path"] == "/GetData"][1:]
        assert [entry["status"] for entry in served] == [200, 200]
        assert all(entry["timestamp"] >= ended["timestamp"] for entry in served), (ended, served)

    async def test_two_runaways_fill_a_pool_of_two_and_the_next_request_gets_503(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """With both slots held by runaways, a request waits acquire_timeout and gets 503 instead of a third backend."""
        client = await open_fair(
            make_gateway,
            items_database,
            pool_max_size=2,
            statement_timeout=1,
            acquire_timeout=0.5,
            drivers=ALLOW_POLY_DISTANCE,
        )
        answers = await asyncio.gather(status_of(client, A, RUNAWAY_QUERY), status_of(client, B, RUNAWAY_QUERY))
        assert [status for status, _ in answers] == [504, 504]
        assert len(backends(items_database, running="poly_distance")) == 2
        assert await runaway_gauge(client) == 2

        status, body = await status_of(client, C, QUICK_QUERY)
        assert (status, body and body["error"]) == (503, "database_unavailable")
        assert "2 backends of earlier queries still run past the time limit" in body["message"]
        assert len(backends(items_database)) == 2
        assert len(backends(items_database, application="dbgateway-watcher")) <= 1
        assert len(backends(items_database, running="poly_distance")) == 2, "a runaway ended too early"

        await wait_for_runaways_to_end(client, items_database, 2)
        assert (await status_of(client, C, QUICK_QUERY))[0] == 200


class TestCatalogReads:
    async def test_the_guards_catalog_reads_wait_for_the_slot_a_runaway_holds(self, items_database: str) -> None:
        """check_query reads the catalog through a pool slot: behind a runaway holding the only one, 503, no 2nd backend.

        Through HTTP the guard reads a pool's catalog before that pool's first query runs, so no runaway can
        hold a slot then. Here the runaway is started through the driver's run_query with a ParsedQuery built
        in the test, bypassing the guard by construction: this tests the pool's accounting, not the guard.
        """
        server = server_parameters()
        pool = PostgresPool(
            as_connection(CONNECTION_FIELDS, {**server, "port": int(server["port"]), "database": items_database}),
            PoolLimits(min_size=1, max_size=1, acquire_timeout=0.5, statement_timeout=1, row_limit=10, batch_size=10),
            structlog.get_logger(),
            GuardOptions(),
        )
        unchecked = ParsedQuery(sql=RUNAWAY_QUERY, relations=frozenset(), functions=frozenset({"poly_distance"}))
        granted = frozenset({("public", "items")})
        try:
            with pytest.raises(QueryTimeout):
                async with pool.run_query(unchecked) as result:
                    async for _ in result.batches():
                        pass
            assert pool.stats().runaway == 1
            async with BackendSampler(items_database) as sampler:
                with pytest.raises(DatabaseUnavailable, match="1 backend of earlier queries still run"):
                    await pool.check_query("SELECT id FROM public.items", granted)
            assert sampler.samples > 0 and sampler.peak <= 1, sampler.peak

            async def forgotten() -> bool:
                return pool.stats().runaway == 0

            await wait_until(lambda: _none_running(items_database), 90, "the runaway backend ends")
            await wait_until(forgotten, 5, "the pool notices the runaway is gone")
            checked = await pool.check_query("SELECT id FROM public.items", granted)
            assert checked.relations == granted
        finally:
            await pool.close()


async def start_slow_queries(client: TestClient, database: str, token: str, count: int) -> list[asyncio.Task[Any]]:
    """``count`` slow queries of ``token``, returned once all of them run on the server."""
    tasks = [asyncio.ensure_future(status_of(client, token, SLOW_QUERY)) for _ in range(count)]

    async def all_running() -> bool:
        return len(await asyncio.to_thread(backends, database, running="generate_series(1, 1000000000)")) == count

    await wait_until(all_running, 10, f"{count} slow queries run")
    return tasks


class TestTokenQueryLimit:
    async def test_a_token_past_its_limit_gets_429_while_another_token_is_served(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """pool_max_size=4: token A's third query waits acquire_timeout and gets 429, counted and audited; B is served."""
        client = await open_fair(make_gateway, items_database, pool_max_size=4, statement_timeout=3, acquire_timeout=1)
        slow = await start_slow_queries(client, items_database, A, 2)
        refused, served = await asyncio.gather(status_of(client, A, QUICK_QUERY), status_of(client, B, QUICK_QUERY))
        assert served == (200, None)
        status, body = refused
        assert status == 429 and body is not None
        assert body["error"] == "too_many_queries"
        assert "this token already runs 2 queries on database 'fair'" in body["message"]
        assert await metric(client, "dbgateway_getdata_queries_total", outcome="limited") == 1
        (audited,) = [e for e in await read_logs(client, event="audit") if e["action"] == "get_data" and e["status"] == 429]
        assert (audited["error"], audited["outcome"]) == ("too_many_queries", "error")
        assert (audited["local_database_name"], audited["tables"]) == (LOCAL_DATABASE, [TABLE])
        assert (audited["query"], audited["rows"], audited["bytes"]) == (QUICK_QUERY, 0, 0)
        (refused_line,) = [entry for entry in await events(client, "request") if entry["status"] == 429]
        assert audited["user_token_fingerprint"] == refused_line["user_token_fingerprint"], "whose query it was"
        assert not any(task.done() for task in slow), "the slow queries must outlast the wait"
        assert [status for status, _ in await asyncio.gather(*slow)] == [504, 504]

    async def test_a_waiting_query_is_served_when_one_of_its_tokens_queries_ends(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """A query past the token's limit runs as soon as one of the token's queries ends within acquire_timeout."""
        client = await open_fair(make_gateway, items_database, pool_max_size=4, statement_timeout=2, acquire_timeout=8)
        slow = await start_slow_queries(client, items_database, A, 2)
        finished: list[str] = []

        async def noted(name: str, answer: Awaitable[tuple[int, Any]]) -> tuple[int, Any]:
            result = await answer
            finished.append(name)
            return result

        waiting = noted("waiting", status_of(client, A, QUICK_QUERY))
        ended = [noted("slow", task) for task in slow]
        answers = await asyncio.gather(waiting, *ended)
        assert [status for status, _ in answers] == [200, 504, 504]
        assert finished.index("waiting") > finished.index("slow"), finished

    @pytest.mark.parametrize(
        ("pool_max_size", "setting", "limit"),
        [pytest.param(4, 1, 1, id="explicit_1_of_4"), pytest.param(6, 0, 3, id="0_is_half_of_6")],
    )
    async def test_the_setting_overrides_the_default_and_0_means_half_the_pool(
        self, make_gateway: GatewayFactory, items_database: str, pool_max_size: int, setting: int, limit: int
    ) -> None:
        """token_query_limit sets the limit; 0 means half of pool_max_size."""
        client = await open_fair(
            make_gateway,
            items_database,
            pool_max_size=pool_max_size,
            token_query_limit=setting,
            statement_timeout=2,
            acquire_timeout=0.5,
        )
        slow = await start_slow_queries(client, items_database, A, limit)
        status, body = await status_of(client, A, QUICK_QUERY)
        assert (status, body and body["error"]) == (429, "too_many_queries")
        assert not any(task.done() for task in slow), "the slow queries must outlast the wait"
        await asyncio.gather(*slow)

    def test_a_negative_limit_stops_start_up(self) -> None:
        """token_query_limit must be 0 or more; a negative value is a ConfigError naming it."""
        with pytest.raises(ConfigError, match="token_query_limit"):
            structure_config({"token_query_limit": -1})
