"""Who may hold a database's backends, over real HTTP against a real PostgreSQL.

- one token runs at most ``token_query_limit`` queries on a database at once
  (default: half of ``pool_max_size``); the next one waits for a turn up to
  ``acquire_timeout``, then gets 429, while other tokens are served.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from prometheus_client.parser import text_string_to_metric_families

from gateway.config import ConfigError, structure_config
from support import (
    database_from,
    error_of,
    GatewayFactory,
    grant,
    register_database,
    run_sql,
    user_headers,
)

LOCAL_DATABASE = "fair"
TABLE = f"{LOCAL_DATABASE}_public_items"
TOKENS = ("fair-token-a-7f3e1", "fair-token-b-2c9d4", "fair-token-c-9a0b6", "fair-token-d-4e8f2")
A, B, C, D = TOKENS

SLOW_QUERY = "SELECT count(*) AS n FROM public.items, generate_series(1, 1000000000) AS g"
"""Runs for minutes, but stops at once when cancelled: the statement time limit ends it."""

QUICK_QUERY = "SELECT count(*) AS n FROM public.items, generate_series(1, 20000) AS g"


@pytest.fixture(scope="module")
def items_database() -> Iterator[str]:
    """The module's scratch database with public.items."""
    with database_from("CREATE TABLE public.items (id integer PRIMARY KEY); INSERT INTO public.items VALUES (1)") as name:
        yield name


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


async def wait_until(condition: Callable[[], Awaitable[bool]], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        await asyncio.sleep(0.1)


async def metric(client: TestClient, name: str, **labels: str) -> float:
    """The sample ``name`` of the "fair" database (and ``labels``) in a /metrics scrape."""
    response = await client.get("/metrics")
    assert response.status == 200
    wanted = {"database": LOCAL_DATABASE, **labels}
    for family in text_string_to_metric_families(await response.text()):
        for sample in family.samples:
            if sample.name == name and sample.labels == wanted:
                return sample.value
    raise AssertionError(f"no {name} sample for {wanted}")


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
        """pool_max_size=4: token A's third query waits acquire_timeout and gets 429; token B is served meanwhile."""
        client = await open_fair(make_gateway, items_database, pool_max_size=4, statement_timeout=3, acquire_timeout=1)
        slow = await start_slow_queries(client, items_database, A, 2)
        refused, served = await asyncio.gather(status_of(client, A, QUICK_QUERY), status_of(client, B, QUICK_QUERY))
        assert served == (200, None)
        status, body = refused
        assert status == 429 and body is not None
        assert body["error"] == "too_many_queries"
        assert "this token already runs 2 queries on database 'fair'" in body["message"]
        assert await metric(client, "dbgateway_getdata_queries_total", outcome="limited") == 1
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
