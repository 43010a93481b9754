"""Inheritance and partitions: a granted table never returns rows of inheritance children that were not granted.

GetData reads every table as ONLY, except partitioned tables, whose partitions
hold the table's own rows. Granting or refreshing a table whose inheritance
children are left out of the grants logs ``inheritance_children_not_granted``.
The module's database is read through an account that may read schema ``pub``
only, as the security page advises, so a child in ``sec`` is out of its reach too.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient
from pglast import parser

from drivers.postgres.guard.inheritance import read_as_only
from drivers.postgres.guard.sql_guard import parse_query
from gateway.errors import QueryRejected
from support import (
    GatewayFactory,
    admin_headers,
    create_database,
    drop_database,
    error_of,
    grant,
    read_logs,
    register_database,
    run_sql,
    success_of,
    user_headers,
)

TOKEN = "inheritance-reader-token-5e2a"
OTHER_TOKEN = "inheritance-other-token-77c1"

SHOP_SQL = """
CREATE SCHEMA pub;
CREATE SCHEMA sec;
CREATE TABLE pub.items (id integer, note text);
INSERT INTO pub.items VALUES (1, 'parent');
CREATE TABLE sec.items_child () INHERITS (pub.items);
INSERT INTO sec.items_child VALUES (2, 'child');
CREATE TABLE sec.items_grandchild () INHERITS (sec.items_child);
INSERT INTO sec.items_grandchild VALUES (3, 'grandchild');
CREATE VIEW pub.items_view AS SELECT id, note FROM pub.items;
CREATE TABLE pub.plain (id integer);
CREATE TABLE pub.parted (id integer, note text) PARTITION BY RANGE (id);
CREATE TABLE pub.parted_low PARTITION OF pub.parted FOR VALUES FROM (0) TO (10);
CREATE TABLE sec.parted_high PARTITION OF pub.parted FOR VALUES FROM (10) TO (20);
INSERT INTO pub.parted VALUES (1, 'low'), (11, 'high');
"""

PARENT_ROWS = [{"id": 1, "note": "parent"}]


PUB_READER = f"dbgw_test_reader_{secrets.token_hex(4)}"


@pytest.fixture(scope="module", autouse=True)
def pub_reader(shop_database: str) -> Iterator[str]:
    """PUB_READER, a login role that may read every relation of schema pub and nothing of schema sec."""
    role = PUB_READER
    run_sql(None, f'CREATE ROLE "{role}" LOGIN')
    run_sql(shop_database, f'GRANT USAGE ON SCHEMA pub TO "{role}"')
    run_sql(shop_database, f'GRANT SELECT ON ALL TABLES IN SCHEMA pub TO "{role}"')
    try:
        yield role
    finally:
        run_sql(shop_database, f'DROP OWNED BY "{role}"')
        run_sql(None, f'DROP ROLE "{role}"')


SHOP_REGISTRATION = {"username": PUB_READER, "password": ""}
"""The ``shop`` fixture (conftest.py) reads the module's database through the pub-only role."""


async def rows_of(client: TestClient, query: str, token: str = TOKEN) -> list[dict[str, Any]]:
    """The rows GetData answers for ``query`` on "shop"."""
    response = await client.get(
        "/GetData", params={"local_database_name": "shop", "query": query}, headers=user_headers(token)
    )
    text = await response.text()
    assert response.status == 200, text
    return (await response.json(content_type=None))[0]["data"]


def warnings_about_children(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in entries if entry["event"] == "inheritance_children_not_granted"]


# -- reading --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("select id, note from pub.items order by id", PARENT_ROWS),
        ("select id, note from pub.items* order by id", PARENT_ROWS),
        ("select id, note from pub . items * as i order by id", PARENT_ROWS),
        ("table pub.items", PARENT_ROWS),
        ("with c as (select id from pub.items) select id from c", [{"id": 1}]),
        ("select count(*) as n from pub.items as a join pub.items* as b using (id)", [{"n": 1}]),
        ("select id from pub.items where exists (select 1 from pub.items) union all select 9", [{"id": 1}, {"id": 9}]),
        ("select (select max(id) from pub.items) as top", [{"top": 1}]),
    ],
    ids=["plain", "star", "spaced-star", "table", "cte", "join", "exists-union", "scalar-subquery"],
)
async def test_a_granted_parent_returns_only_its_own_rows(
    shop: TestClient, query: str, expected: list[dict[str, Any]]
) -> None:
    """With pub.items granted and its children in sec not, every way of naming pub.items returns its rows only."""
    await grant(shop, TOKEN, "shop_pub_items")
    assert await rows_of(shop, query) == expected


