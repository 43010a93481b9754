"""GetData over real HTTP against a real PostgreSQL: answer shape, inputs, values, limits, errors, allowlist.

One scratch database serves the whole module; each test starts its own
gateway (the ``gateway`` or ``make_gateway`` fixtures) and registers it.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer

from drivers.postgres import PostgresDriver
from drivers.postgres.pool import PostgresPool
from gateway.web.app import create_app, server_options
from gateway.web.keys import POOLS, REGISTRY

from support import (
    error_of,
    gateway_config,
    GatewayFactory,
    grant,
    register_database,
    run_sql,
    stalled_getdata,
    user_headers,
    wait_until,
)

TOKEN = "getdata-reader-token-7f3a"
"""The user token the module's tests read with; granted every table below except public.secrets."""

SHOP_SQL = r"""
CREATE SCHEMA sales;
CREATE SCHEMA hr;
CREATE SCHEMA "Sales";
CREATE TABLE sales.customers (id integer PRIMARY KEY, name text NOT NULL, region text);
INSERT INTO sales.customers VALUES (1, 'Ann', 'north'), (2, 'Bob', 'south'), (3, 'Cid', 'north');
CREATE TABLE sales.orders (id integer PRIMARY KEY, customer_id integer, total numeric(10, 2));
INSERT INTO sales.orders VALUES (10, 1, 5.00), (11, 1, 20.50), (12, 2, 7.25), (13, 3, 30.00), (14, 3, 1.00);
CREATE TABLE hr.employees (id integer PRIMARY KEY, name text, region text);
INSERT INTO hr.employees VALUES (1, 'Eve', 'north'), (2, 'Dan', 'south');
CREATE TABLE "Sales"."Order Lines" ("Line No" integer, "Qty" integer, "Order Id" integer);
INSERT INTO "Sales"."Order Lines" VALUES (1, 3, 10), (2, 1, 10), (3, 7, 11);
CREATE TABLE public.secrets (id integer, secret text);
INSERT INTO public.secrets VALUES (1, 'do not read');
CREATE TABLE public.every_type (
    i2 smallint, i4 integer, i8 bigint, num numeric,
    r real, r_nan real, d double precision, d_nan double precision, d_inf double precision, d_ninf double precision,
    b boolean, t text,
    dt date, tm time, ts timestamp, tstz timestamptz, iv interval,
    u uuid, ip inet, net cidr, mac macaddr,
    j json, jb jsonb,
    ia integer[], iaa integer[][], ta text[],
    by bytea
);
INSERT INTO public.every_type VALUES (
    12, -7, 9007199254740993, '12345678901234567890.1234567890',
    1.5, 'NaN', 0.1, 'NaN', 'Infinity', '-Infinity',
    true, E'h\u00e9llo "q"\n',
    '2024-02-29', '13:14:15.5', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15+02',
    '1 year 2 months 3 days 4 hours 5 minutes 6 seconds',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '192.168.0.1/24', '10.0.0.0/8', '08:00:2b:01:02:03',
    '{"b": 1, "a": [true, null, "x"]}', '{"nested": {"n": 1.5, "list": [1, 2]}}',
    '{1,2,3}', '{{1,2},{3,NULL}}', '{"a b","c,d",NULL}',
    '\x0001ff'
);
INSERT INTO public.every_type DEFAULT VALUES;
"""

GRANTED_TABLES = (
    "shop_sales_customers",
    "shop_sales_orders",
    "shop_hr_employees",
    "shop_Sales_Order Lines",
    "shop_public_every_type",
)
SHOP_GRANTS = {TOKEN: GRANTED_TABLES}
"""The grants of the ``shop`` fixture (conftest.py), as ``open_shop`` makes them."""

EVERY_TYPE_COLUMNS = [
    ("i2", "smallint"), ("i4", "integer"), ("i8", "bigint"), ("num", "numeric"),
    ("r", "real"), ("r_nan", "real"), ("d", "double precision"), ("d_nan", "double precision"),
    ("d_inf", "double precision"), ("d_ninf", "double precision"),
    ("b", "boolean"), ("t", "text"),
    ("dt", "date"), ("tm", "time without time zone"), ("ts", "timestamp without time zone"),
    ("tstz", "timestamp with time zone"), ("iv", "interval"),
    ("u", "uuid"), ("ip", "inet"), ("net", "cidr"), ("mac", "macaddr"),
    ("j", "json"), ("jb", "jsonb"),
    ("ia", "integer[]"), ("iaa", "integer[]"), ("ta", "text[]"),
    ("by", "bytea"),
]  # fmt: skip

EVERY_TYPE_VALUES: dict[str, Any] = {
    "i2": 12,
    "i4": -7,
    "i8": 9007199254740993,
    "num": "12345678901234567890.1234567890",
    "r": 1.5,
    "r_nan": "NaN",
    "d": 0.1,
    "d_nan": "NaN",
    "d_inf": "Infinity",
    "d_ninf": "-Infinity",
    "b": True,
    "t": 'h\u00e9llo "q"\n',
    "dt": "2024-02-29",
    "tm": "13:14:15.5",
    "ts": "2024-02-29T13:14:15.123456",
    "tstz": "2024-02-29T11:14:15+00:00",
    "iv": "P1Y2M3DT4H5M6S",
    "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    "ip": "192.168.0.1/24",
    "net": "10.0.0.0/8",
    "mac": "08:00:2b:01:02:03",
    "j": {"b": 1, "a": [True, None, "x"]},
    "jb": {"nested": {"n": 1.5, "list": [1, 2]}},
    "ia": [1, 2, 3],
    "iaa": [[1, 2], [3, None]],
    "ta": ["a b", "c,d", None],
    "by": "\\x0001ff",
}

