"""Catalog reading over HTTP: which relations AddDatabase registers, and their default local names."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiohttp.test_utils import TestClient

from support import (
    admin_headers,
    all_table_names,
    database_from,
    grant,
    register_database,
    rename_table,
    run_sql,
    success_of,
    table_data,
)
# Every relation kind the catalog must register, in schemas and names that need quoting.
CATALOG_SQL = """
CREATE SCHEMA sales;
CREATE SCHEMA "Sales";
CREATE SCHEMA "a.b";
CREATE TABLE public.orders (id integer, note text);
CREATE TABLE sales.customers (id integer, name text);
CREATE TABLE "Sales"."order lines" (line integer, "Qty" real);
CREATE TABLE "a.b"."c.d" (x integer);
CREATE VIEW sales.customer_names AS SELECT name FROM sales.customers;
CREATE MATERIALIZED VIEW sales.order_totals AS SELECT count(*)::bigint AS total, 1.5::numeric AS average;
CREATE TABLE sales.events (id integer, happened timestamp) PARTITION BY RANGE (happened);
CREATE TABLE sales.events_2023 PARTITION OF sales.events FOR VALUES FROM ('2023-01-01') TO ('2024-01-01');
CREATE TABLE sales.events_2024 PARTITION OF sales.events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE FOREIGN DATA WRAPPER dbgw_test_wrapper;
CREATE SERVER dbgw_test_server FOREIGN DATA WRAPPER dbgw_test_wrapper;
CREATE FOREIGN TABLE sales.remote_prices (sku text, price real) SERVER dbgw_test_server;
CREATE SEQUENCE sales.not_a_table;
CREATE INDEX orders_id ON public.orders (id);
CREATE TYPE sales.mood AS ENUM ('ok');
"""

CATALOG_DEFAULT_NAMES = [
    "shop_public_orders",
    "shop_sales_customers",
    "shop_Sales_order lines",
    "shop_a.b_c.d",
    "shop_sales_customer_names",
    "shop_sales_order_totals",
    "shop_sales_events",
    "shop_sales_events_2023",
    "shop_sales_events_2024",
    "shop_sales_remote_prices",
]

@pytest.fixture(scope="module")
def catalog_database() -> Iterator[str]:
    """One database with every relation kind and quoted names; tests only read it."""
    with database_from(CATALOG_SQL) as name:
        yield name


# -- catalog reading and default local names -------------------------------------------------------------


async def test_every_relation_kind_gets_its_default_local_name(gateway: TestClient, catalog_database: str) -> None:
    """Tables, views, materialized, foreign and partitioned tables and partitions get <db>_<folder>_<table>."""
    await register_database(gateway, "shop", catalog_database)
    assert await all_table_names(gateway) == sorted(CATALOG_DEFAULT_NAMES)


async def test_system_schemas_never_appear(gateway: TestClient, catalog_database: str) -> None:
    """Nothing from pg_catalog, information_schema or pg_toast is registered, nor sequences, indexes or types."""
    await register_database(gateway, "shop", catalog_database)
    names = await all_table_names(gateway)
    for prefix in ("shop_pg_catalog_", "shop_information_schema_", "shop_pg_toast"):
        assert not [name for name in names if name.startswith(prefix)]
    assert "shop_sales_not_a_table" not in names
    assert "shop_public_orders_id" not in names
    assert "shop_sales_mood" not in names


async def test_quoted_names_are_kept_exactly_as_the_database_spells_them(
    gateway: TestClient, catalog_database: str
) -> None:
    """A mixed-case schema and a table name with a space are found by full path and described as spelt."""
    await register_database(gateway, "shop", catalog_database)
    path = {"database": "shop", "folder": "Sales", "table": "order lines"}
    response = await gateway.post(
        "/GrantTableAccess/", params={"user_token": "reader-token-0001", **path}, headers=admin_headers()
    )
    assert response.status == 200, await response.text()
    body = await success_of(await table_data(gateway, "reader-token-0001", local_table_name="shop_Sales_order lines"))
    assert body["TableData"] == {
        "columns": {"line": "integer", "Qty": "real"},
        "database_name": "shop",
        "folder_name": "Sales",
        "table_name": "order lines",
    }


async def test_dotted_names_are_one_folder_and_one_table(gateway: TestClient, catalog_database: str) -> None:
    """Schema "a.b" and table "c.d" stay whole: the full path a.b / c.d reaches them."""
    await register_database(gateway, "shop", catalog_database)
    await grant(gateway, "reader-token-0002", "shop_a.b_c.d")
    body = await success_of(await table_data(gateway, "reader-token-0002", database="shop", folder="a.b", table="c.d"))
    assert body["TableData"]["folder_name"] == "a.b"
    assert body["TableData"]["table_name"] == "c.d"
    assert body["TableData"]["columns"] == {"x": "integer"}


async def test_materialized_view_and_partitioned_table_have_columns(gateway: TestClient, catalog_database: str) -> None:
    """GetTableData describes a materialized view and a partitioned parent, not only plain tables."""
    await register_database(gateway, "shop", catalog_database)
    await grant(gateway, "reader-token-0003", "shop_sales_order_totals")
    await grant(gateway, "reader-token-0003", "shop_sales_events")
    totals = await success_of(await table_data(gateway, "reader-token-0003", local_table_name="shop_sales_order_totals"))
    assert totals["TableData"]["columns"] == {"total": "bigint", "average": "numeric"}
    events = await success_of(await table_data(gateway, "reader-token-0003", local_table_name="shop_sales_events"))
    assert events["TableData"]["columns"] == {"id": "integer", "happened": "timestamp without time zone"}


async def test_colliding_default_names_get_numeric_suffixes(gateway: TestClient, scratch_database: str) -> None:
    """Three relations whose <db>_<folder>_<table> coincide get the name, then _2, then _3, each a different table."""
    run_sql(
        scratch_database,
        "CREATE SCHEMA a; CREATE SCHEMA a_b; CREATE SCHEMA a_b_c;"
        "CREATE TABLE a.b_c_d (one integer); CREATE TABLE a_b.c_d (two integer); CREATE TABLE a_b_c.d (three integer)",
    )
    await register_database(gateway, "d", scratch_database)
    names = await all_table_names(gateway)
    assert names == ["d_a_b_c_d", "d_a_b_c_d_2", "d_a_b_c_d_3"]
    found = set()
    for name in names:
        await grant(gateway, "collider-token-001", name)
        description = (await success_of(await table_data(gateway, "collider-token-001", local_table_name=name)))["TableData"]
        found.add((description["folder_name"], description["table_name"]))
    assert found == {("a", "b_c_d"), ("a_b", "c_d"), ("a_b_c", "d")}


async def test_default_name_taken_by_a_renamed_table_of_another_database_gets_a_suffix(
    gateway: TestClient, scratch_database: str
) -> None:
    """A second database's default names skip local names already given (by rename) to another database's tables."""
    run_sql(scratch_database, "CREATE TABLE public.t (id integer); CREATE TABLE public.u (id integer)")
    await register_database(gateway, "one", scratch_database)
    await success_of(
        await rename_table(
            gateway, {"table": {"local_table_name": "one_public_t"}, "new_local_table_name": "two_public_t"}
        )
    )
    await success_of(
        await rename_table(
            gateway, {"table": {"local_table_name": "one_public_u"}, "new_local_table_name": "two_public_t_2"}
        )
    )
    await register_database(gateway, "two", scratch_database)
    assert await all_table_names(gateway, local_database_name="two") == ["two_public_t_3", "two_public_u"]
    assert await all_table_names(gateway, local_database_name="one") == ["two_public_t", "two_public_t_2"]
    await grant(gateway, "checker-token-0001", "two_public_t")
    answer = await table_data(gateway, "checker-token-0001", local_table_name="two_public_t")
    description = (await success_of(answer))["TableData"]
    assert (description["database_name"], description["table_name"]) == ("one", "t")


async def test_registering_an_empty_database_registers_no_table(gateway: TestClient, scratch_database: str) -> None:
    """A database without user relations is registered with no local table name."""
    await register_database(gateway, "empty", scratch_database)
    assert await all_table_names(gateway) == []