async def test_a_child_granted_too_is_read_by_its_own_name(gateway: TestClient, shop_database: str) -> None:
    """Granted as well, sec.items_child answers its own rows when named (its own child's rows still not)."""
    # The pub-only account cannot read sec at all; this one can, so what the child answers is up to its grant.
    shop = gateway
    await register_database(shop, "shop", shop_database)
    await grant(shop, TOKEN, "shop_pub_items")
    await grant(shop, TOKEN, "shop_sec_items_child")
    await grant(shop, TOKEN, "shop_sec_items_grandchild")
    assert await rows_of(shop, "select id from pub.items order by id") == [{"id": 1}]
    assert await rows_of(shop, "select id, note from sec.items_child order by id") == [{"id": 2, "note": "child"}]
    every = "select id from pub.items union all select id from sec.items_child union all select id from sec.items_grandchild"
    assert await rows_of(shop, every + " order by id") == [{"id": 1}, {"id": 2}, {"id": 3}]


@pytest.mark.parametrize(
    "query", ["select id, note from pub.parted order by id", "select id, note from pub.parted* order by id"]
)
async def test_a_granted_partitioned_table_returns_its_partitions_rows(shop: TestClient, query: str) -> None:
    """A partitioned table's partitions are its own rows: granting pub.parted returns the one in sec too."""
    await grant(shop, TOKEN, "shop_pub_parted")
    assert await rows_of(shop, query) == [{"id": 1, "note": "low"}, {"id": 11, "note": "high"}]


@pytest.mark.parametrize("partition", ["pub.parted_low", "sec.parted_high"])
async def test_a_partition_named_directly_needs_its_own_grant(shop: TestClient, partition: str) -> None:
    """With only pub.parted granted, a query naming one of its partitions is refused as not granted."""
    await grant(shop, TOKEN, "shop_pub_parted")
    response = await shop.get(
        "/GetData", params={"local_database_name": "shop", "query": f"select id from {partition}"},
        headers=user_headers(TOKEN),
    )
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "query_rejected" and "is not granted to this token" in body["message"]


async def test_a_granted_view_over_the_parent_shows_what_the_view_shows(shop: TestClient) -> None:
    """A view is read with its definition as written: pub.items_view (no ONLY inside) shows the children's rows."""
    await grant(shop, TOKEN, "shop_pub_items_view")
    assert await rows_of(shop, "select id from pub.items_view order by id") == [{"id": 1}, {"id": 2}, {"id": 3}]


async def test_the_audit_names_the_query_sent_not_its_rewrite(shop: TestClient) -> None:
    """A query read as ONLY is audited with the text and fingerprint the client sent, not those of the rewrite."""
    await grant(shop, TOKEN, "shop_pub_items")
    query = "select id from pub.items where id = 1"
    assert await rows_of(shop, query) == [{"id": 1}]
    (entry,) = [e for e in await read_logs(shop, event="audit") if e["action"] == "get_data"]
    assert entry["query"] == query
    assert entry["query_fingerprint"] == parser.fingerprint(query)
    assert entry["query_fingerprint"] != parser.fingerprint("select id from ONLY pub.items where id = 1")


# -- warnings --------------------------------------------------------------------------------------------------


async def test_granting_a_parent_warns_about_the_children_not_granted(shop: TestClient) -> None:
    """Granting pub.items warns naming its children and grandchildren; granting the child warns about the rest."""
    await grant(shop, TOKEN, "shop_pub_items")
    (warning,) = warnings_about_children(await read_logs(shop, level="warning"))
    assert warning["level"] == "warning"
    assert warning["local_table_name"] == "shop_pub_items" and warning["table"] == "pub.items"
    assert warning["children"] == ["sec.items_child", "sec.items_grandchild"]
    assert "not returned through the parent" in warning["hint"]

    await grant(shop, TOKEN, "shop_sec_items_child")
    latest = warnings_about_children(await read_logs(shop, level="warning"))[-1]
    assert (latest["table"], latest["children"]) == ("sec.items_child", ["sec.items_grandchild"])


async def test_granting_tables_without_inheritance_children_does_not_warn(shop: TestClient) -> None:
    """Partitions are not inheritance children; a plain table, a view or a leaf child has none."""
    for table in ("shop_pub_parted", "shop_pub_plain", "shop_pub_items_view", "shop_sec_items_grandchild"):
        await grant(shop, TOKEN, table)
    assert warnings_about_children(await read_logs(shop)) == []


async def test_granting_the_children_first_leaves_nothing_to_warn_about(shop: TestClient) -> None:
    """A parent granted after all its descendants were granted to the same token does not warn."""
    for table in ("shop_sec_items_grandchild", "shop_sec_items_child", "shop_pub_items"):
        await grant(shop, TOKEN, table)
    assert warnings_about_children(await read_logs(shop)) == []