GETDATA_CONTENT_TYPE = "text/javascript; charset=utf-8"

# A query that runs far longer than any statement time limit a test sets, without pg_sleep.
SLOW_QUERY = "select count(*) from sales.customers, generate_series(1, 1000000000)"


async def open_shop(client: TestClient, database: str, local_name: str = "shop") -> TestClient:
    """Register ``database`` as ``local_name`` and grant TOKEN every table but public.secrets."""
    await register_database(client, local_name, database)
    for table in GRANTED_TABLES:
        await grant(client, TOKEN, table.replace("shop", local_name, 1))
    return client


@pytest.fixture
async def url_sized_gateway(tmp_path: Path, shop_database: str) -> AsyncIterator[TestClient]:
    """A shop gateway whose HTTP server runs with ``server_options`` (room for a 100 KiB query in the URL).

    aiohttp's ``TestServer(app, **options)`` drops the options; only ``start_server(**options)``
    applies them, as ``web.run_app`` does in production.
    """
    config = gateway_config(tmp_path / "url_sized")
    server = TestServer(create_app(config, log_stream=io.StringIO()))
    await server.start_server(**server_options(config))
    client = TestClient(server)
    await client.start_server()
    try:
        yield await open_shop(client, shop_database)
    finally:
        await client.close()


async def get_data(
    client: TestClient, query: str, *, database: str = "shop", token: str | None = TOKEN
) -> ClientResponse:
    """GET /GetData with both inputs in the query string."""
    # No Accept header: the default media type (user_headers asks for application/json).
    headers = {"user_token": token} if token is not None else {}
    return await client.get("/GetData", params={"local_database_name": database, "query": query}, headers=headers)


async def result_of(response: ClientResponse) -> dict[str, Any]:
    """The one result object of a successful GetData answer, after checking the contract's shape."""
    text = await response.text()
    assert response.status == 200, text
    asked_json = "application/json" in response.request_info.headers.get("Accept", "")
    assert response.headers["Content-Type"] == ("application/json; charset=utf-8" if asked_json else GETDATA_CONTENT_TYPE)
    body = json.loads(text)
    assert isinstance(body, list) and len(body) == 1, body
    result = body[0]
    # The contract's fields in its order; a result the row limit cut adds its continuation token last.
    contract_fields = ["status", "columns", "data", "row_count", "truncated"]
    assert list(result) == contract_fields + (["next"] if result.get("truncated") else []), result
    assert result["status"] == "success"
    assert all(list(column) == ["name", "type"] for column in result["columns"]), result["columns"]
    names = [column["name"] for column in result["columns"]]
    assert all(list(row) == names for row in result["data"]), "rows must be keyed by column name, in column order"
    assert result["row_count"] == len(result["data"])
    return result


async def query_result(client: TestClient, query: str, **options: Any) -> dict[str, Any]:
    return await result_of(await get_data(client, query, **options))


def busy_gateway_backends(database: str) -> list[tuple[Any, ...]]:
    """Gateway sessions on ``database`` that are running something or sit inside a transaction."""
    return run_sql(
        database,
        "SELECT pid, state, query FROM pg_catalog.pg_stat_activity "
        "WHERE datname = current_database() AND application_name = 'dbgateway' "
        "AND state IS DISTINCT FROM 'idle'",
    )


def waiting_for_a_connection(client: TestClient) -> int:
    """How many requests wait for a connection of "shop"'s pool (for a slot, or for aiopg's pool)."""
    pool = client.app[POOLS].get(client.app[REGISTRY].state.databases["shop"])
    assert isinstance(pool, PostgresPool)
    # Neither the slots nor aiopg tell their queue publicly; the test reads it to know the request is there.
    turns = len(pool._runaways.slots._turns)  # noqa: SLF001
    connections = pool._pool._cond._waiters if pool._pool is not None else None  # noqa: SLF001
    return turns + len(connections or ())


async def wait_for_backends(
    database: str, state: str, count: int, timeout: float = 5.0, running: str = ""
) -> list[tuple[Any, ...]]:
    """Poll until ``count`` gateway sessions on ``database`` are in ``state`` (with ``running`` in the query); return them."""
    deadline = time.monotonic() + timeout
    while True:
        rows = [row for row in busy_gateway_backends(database) if row[1] == state and running in row[2]]
        if len(rows) >= count or time.monotonic() > deadline:
            assert len(rows) >= count, rows
            return rows
        await asyncio.sleep(0.05)


