"""GetData's bound parameters (issue 23) over real HTTP against a real PostgreSQL.

``params`` in a POST body and repeated ``param`` on GET give the values of
``$1``..``$n``; the server binds them (``drivers.postgres.connections.bound``),
so a value is only ever a value: hostile texts find rows equal to themselves,
never change the statement. One scratch database serves the module; each test
starts its own gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from support import (
    GatewayFactory,
    connect,
    error_of,
    grant,
    register_database,
    run_sql,
    user_headers,
    wait_until,
)

from gateway.web.keys import POOLS, REGISTRY

TOKEN = "parameters-reader-token-5c2e"
SETUP_SQL = r"""
CREATE SCHEMA app;
CREATE TABLE app.people (id integer PRIMARY KEY, name text NOT NULL, born date, score numeric, active boolean);
INSERT INTO app.people VALUES (1, 'Ann', '1990-01-02', 1.5, true), (2, 'Bob', NULL, NULL, false),
    (3, 'Zoë 東京', '2001-03-04', 7, true), (4, '''x''; DROP TABLE app.people; --', NULL, 0, NULL);
CREATE TABLE app.hidden (id integer, secret text);
INSERT INTO app.hidden VALUES (1, 'not yours');
"""
SHOP_SQL = SETUP_SQL
"""The module's scratch database (conftest.py's ``shop_database``)."""


async def opened(make_gateway: GatewayFactory, shop_database: str) -> TestClient:
    client = await make_gateway()
    await register_database(client, "p", shop_database)
    await grant(client, TOKEN, "p_app_people")
    return client


async def post(client: TestClient, query: str, params: Any, **extra: Any) -> Any:
    body = {"local_database_name": "p", "query": query, "params": params, **extra}
    return await client.post("/GetData", json=body, headers=user_headers(TOKEN))


async def rows_of(response: Any) -> list[list[Any]]:
    assert response.status == 200, await response.text()
    (result,) = await response.json()
    return [list(row.values()) for row in result["data"]]


async def test_post_params_are_bound_values(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await opened(make_gateway, shop_database)
    query = "SELECT id, name FROM app.people WHERE name = $1 OR id = $2 ORDER BY id"
    assert await rows_of(await post(client, query, ["Bob", 3])) == [[2, "Bob"], [3, "Zoë 東京"]]


async def test_get_repeated_param_gives_the_values_in_order(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await opened(make_gateway, shop_database)
    query = "SELECT id FROM app.people WHERE id IN ($1, $2) AND name <> $3 ORDER BY id"
    response = await client.get("/GetData", params=[("local_database_name", "p"), ("query", query),
                                                    ("param", "1"), ("param", "3"), ("param", "Ann")],
                                headers=user_headers(TOKEN))
    assert await rows_of(response) == [[3]]


async def test_the_csv_and_ndjson_paths_take_the_same_values(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await opened(make_gateway, shop_database)
    query = "SELECT id, name FROM app.people WHERE id = $1"
    csv = await client.get("/GetData/csv", params=[("local_database_name", "p"), ("query", query), ("param", "2")],
                           headers=user_headers(TOKEN))
    assert csv.status == 200 and (await csv.text()).splitlines() == ["id,name", "2,Bob"]
    body = {"local_database_name": "p", "query": query, "params": [1]}
    ndjson = await client.post("/GetData/ndjson", json=body, headers=user_headers(TOKEN))
    assert ndjson.status == 200 and '"Ann"' in await ndjson.text()


async def test_json_scalars_map_to_text_and_null(make_gateway: GatewayFactory, shop_database: str) -> None:
    """A number in its JSON spelling, true/false, null as SQL NULL, unicode as it is."""
    client = await opened(make_gateway, shop_database)
    query = ("SELECT id FROM app.people WHERE score = $1 OR active = $2 AND id > $3 OR name = $4 "
             "OR born IS NOT DISTINCT FROM $5 ORDER BY id")
    assert await rows_of(await post(client, query, [1.5, True, 2, "Zoë 東京", None])) == [[1], [2], [3], [4]]
    typed = "SELECT $1::text IS NULL, $2::numeric, $3::boolean, $4::int8, $5::text"
    assert await rows_of(await post(client, typed, [None, 0.25, False, 9007199254740993, "ünï"])) == [
        [True, "0.25", False, 9007199254740993, "ünï"]]


async def test_a_value_the_type_refuses_names_its_parameter(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await opened(make_gateway, shop_database)
    for query, params, wanted in [
        ("SELECT id FROM app.people WHERE id = $1", ["abc"], r"parameter \$1 .*integer"),
        ("SELECT id FROM app.people WHERE name = $1 AND born = $2", ["Ann", "not a date"], r"parameter \$2 .*date"),
        ("SELECT $1::int", [1.5], r"parameter \$1 .*integer"),
    ]:
        response = await post(client, query, params)
        error = await error_of(response)
        assert response.status == 400 and error["error"] == "query_failed", error
        assert re.search(wanted, error["message"]), error
    # The connection that failed in its Bind went back clean: the next queries answer.
    for _ in range(3):
        assert await rows_of(await post(client, "SELECT id FROM app.people WHERE id = $1", [2])) == [[2]]


async def test_counts_that_do_not_match_say_what_to_fix(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await opened(make_gateway, shop_database)
    too_few = await post(client, "SELECT id FROM app.people WHERE id = $1 OR id = $2", [1])
    assert too_few.status == 400 and "$2 has no value" in (await error_of(too_few))["message"]
    none_sent = await client.get("/GetData", params={"local_database_name": "p",
                                                     "query": "SELECT id FROM app.people WHERE id = $1"},
                                 headers=user_headers(TOKEN))
    assert none_sent.status == 400 and "$1 has no value" in (await error_of(none_sent))["message"]
    too_many = await post(client, "SELECT id FROM app.people WHERE id = $1", [1, 2])
    assert too_many.status == 400 and "2 parameters were sent, but the query uses 1" in (await error_of(too_many))["message"]


async def test_values_that_are_not_scalars_are_refused_by_name(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await opened(make_gateway, shop_database)
    for params, wanted in [([1, [2, 3]], "params[1] ($2) is an array"), ([{"a": 1}], "params[0] ($1) is an object"),
                           ("1", "'params' of the body must be an array"), (["a\x00b"], "params[0] ($1) holds a NUL")]:
        response = await post(client, "SELECT $1::text, $2::int", params)
        error = await error_of(response)
        assert response.status == 400 and error["error"] == "bad_request" and wanted in error["message"], error
    both = await client.post("/GetData", params=[("param", "x")], headers=user_headers(TOKEN),
                             json={"local_database_name": "p", "query": "SELECT $1::text", "params": ["y"]})
    assert both.status == 400 and (await error_of(both))["error"] == "ambiguous_request"


HOSTILE = ["'x'; DROP TABLE app.people; --", "pg_read_file('/etc/passwd')", "app.hidden", "1) OR (1=1",
           "' OR '1'='1", "$2", "Ann' --"]


@pytest.mark.parametrize("value", HOSTILE)
async def test_a_hostile_value_is_only_ever_a_value(make_gateway: GatewayFactory, shop_database: str, value: str) -> None:
    """It matches rows equal to it and nothing else; the tables are unchanged; GET and POST alike."""
    client = await opened(make_gateway, shop_database)
    expected = [[4]] if value == HOSTILE[0] else []
    query = "SELECT id FROM app.people WHERE name = $1 OR id::text = $1"
    assert await rows_of(await post(client, query, [value])) == expected
    response = await client.get("/GetData", params=[("local_database_name", "p"), ("query", query), ("param", value)],
                                headers=user_headers(TOKEN))
    assert await rows_of(response) == expected
    echoed = await post(client, "SELECT $1::text AS v, length($1) AS n", [value])
    assert await rows_of(echoed) == [[value, len(value)]]
    assert run_sql(shop_database, "SELECT count(*) FROM app.people") == [(4,)]
    assert run_sql(shop_database, "SELECT count(*) FROM app.hidden") == [(1,)]


@pytest.mark.parametrize("query", ["SELECT * FROM $1", "SELECT name FROM app.$1", "SELECT $1.name FROM app.people",
                                   "SELECT id FROM app.people ORDER BY $1 COLLATE \"C\" LIMIT 1"])
async def test_a_parameter_cannot_stand_for_a_name(make_gateway: GatewayFactory, shop_database: str, query: str) -> None:
    """Where the grammar wants a name, ``$1`` is a syntax error or a value; never a table or a column."""
    client = await opened(make_gateway, shop_database)
    response = await post(client, query, ["app.hidden"])
    if response.status == 200:  # a value to sort by: the same for every row, so no column is read through it
        assert await rows_of(response) != [["not yours"]]
    else:
        assert response.status == 400, await response.text()


async def test_parameters_do_not_widen_access(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await opened(make_gateway, shop_database)
    response = await post(client, "SELECT secret FROM app.hidden WHERE id = $1", [1])
    error = await error_of(response)
    assert response.status == 400 and error["error"] == "query_rejected" and "not granted" in error["message"]


async def test_a_long_value_is_sized_as_a_literal_of_its_size_is(make_gateway: GatewayFactory, shop_database: str) -> None:
    """``repeat`` over a value: the guard's decision for the value sent is its decision for that literal."""
    client = await opened(make_gateway, shop_database)
    long_value = "x" * 20_000  # a thousand times over: 20 MB, over max_built_value_bytes (8 MiB)
    for value in ("ab", long_value):
        bound = await post(client, "SELECT length(repeat($1, 1000)) AS n", [value])
        literal = await post(client, f"SELECT length(repeat('{value}', 1000)) AS n", [])
        assert bound.status == literal.status, (await bound.text())[:300]
    short = await post(client, "SELECT length(repeat($1, 1000)) AS n", ["ab"])
    assert await rows_of(short) == [[2000]]
    refused = await post(client, "SELECT length(repeat($1, 1000)) AS n", [long_value])
    error = await error_of(refused)
    assert refused.status == 400 and error["error"] == "query_rejected", error
    assert "$1" in error["message"] and long_value[:100] not in error["message"]


async def test_one_shape_with_many_names_is_checked_once(make_gateway: GatewayFactory, shop_database: str) -> None:
    """The guard cache keys a text value by its length: 200 names of one length, one decision reused 199 times."""
    client = await opened(make_gateway, shop_database)
    for number in range(200):
        response = await post(client, "SELECT id FROM app.people WHERE name = $1", [f"name-{number:04d}"])
        assert await rows_of(response) == []
    state = client.app[REGISTRY].state
    pool = client.app[POOLS].get(state.databases["p"])
    assert pool.guard_cache.hits == 199  # type: ignore[attr-defined]


async def test_a_bound_query_past_the_time_limit_is_cancelled(make_gateway: GatewayFactory, shop_database: str) -> None:
    """The statement time limit and the cancel work for a bound query; the pool answers again afterwards."""
    client = await make_gateway(statement_timeout=1)
    await register_database(client, "p", shop_database)
    await grant(client, TOKEN, "p_app_people")
    slow = "SELECT count(*) FROM app.people, generate_series(1, $1::bigint) AS g WHERE g % 7 = $2"
    response = await post(client, slow, [1_000_000_000, 3])
    assert response.status == 504, await response.text()
    assert await rows_of(await post(client, "SELECT id FROM app.people WHERE id = $1", [3])) == [[3]]


def _waiting_on_a_lock(shop_database: str) -> bool:
    rows = run_sql(shop_database, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                             "AND wait_event_type = 'Lock' AND query LIKE 'DECLARE%'")
    return rows[0][0] > 0


async def test_a_pipeline_stuck_on_a_lock_is_cancelled_at_the_time_limit(make_gateway: GatewayFactory,
                                                                         shop_database: str) -> None:
    """The DECLARE of a bound query waits for a lock another session holds: 504 at the limit, the server's
    statement cancelled (it waits no more), and the pool's connection answers the next query."""
    client = await make_gateway(statement_timeout=1, pool_max_size=1, pool_min_size=1)
    await register_database(client, "p", shop_database)
    await grant(client, TOKEN, "p_app_people")
    holder = connect(shop_database)
    try:
        holder.autocommit = False
        holder.cursor().execute("LOCK TABLE app.people IN ACCESS EXCLUSIVE MODE")
        response = await post(client, "SELECT id FROM app.people WHERE id = $1", [1])
        assert response.status == 504, await response.text()
        assert not _waiting_on_a_lock(shop_database)
    finally:
        holder.rollback()
        holder.close()
    assert await rows_of(await post(client, "SELECT id FROM app.people WHERE id = $1", [1])) == [[1]]


async def test_a_client_gone_while_its_pipeline_waits_cancels_it(make_gateway: GatewayFactory, shop_database: str) -> None:
    """A request cancelled while its DECLARE waits for a lock: the statement is cancelled on the server and the
    connection goes back to the pool usable."""
    client = await make_gateway(statement_timeout=30, pool_max_size=1, pool_min_size=1)
    await register_database(client, "p", shop_database)
    await grant(client, TOKEN, "p_app_people")
    holder = connect(shop_database)
    try:
        holder.autocommit = False
        holder.cursor().execute("LOCK TABLE app.people IN ACCESS EXCLUSIVE MODE")
        request = asyncio.ensure_future(post(client, "SELECT id FROM app.people WHERE id = $1", [1]))
        await wait_until(lambda: _waiting_on_a_lock(shop_database), 10, "the DECLARE waits for the lock")
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await request
        await wait_until(lambda: not _waiting_on_a_lock(shop_database), 10, "the DECLARE was cancelled on the server")
    finally:
        holder.rollback()
        holder.close()
    assert await rows_of(await post(client, "SELECT id FROM app.people WHERE id = $1", [2])) == [[2]]