async def test_refreshing_warns_about_children_no_token_was_granted(shop: TestClient) -> None:
    """At refresh each granted parent is checked against every token's grants, once per parent."""
    await grant(shop, TOKEN, "shop_pub_items")
    await grant(shop, OTHER_TOKEN, "shop_sec_items_child")
    before = len(warnings_about_children(await read_logs(shop)))
    response = await shop.post("/Database", params={"local_database_name": "shop"}, headers=admin_headers())
    await success_of(response)
    after_refresh = warnings_about_children(await read_logs(shop))[before:]
    assert [(w["table"], w["children"]) for w in after_refresh] == [
        ("pub.items", ["sec.items_grandchild"]),
        ("sec.items_child", ["sec.items_grandchild"]),
    ]


async def test_a_grant_succeeds_while_the_database_is_down(make_gateway: GatewayFactory) -> None:
    """The grant is saved even when the children cannot be read; a debug line says the warning was skipped."""
    client = await make_gateway(log_level="debug")
    doomed = create_database(SHOP_SQL)
    try:
        await register_database(client, "doomed", doomed)
    finally:
        drop_database(doomed)
    await grant(client, TOKEN, "doomed_pub_items")
    listed = await client.get("/GrantTableAccess/", params={"user_token": TOKEN}, headers=admin_headers())
    assert [t["local_table_name"] for t in (await success_of(listed))[0]["tables"]] == ["doomed_pub_items"]
    entries = await read_logs(client)
    skipped = [e for e in entries if e["event"] == "grant_notes_skipped"]
    assert len(skipped) == 1 and skipped[0]["level"] == "debug" and skipped[0]["local_table_name"] == "doomed_pub_items"
    assert warnings_about_children(entries) == []


# -- the rewrite itself -----------------------------------------------------------------------------------------

PARTITIONED = frozenset({("pub", "parted")})


@pytest.mark.parametrize(
    ("sql", "rewritten"),
    [
        ("select * from pub.items", "select * from ONLY pub.items"),
        ("select * from pub.items*", "select * from ONLY pub.items"),
        ('  /* é */ select \'ü\' as x from "pub" . "it ems" * as i ;', 'select \'ü\' as x from ONLY "pub" . "it ems"  as i'),
        ("table pub.items", "table ONLY pub.items"),
        ("select * from ONLY pub.items, ONLY (pub.other)", "select * from ONLY pub.items, ONLY (pub.other)"),
        ("with c as (select 1 from pub.items) select * from c", "with c as (select 1 from ONLY pub.items) select * from c"),
        ("select * from pub.parted, pub.parted_low", "select * from pub.parted, ONLY pub.parted_low"),
        ("select * from U&\"pub\".items -- end", "select * from ONLY U&\"pub\".items -- end"),
    ],
    ids=["plain", "star", "quoted-unicode-comments", "table", "only-kept", "cte-name-untouched", "partitioned", "uident"],
)
def test_every_inherited_reference_but_partitioned_tables_gets_only(sql: str, rewritten: str) -> None:
    """ONLY goes before each reference written without it (a * after the name goes); partitioned tables keep theirs."""
    assert read_as_only(parse_query(sql), PARTITIONED).sql == rewritten


def test_a_query_with_nothing_to_rewrite_is_returned_as_is() -> None:
    """No relation, or every one ONLY or partitioned: the same checked query, not parsed again."""
    for sql in ("select 1", "select * from ONLY pub.items", "select * from pub.parted"):
        parsed = parse_query(sql)
        assert read_as_only(parsed, PARTITIONED) is parsed


def test_the_rewrite_keeps_the_fingerprint_of_the_query_sent() -> None:
    """The rewritten query runs ONLY, but carries the original's fingerprint (the audit's), not its own."""
    parsed = parse_query("select id from pub.items where id = 7")
    rewritten = read_as_only(parsed, PARTITIONED)
    assert rewritten.sql == "select id from ONLY pub.items where id = 7"
    assert rewritten.fingerprint == parsed.fingerprint != parse_query(rewritten.sql).fingerprint


def test_the_rewrite_is_cached() -> None:
    """The same query and partitioned tables give the very same rewritten query."""
    parsed = parse_query("select id from pub.items where id = 424243")
    assert read_as_only(parsed, PARTITIONED) is read_as_only(parsed, PARTITIONED)


@pytest.mark.parametrize(
    "location",
    [-1, 0, 8, 15, 10_000],
    ids=["missing", "a-keyword", "inside-a-token", "the-other-reference", "past-the-end"],
)
def test_a_rewrite_that_does_not_check_out_is_refused(location: int) -> None:
    """A reference located wrongly (a bug) refuses the query rather than running a different text."""
    parsed = parse_query("select id from pub.items, pub.other")
    sites = [attrs.evolve(s, location=location) if s.name == "other" else s for s in parsed.range_vars]
    broken = attrs.evolve(parsed, range_vars=tuple(sites))
    with pytest.raises(QueryRejected, match="internal check"):
        read_as_only(broken, PARTITIONED)