class TestSuccessShape:
    async def test_simple_query(self, shop: TestClient) -> None:
        """A plain SELECT answers the contract's array of one result, rows keyed by column in order."""
        result = await query_result(shop, "select id, name from sales.customers order by id")
        assert result["columns"] == [{"name": "id", "type": "integer"}, {"name": "name", "type": "text"}]
        assert result["data"] == [{"id": 1, "name": "Ann"}, {"id": 2, "name": "Bob"}, {"id": 3, "name": "Cid"}]
        assert result["row_count"] == 3 and result["truncated"] is False

    async def test_body_text_is_exactly_the_documented_layout(self, shop: TestClient) -> None:
        """The body is byte for byte the contract's layout for a small result."""
        response = await get_data(shop, "select id, region from sales.customers where id = 2")
        assert response.status == 200
        assert await response.text() == (
            '[{"status":"success","columns":[{"name":"id","type":"integer"},{"name":"region","type":"text"}],'
            '"data":[{"id":2,"region":"south"}],"row_count":1,"truncated":false}]'
        )

    async def test_join_across_two_schemas(self, shop: TestClient) -> None:
        """A join of granted tables in two schemas answers every joined row."""
        result = await query_result(
            shop,
            "select c.name as customer, e.name as employee "
            "from sales.customers c join hr.employees e on e.region = c.region order by c.id",
        )
        assert result["columns"] == [{"name": "customer", "type": "text"}, {"name": "employee", "type": "text"}]
        assert result["data"] == [
            {"customer": "Ann", "employee": "Eve"},
            {"customer": "Bob", "employee": "Dan"},
            {"customer": "Cid", "employee": "Eve"},
        ]

    async def test_aggregate(self, shop: TestClient) -> None:
        """GROUP BY with count and sum: bigint as a number, numeric as an exact string."""
        result = await query_result(
            shop,
            "select c.region, count(*) as orders, sum(o.total) as total "
            "from sales.customers c join sales.orders o on o.customer_id = c.id group by c.region order by c.region",
        )
        assert [column["type"] for column in result["columns"]] == ["text", "bigint", "numeric"]
        assert result["data"] == [
            {"region": "north", "orders": 4, "total": "56.50"},
            {"region": "south", "orders": 1, "total": "7.25"},
        ]

    async def test_common_table_expression(self, shop: TestClient) -> None:
        """A WITH query over a granted table answers its rows."""
        result = await query_result(
            shop,
            "with big as (select customer_id from sales.orders where total > 4) "
            "select customer_id, count(*) as n from big group by customer_id order by customer_id",
        )
        assert result["data"] == [{"customer_id": 1, "n": 2}, {"customer_id": 2, "n": 1}, {"customer_id": 3, "n": 1}]

    async def test_union_across_schemas(self, shop: TestClient) -> None:
        """UNION of two granted tables in different schemas removes duplicates and keeps the order asked."""
        result = await query_result(
            shop, "select name from sales.customers union select name from hr.employees order by name"
        )
        assert result["data"] == [{"name": name} for name in ("Ann", "Bob", "Cid", "Dan", "Eve")]

    async def test_lateral_subquery(self, shop: TestClient) -> None:
        """A LATERAL subquery sees the outer row."""
        result = await query_result(
            shop,
            "select c.name, top.total from sales.customers c cross join lateral "
            "(select o.total from sales.orders o where o.customer_id = c.id order by o.total desc limit 1) top "
            "order by c.id",
        )
        assert result["data"] == [
            {"name": "Ann", "total": "20.50"},
            {"name": "Bob", "total": "7.25"},
            {"name": "Cid", "total": "30.00"},
        ]

    async def test_window_functions_over_two_schemas(self, shop: TestClient) -> None:
        """Window functions over a join of two schemas number and sum per partition."""
        result = await query_result(
            shop,
            "select c.id, e.name as rep, row_number() over (partition by e.id order by c.id) as rn, "
            "count(*) over (partition by e.id) as team "
            "from sales.customers c join hr.employees e on e.region = c.region order by c.id",
        )
        assert result["data"] == [
            {"id": 1, "rep": "Eve", "rn": 1, "team": 2},
            {"id": 2, "rep": "Dan", "rn": 1, "team": 1},
            {"id": 3, "rep": "Eve", "rn": 2, "team": 2},
        ]

    async def test_mixed_case_and_spaces_in_names(self, shop: TestClient) -> None:
        """Quoted schema, table and column names with capitals and spaces work and come back as written."""
        result = await query_result(
            shop,
            'select "Line No", "Qty" * 2 as "Double Qty" from "Sales"."Order Lines" '
            'where "Order Id" = 10 order by "Line No"',
        )
        assert result["columns"] == [{"name": "Line No", "type": "integer"}, {"name": "Double Qty", "type": "integer"}]
        assert result["data"] == [{"Line No": 1, "Double Qty": 6}, {"Line No": 2, "Double Qty": 2}]

    async def test_repeated_column_names_keep_every_value(self, shop: TestClient) -> None:
        """A repeated column name becomes id_2, id_3 and columns show the names used."""
        result = await query_result(
            shop,
            "select c.id, o.id, o.customer_id as id from sales.customers c "
            "join sales.orders o on o.customer_id = c.id where o.id = 12",
        )
        assert [column["name"] for column in result["columns"]] == ["id", "id_2", "id_3"]
        assert result["data"] == [{"id": 2, "id_2": 12, "id_3": 2}]

    async def test_suffix_never_takes_a_name_the_result_has(self, shop: TestClient) -> None:
        """When the result really has a column id_2, the repeated id skips to id_3 and nothing is lost."""
        result = await query_result(shop, "select 1 as id, 2 as id, 3 as id_2 from sales.customers where id = 1")
        assert result["data"] == [{"id": 1, "id_3": 2, "id_2": 3}]

    async def test_empty_result(self, shop: TestClient) -> None:
        """A query with no rows still names its columns and answers an empty data array."""
        result = await query_result(shop, "select id from sales.customers where false")
        assert result["columns"] == [{"name": "id", "type": "integer"}]
        assert result["data"] == [] and result["row_count"] == 0 and result["truncated"] is False


