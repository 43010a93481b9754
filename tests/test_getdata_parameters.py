"""GetData's bound parameters (issue 23) over real HTTP against a real PostgreSQL.

``params`` in a POST body and repeated ``param`` on GET give the values of
``$1``..``$n``; the server binds them (``drivers.postgres.connections.bound``),
so a value is only ever a value: hostile texts find rows equal to themselves,
never change the statement. One scratch database serves the module; each test
starts its own gateway.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from support import GatewayFactory, database_from, error_of, grant, register_database, run_sql, user_headers

TOKEN = "parameters-reader-token-5c2e"
SETUP_SQL = r"""
CREATE SCHEMA app;
CREATE TABLE app.people (id integer PRIMARY KEY, name text NOT NULL, born date, score numeric, active boolean);
INSERT INTO app.people VALUES (1, 'Ann', '1990-01-02', 1.5, true), (2, 'Bob', NULL, NULL, false),
    (3, 'Zoë 東京', '2001-03-04', 7, true), (4, '''x''; DROP TABLE app.people; --', NULL, 0, NULL);
CREATE TABLE app.hidden (id integer, secret text);
INSERT INTO app.hidden VALUES (1, 'not yours');
"""


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with database_from(SETUP_SQL) as name:
        yield name


async def opened(make_gateway: GatewayFactory, database: str) -> TestClient:
    client = await make_gateway()
    await register_database(client, "p", database)
    await grant(client, TOKEN, "p_app_people")
    return client


async def post(client: TestClient, query: str, params: Any, **extra: Any) -> Any:
    body = {"local_database_name": "p", "query": query, "params": params, **extra}
    return await client.post("/GetData", json=body, headers=user_headers(TOKEN))


async def rows_of(response: Any) -> list[list[Any]]:
    assert response.status == 200, await response.text()
    (result,) = await response.json()
    return [list(row.values()) for row in result["data"]]


async def test_post_params_are_bound_values(make_gateway: GatewayFactory, database: str) -> None:
    client = await opened(make_gateway, database)
    query = "SELECT id, name FROM app.people WHERE name = $1 OR id = $2 ORDER BY id"
    assert await rows_of(await post(client, query, ["Bob", 3])) == [[2, "Bob"], [3, "Zoë 東京"]]


async def test_get_repeated_param_gives_the_values_in_order(make_gateway: GatewayFactory, database: str) -> None:
    client = await opened(make_gateway, database)
    query = "SELECT id FROM app.people WHERE id IN ($1, $2) AND name <> $3 ORDER BY id"
    response = await client.get("/GetData", params=[("local_database_name", "p"), ("query", query),
                                                    ("param", "1"), ("param", "3"), ("param", "Ann")],
                                headers=user_headers(TOKEN))
    assert await rows_of(response) == [[3]]