class TestInputs:
    async def test_json_body_on_get(self, shop: TestClient) -> None:
        """GET with a JSON body carrying both inputs works."""
        response = await shop.get(
            "/GetData",
            json={"local_database_name": "shop", "query": "select name from sales.customers where id = 1"},
            headers=user_headers(TOKEN),
        )
        assert (await result_of(response))["data"] == [{"name": "Ann"}]

    async def test_inputs_split_between_query_string_and_body(self, shop: TestClient) -> None:
        """The body supplies what the query string does not give."""
        response = await shop.get(
            "/GetData",
            params={"local_database_name": "shop"},
            json={"query": "select name from sales.customers where id = 3"},
            headers=user_headers(TOKEN),
        )
        assert (await result_of(response))["data"] == [{"name": "Cid"}]

    async def test_post_with_a_long_query(self, shop: TestClient) -> None:
        """POST /GetData takes a JSON body; a ~50 KB query runs."""
        excluded = ", ".join(f"'nobody-{number:05d}'" for number in range(3500))
        query = f"select count(*) as n from sales.customers where name not in ({excluded})"
        assert 45_000 < len(query) < 60_000
        response = await shop.post(
            "/GetData", json={"local_database_name": "shop", "query": query}, headers=user_headers(TOKEN)
        )
        assert (await result_of(response))["data"] == [{"n": 3}]

    async def test_post_with_trailing_slash(self, shop: TestClient) -> None:
        """POST /GetData/ is the same operation."""
        response = await shop.post(
            "/GetData/", json={"local_database_name": "shop", "query": "select 1 as one"}, headers=user_headers(TOKEN)
        )
        assert (await result_of(response))["data"] == [{"one": 1}]

    @pytest.mark.parametrize("field", ["query", "local_database_name"])
    async def test_field_given_differently_twice_is_ambiguous(self, shop: TestClient, field: str) -> None:
        """The same field with different values in query string and body is 400 ambiguous_request naming it."""
        inputs = {"local_database_name": "shop", "query": "select 1 as one"}
        other = {"query": "select 2 as two", "local_database_name": "elsewhere"}[field]
        response = await shop.post(
            "/GetData", params=inputs, json={**inputs, field: other}, headers=user_headers(TOKEN)
        )
        assert response.status == 400
        body = await error_of(response)
        assert body["error"] == "ambiguous_request"
        assert repr(field) in body["message"]

    async def test_field_given_identically_twice_is_fine(self, shop: TestClient) -> None:
        """The same value in both places is no conflict."""
        inputs = {"local_database_name": "shop", "query": "select 1 as one"}
        response = await shop.post("/GetData", params=inputs, json=inputs, headers=user_headers(TOKEN))
        assert (await result_of(response))["data"] == [{"one": 1}]

    @pytest.mark.parametrize("missing", ["local_database_name", "query"])
    async def test_missing_input_is_bad_request_naming_it(self, shop: TestClient, missing: str) -> None:
        """Leaving out an input is 400 bad_request naming it; an empty value counts as missing."""
        inputs = {"local_database_name": "shop", "query": "select 1"}
        for variant in ({k: v for k, v in inputs.items() if k != missing}, {**inputs, missing: ""}):
            response = await shop.get("/GetData", params=variant, headers=user_headers(TOKEN))
            assert response.status == 400
            body = await error_of(response)
            assert body["error"] == "bad_request"
            assert repr(missing) in body["message"]

    async def test_query_of_exactly_the_limit_runs(self, shop: TestClient) -> None:
        """Query text of exactly 100 KiB is accepted."""
        head = "select 1 as one -- "
        query = head + "x" * (100 * 1024 - len(head))
        response = await shop.post(
            "/GetData", json={"local_database_name": "shop", "query": query}, headers=user_headers(TOKEN)
        )
        assert (await result_of(response))["data"] == [{"one": 1}]

    async def test_query_over_the_limit_in_body_is_413(self, shop: TestClient) -> None:
        """Query text over 100 KiB in a POST body is 413 payload_too_large."""
        query = "select 1 -- " + "x" * (100 * 1024)
        response = await shop.post(
            "/GetData", json={"local_database_name": "shop", "query": query}, headers=user_headers(TOKEN)
        )
        assert response.status == 413
        assert (await error_of(response))["error"] == "payload_too_large"

    async def test_query_over_the_limit_in_query_string_is_413(self, url_sized_gateway: TestClient) -> None:
        """Query text over 100 KiB in the URL is 413 payload_too_large, as JSON; 100 KiB exactly runs."""
        response = await get_data(url_sized_gateway, "select 1 -- " + "x" * (100 * 1024))
        assert response.status == 413
        assert (await error_of(response))["error"] == "payload_too_large"
        head = "select 1 as one -- "
        response = await get_data(url_sized_gateway, head + "x" * (100 * 1024 - len(head)))
        assert (await result_of(response))["data"] == [{"one": 1}]

    async def test_unknown_database_is_403(self, shop: TestClient) -> None:
        """A local database name nobody registered is 403 access_denied, as one without a grant (no oracle)."""
        response = await get_data(shop, "select 1", database="no_such_shop")
        assert response.status == 403
        assert (await error_of(response))["error"] == "access_denied"

    async def test_no_token_is_401(self, shop: TestClient) -> None:
        """GetData without a user_token header is 401 token_required."""
        response = await get_data(shop, "select id from sales.customers", token=None)
        assert response.status == 401
        assert (await error_of(response))["error"] == "token_required"

    async def test_token_without_grant_in_the_database_is_403(self, shop: TestClient) -> None:
        """A token with no grant in the database asked for is 403 access_denied, even for a constant query."""
        for query in ("select id from sales.customers", "select 1"):
            response = await get_data(shop, query, token="token-nobody-granted")
            assert response.status == 403
            assert (await error_of(response))["error"] == "access_denied"

    async def test_grant_in_one_database_does_not_open_another(self, shop: TestClient, shop_database: str) -> None:
        """A table granted in database A is refused when the query is sent to database B."""
        await register_database(shop, "mirror", shop_database)
        response = await get_data(shop, "select id from sales.customers", database="mirror")
        assert response.status == 403
        assert (await error_of(response))["error"] == "access_denied"
        # With some other grant in B, the table granted only in A is still refused there.
        await grant(shop, TOKEN, "mirror_hr_employees")
        response = await get_data(shop, "select id from sales.customers", database="mirror")
        assert response.status == 400
        body = await error_of(response)
        assert body["error"] == "query_rejected"
        assert 'table "sales.customers" is not granted to this token' in body["message"]
        assert (await query_result(shop, "select id from hr.employees order by id", database="mirror"))["data"] == [
            {"id": 1},
            {"id": 2},
        ]


class TestValues:
    async def test_every_contract_type_round_trips(self, shop: TestClient) -> None:
        """Each type of the contract's list reaches the client as the documented JSON value and type name."""
        result = await query_result(shop, "select * from public.every_type order by i4 nulls last")
        assert [(column["name"], column["type"]) for column in result["columns"]] == EVERY_TYPE_COLUMNS
        first, empty = result["data"]
        for name, expected in EVERY_TYPE_VALUES.items():
            assert first[name] == expected, name
            assert type(first[name]) is type(expected), name
        assert empty == {name: None for name, _ in EVERY_TYPE_COLUMNS}

    async def test_computed_values(self, shop: TestClient) -> None:
        """Expressions keep their types: arrays of arrays, non-finite floats, intervals and timestamptz offsets."""
        result = await query_result(
            shop,
            "select array[array['a', 'b'], array['c', null]] as grid, "
            "'-Infinity'::real as low, 'NaN'::numeric as nan_numeric, "
            "interval '-1 day 2 hours' as back, interval '0' as zero, "
            "timestamptz '2024-01-02 03:04:05.25-05:30' as offset_time, "
            "jsonb_build_object('k', array[1, 2], 'n', null) as built, "
            "'[1, {\"a\": \"b\"}]'::json -> 1 as picked",
        )
        assert result["data"] == [
            {
                "grid": [["a", "b"], ["c", None]],
                "low": "-Infinity",
                "nan_numeric": "NaN",
                "back": "P-1DT2H",
                "zero": "PT0S",
                "offset_time": "2024-01-02T08:34:05.25+00:00",
                "built": {"k": [1, 2], "n": None},
                "picked": {"a": "b"},
            }
        ]


    async def test_values_of_later_batches_are_those_of_the_first(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """Later batches read the Python-cast types as text and cast them after the next FETCH went out.

        With 2-row fetches, every pair of rows after the first (which came with DECLARE, cast by the
        connection's casters) must repeat it value for value: floats' NaN and infinities, timestamps with
        offsets, BC and infinity, json a strict parser refuses, jsonb with a number beyond a double, NULLs.
        """
        client = await open_shop(await make_gateway(fetch_batch_size=2), shop_database)
        long_number = "1" + "0" * 400
        result = await query_result(
            client,
            "select e.*, timestamp '0044-03-15 12:00:00 BC' as bc, timestamptz 'infinity' as forever, "
            "timetz '03:04:05+02' as tz, '1e400'::json as big, "
            f"'[{long_number}]'::jsonb as bigb, 'NaN'::float4 as f4, g "
            "from public.every_type as e cross join generate_series(1, 7) as g order by g, e.i4 nulls last",
        )
        rows = result["data"]
        assert len(rows) == 14 and result["truncated"] is False
        first = [{name: value for name, value in row.items() if name != "g"} for row in rows[:2]]
        assert first[0]["ts"] == "2024-02-29T13:14:15.123456" and first[0]["bigb"] == f"[{long_number}]"
        for index, row in enumerate(rows):
            assert {name: value for name, value in row.items() if name != "g"} == first[index % 2], index


class TestLimits:
    async def test_result_is_cut_at_the_row_limit(self, make_gateway: GatewayFactory, shop_database: str) -> None:
        """With row_limit=5 a 10-row query answers 5 rows, row_count 5 and truncated true."""
        client = await open_shop(await make_gateway(row_limit=5), shop_database)
        result = await query_result(client, "select g from generate_series(1, 10) as g")
        assert result["data"] == [{"g": n} for n in range(1, 6)]
        assert result["row_count"] == 5 and result["truncated"] is True
        assert isinstance(result["next"], str)  # the next rows' continuation (test_getdata_continuation.py)

    async def test_result_of_exactly_the_limit_is_not_truncated(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """With row_limit=5 a 5-row query answers all 5 rows and truncated false."""
        client = await open_shop(await make_gateway(row_limit=5), shop_database)
        result = await query_result(client, "select id from sales.orders order by id")
        assert [row["id"] for row in result["data"]] == [10, 11, 12, 13, 14]
        assert result["row_count"] == 5 and result["truncated"] is False

    async def test_large_result_streams_chunked(self, make_gateway: GatewayFactory, shop_database: str) -> None:
        """200 000 rows come chunked (no Content-Length) and parse to the full row count."""
        client = await open_shop(await make_gateway(row_limit=250_000), shop_database)
        response = await get_data(client, "select g, 'row ' || g as label from generate_series(1, 200000) as g")
        assert response.status == 200
        assert "Content-Length" not in response.headers
        assert response.headers.get("Transfer-Encoding") == "chunked"
        result = await result_of(response)
        assert result["row_count"] == 200_000 and result["truncated"] is False
        assert result["data"][0] == {"g": 1, "label": "row 1"}
        assert result["data"][-1] == {"g": 200_000, "label": "row 200000"}

    async def test_statement_time_limit_answers_504_and_frees_the_backend(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """A query past statement_timeout=1 is 504 query_timeout once the limit is spent, and no backend keeps running it."""
        client = await open_shop(await make_gateway(statement_timeout=1), shop_database)
        started = time.monotonic()
        response = await get_data(client, SLOW_QUERY)
        elapsed = time.monotonic() - started
        assert response.status == 504, await response.text()
        body = await error_of(response)
        assert body["error"] == "query_timeout"
        # Not before the limit the setting gives; how long after it depends on the machine's load, so no upper
        # bound: SLOW_QUERY alone runs for minutes, so the 504 itself shows the limit stopped it.
        assert elapsed >= 1, elapsed
        assert busy_gateway_backends(shop_database) == []
        # The connection went back to the pool usable.
        assert (await query_result(client, "select count(*) as n from sales.orders"))["data"] == [{"n": 5}]


class TestHoldingTheDatabase:
    async def test_client_that_stops_reading_does_not_keep_the_connection(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """A client that stalls mid-stream loses its stream after client_stall_timeout (not the statement limit)."""
        client = await open_shop(
            await make_gateway(
                statement_timeout=30, client_stall_timeout=1, pool_min_size=1, pool_max_size=1, acquire_timeout=6
            ),
            shop_database,
        )
        query = "select g, repeat('x', 200) as pad from generate_series(1, 100000) as g"
        async with stalled_getdata(client.server.port, TOKEN, "shop", query):
            # Now stop reading. The next request needs the pool's one connection: answered (not 503 after
            # acquire_timeout=6 s) only if the stalled stream gave it back, which statement_timeout=30 would not do.
            result = await query_result(client, "select count(*) as n from sales.orders")
            assert result["data"] == [{"n": 5}]
            assert busy_gateway_backends(shop_database) == []
            assert "getdata_client_stalled" in client.log_stream.getvalue()  # type: ignore[attr-defined]


    async def test_connection_comes_back_with_the_gateway_session(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """After a time-out and a failed query, the pool's one connection still runs read-only with every setting."""
        client = await open_shop(
            await make_gateway(
                statement_timeout=1,
                pool_min_size=1,
                pool_max_size=1,
                drivers={"postgres": {"allow_functions": ["current_setting"]}},
            ),
            shop_database,
        )
        assert (await get_data(client, SLOW_QUERY)).status == 504
        assert (await get_data(client, "select 1 / (id - id) from sales.customers")).status == 400
        settings = ("default_transaction_read_only", "transaction_read_only", "search_path", "statement_timeout",
                    "application_name", "TimeZone", "IntervalStyle")
        result = await query_result(
            client, "select " + ", ".join(f"current_setting('{name}') as \"{name}\"" for name in settings)
        )
        assert result["data"] == [
            {
                "default_transaction_read_only": "on",
                "transaction_read_only": "on",
                "search_path": "pg_catalog",
                "statement_timeout": "1s",
                "application_name": "dbgateway",
                "TimeZone": "UTC",
                "IntervalStyle": "iso_8601",
            }
        ]
        assert busy_gateway_backends(shop_database) == []

    async def test_waiting_request_gets_a_new_connection_when_one_is_discarded(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """When a pool connection dies mid-query, a request waiting for the full pool is served at once."""
        # token_query_limit=2: the second request must wait for the pool, not for its token's turn.
        client = await open_shop(
            await make_gateway(
                statement_timeout=20, pool_min_size=1, pool_max_size=1, acquire_timeout=8, token_query_limit=2
            ),
            shop_database,
        )
        slow = asyncio.ensure_future(get_data(client, SLOW_QUERY))
        # The query itself, not the allowlist read before it: the pool hands its connection on in arrival order.
        running = await wait_for_backends(shop_database, "active", 1, running="generate_series")
        waiting = asyncio.ensure_future(query_result(client, "select count(*) as n from sales.orders"))
        await wait_until(lambda: waiting_for_a_connection(client) == 1, 10, "the second request waits for the pool")
        assert not waiting.done()
        run_sql(None, "SELECT pg_catalog.pg_terminate_backend(%s)", (running[0][0],))
        killed = await slow
        assert killed.status == 503, await killed.text()
        # Served, not 503 after acquire_timeout=8: the dead connection's slot went to the waiting request.
        assert (await waiting)["data"] == [{"n": 5}]


class TestDatabaseErrors:
    @pytest.mark.parametrize(
        ("query", "fragment"),
        [
            pytest.param("select 1 / (id - id) from sales.customers", "division by zero", id="division_by_zero"),
            pytest.param("select nope from sales.customers", 'column "nope" does not exist', id="unknown_column"),
        ],
    )
    async def test_database_refusal_is_query_failed(
        self, shop: TestClient, shop_database: str, query: str, fragment: str
    ) -> None:
        """The database's own error is 400 query_failed with its message; the session is left clean."""
        response = await get_data(shop, query)
        assert response.status == 400
        body = await error_of(response)
        assert body["error"] == "query_failed"
        assert fragment in body["message"]
        assert busy_gateway_backends(shop_database) == []
        assert (await query_result(shop, "select 1 as one"))["data"] == [{"one": 1}]


class TestFunctionAllowlist:
    async def test_new_database_gets_an_allowlist_from_its_catalog(self, shop: TestClient) -> None:
        """A newly registered database allows built-ins such as lower() and refuses pg_read_file()."""
        assert (await query_result(shop, "select lower(name) as n from sales.customers where id = 1"))["data"] == [
            {"n": "ann"}
        ]
        response = await get_data(shop, "select pg_read_file('/etc/passwd')")
        assert response.status == 400
        body = await error_of(response)
        assert body["error"] == "query_rejected"
        assert 'function "pg_read_file" is not allowed' in body["message"]

    async def test_deny_functions_refuses_a_builtin(self, make_gateway: GatewayFactory, shop_database: str) -> None:
        """deny_functions = ["lower"] makes lower() a query_rejected naming it; upper() still works."""
        client = await open_shop(
            await make_gateway(drivers={"postgres": {"deny_functions": ["lower"]}}), shop_database
        )
        response = await get_data(client, "select lower(name) from sales.customers")
        assert response.status == 400
        body = await error_of(response)
        assert body["error"] == "query_rejected"
        assert 'function "lower" is not allowed' in body["message"]
        assert (await query_result(client, "select upper(name) as n from sales.customers where id = 2"))["data"] == [
            {"n": "BOB"}
        ]

    async def test_allow_functions_adds_a_denied_harmless_builtin(
        self, make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
    ) -> None:
        """pg_column_size is denied by its pg_ prefix; allow_functions lets it through."""
        default = await open_shop(await make_gateway(data_dir=tmp_path / "default"), shop_database)
        response = await get_data(default, "select pg_column_size(name) from sales.customers")
        assert response.status == 400
        assert 'function "pg_column_size" is not allowed' in (await error_of(response))["message"]
        client = await open_shop(
            await make_gateway(
                data_dir=tmp_path / "allowing", drivers={"postgres": {"allow_functions": ["pg_column_size"]}}
            ),
            shop_database,
        )
        result = await query_result(client, "select pg_column_size(42::bigint) as size")
        assert result["data"] == [{"size": 8}]

    async def test_deny_wins_over_allow(self, make_gateway: GatewayFactory, shop_database: str) -> None:
        """A name in both allow_functions and deny_functions is refused."""
        client = await open_shop(
            await make_gateway(
                drivers={"postgres": {"allow_functions": ["pg_column_size"], "deny_functions": ["pg_column_size"]}}
            ),
            shop_database,
        )
        response = await get_data(client, "select pg_column_size(42::bigint)")
        assert response.status == 400
        body = await error_of(response)
        assert body["error"] == "query_rejected"
        assert 'function "pg_column_size" is not allowed' in body["message"]

    async def test_allow_functions_overriding_a_denial_is_logged_with_the_reason(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """allow_functions naming a refused function logs allow_functions_overrides_denial with the reason."""
        client = await make_gateway(
            drivers={"postgres": {"allow_functions": ["poly_distance", "xpath", "lower", "regtypesend", "version"]}}
        )
        at_start = {e["function"]: e for e in log_events(client) if e.get("event") == "allow_functions_overrides_denial"}
        assert sorted(at_start) == ["poly_distance", "version", "xpath"]
        assert at_start["poly_distance"]["level"] == "warning"
        assert "cannot interrupt" in at_start["poly_distance"]["reason"]
        assert "libxml2" in at_start["xpath"]["reason"]
        await open_shop(client, shop_database)
        result = await query_result(client, "select poly_distance(polygon '(0,0)', polygon '(3,4)') as d")
        assert result["data"] == [{"d": 5.0}]
        # The catalog's reasons (here: takes regtype) are known when the pool reads the catalog.
        from_catalog = [e for e in log_events(client) if e.get("event") == "allow_functions_overrides_denial"
                        and e["function"] == "regtypesend"]
        assert len(from_catalog) == 1 and "regtype" in from_catalog[0]["reason"]

    BUILT = "select length(repeat('a', 100000)) as n"
    SEARCHED = "select strpos(repeat('a', 20000), repeat('a', 2000) || 'b') as p"

    async def test_the_default_guard_limits_let_these_through(self, shop: TestClient) -> None:
        """A 100 000-byte value built from constants and a search of 20 000 by 2 000 bytes answer by default."""
        assert (await query_result(shop, self.BUILT))["data"] == [{"n": 100000}]
        assert (await query_result(shop, self.SEARCHED))["data"] == [{"p": 0}]

    async def test_guard_limits_are_driver_options(self, make_gateway: GatewayFactory, shop_database: str) -> None:
        """max_built_value_bytes and max_expression_milliseconds are [drivers.postgres] options: smaller limits
        refuse what the defaults let through, naming the setting."""
        limits = {"max_built_value_bytes": 65536, "max_expression_milliseconds": 10}
        client = await open_shop(await make_gateway(drivers={"postgres": limits}), shop_database)
        for sql, setting in ((self.BUILT, "max_built_value_bytes"), (self.SEARCHED, "max_expression_milliseconds")):
            response = await get_data(client, sql)
            assert response.status == 400
            assert setting in (await error_of(response))["message"]

    def test_the_old_literal_bound_is_refused_with_its_replacement(self) -> None:
        """max_bounded_literal_bytes, replaced by the work budget, is an error that names what replaced it."""
        with pytest.raises(ValueError, match="no longer a setting: the guard now budgets work instead"):
            PostgresDriver({"max_bounded_literal_bytes": 3})


def log_events(client: Any) -> list[dict[str, Any]]:
    """The JSON log lines a make_gateway client wrote so far."""
    return [json.loads(line) for line in client.log_stream.getvalue().splitlines() if line.startswith("{")]


class TestMediaType:
    """text/javascript by default (the specification's); the same body as application/json when Accept asks for it."""

    QUERY = "select id from sales.orders order by id"

    async def answer(self, client: TestClient, method: str, accept: str | None) -> tuple[str, bytes]:
        headers = {"user_token": TOKEN} | ({"Accept": accept} if accept is not None else {})
        fields = {"local_database_name": "shop", "query": self.QUERY}
        if method == "GET":
            response = await client.get("/GetData", params=fields, headers=headers)
        else:
            response = await client.post("/GetData", json=fields, headers=headers)
        body = await response.read()
        assert response.status == 200, body
        return response.headers["Content-Type"], body

    @pytest.mark.parametrize("method", ["GET", "POST"])
    async def test_accept_application_json_is_honoured(self, shop: TestClient, method: str) -> None:
        """Accept: application/json answers application/json, byte for byte the default answer's body."""
        default_type, default_body = await self.answer(shop, method, None)
        json_type, json_body = await self.answer(shop, method, "application/json")
        assert default_type == GETDATA_CONTENT_TYPE
        assert json_type == "application/json; charset=utf-8"
        assert json_body == default_body

    @pytest.mark.parametrize(
        ("accept", "expected"),
        [
            ("*/*", GETDATA_CONTENT_TYPE),
            ("text/javascript, application/json", GETDATA_CONTENT_TYPE),
            ("application/json;q=0.5, text/javascript", GETDATA_CONTENT_TYPE),
            ("application/json;q=0", GETDATA_CONTENT_TYPE),
            ("text/html, Application/JSON;q=0.9", "application/json; charset=utf-8"),
            ("application/json, text/javascript;q=0.1", "application/json; charset=utf-8"),
        ],
    )
    async def test_accept_preference_decides(self, shop: TestClient, accept: str, expected: str) -> None:
        """application/json only when Accept prefers it (ties keep the default, q=0 refuses it)."""
        assert (await self.answer(shop, "GET", accept))[0] == expected

    async def test_streamed_answer_follows_accept(self, make_gateway: GatewayFactory, shop_database: str) -> None:
        """A result large enough to stream is application/json too when asked for it."""
        client = await open_shop(await make_gateway(row_limit=250_000), shop_database)
        response = await client.get(
            "/GetData",
            params={"local_database_name": "shop", "query": "select g from generate_series(1, 100000) as g"},
            headers=user_headers(TOKEN) | {"Accept": "application/json"},
        )
        assert response.headers.get("Transfer-Encoding") == "chunked"
        assert response.headers["Content-Type"] == "application/json; charset=utf-8"
        assert (await response.json())[0]["row_count"] == 100_000
