"""Narrowed grants against hostile SQL over HTTP (issue 22): no shape reaches a hidden column or row.

``narrowed_shop.py`` holds the database: tenant 42's rows of accounts are granted, without ``tenant`` and
``email``; every hidden value holds the word HIDDEN. Each hostile query is also sent with the enforcement
switched off (the pool then ignores the narrowing, and grants the child and the partition): it must leak
there, so each of these tests can fail. The plan of a narrowed point lookup is EXPLAINed here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient
from narrowed_shop import (  # noqa: F401  (SHOP_SQL, SHOP_GRANTS: conftest.py's shop)
    ACCOUNTS,
    FILTER,
    SHOP_GRANTS,
    SHOP_SQL,
    TOKEN,
    VISIBLE,
    WHOLE,
    get_data,
    granted,
)
from support import run_sql, table_data

from drivers.postgres.pool import PostgresPool
from gateway.contract.driver_protocol import NarrowedGrant
from gateway.request.auth import hash_user_token
from gateway.web.keys import POOLS, REGISTRY


def _shows_hidden(status: int, text: str) -> bool:
    return status == 200 and ("HIDDEN" in text or '"tenant"' in text or '"email"' in text)


def _answers(status: int, text: str) -> bool:
    return status == 200


def _counts_all(status: int, text: str) -> bool:
    return status == 200 and re.search(r'"n":\s*200\b', text) is not None


HOSTILE: list[Any] = [
    pytest.param("select * from public.accounts", _shows_hidden, id="star"),
    pytest.param("select a.* from public.accounts a", _shows_hidden, id="alias_star"),
    pytest.param("select a as r from public.accounts a", _shows_hidden, id="whole_row"),
    pytest.param("select row_to_json(a) as r from public.accounts a", _shows_hidden, id="row_to_json"),
    pytest.param("select email from public.accounts", _answers, id="hidden_column"),
    pytest.param("select a.tenant from public.accounts a where a.id = 1", _answers, id="hidden_qualified"),
    pytest.param("select ctid, xmin from public.accounts", _answers, id="system_columns"),
    pytest.param("select a.*, b.city from public.accounts a join public.branches b on b.account_id = a.id",
                 _shows_hidden, id="join"),
    pytest.param("select x.* from (select * from public.accounts) x", _shows_hidden, id="sub_select"),
    pytest.param("select id from public.branches where account_id in (select id from public.accounts "
                 "where tenant = 7)", _answers, id="sub_select_in_where"),
    pytest.param("with c as (select * from public.accounts) select * from c", _shows_hidden, id="cte"),
    pytest.param("table public.accounts", _shows_hidden, id="table"),
    pytest.param("select * from public.accounts union all select * from public.accounts", _shows_hidden,
                 id="union"),
    pytest.param("select count(*) as n from public.accounts", _counts_all, id="aggregate"),
    pytest.param("select id, count(*) over () as n from public.accounts", _counts_all, id="window"),
    pytest.param("select * from public.parent", _shows_hidden, id="inheritance_parent"),
    pytest.param("select * from public.child", _answers, id="inheritance_child"),
    pytest.param("select * from public.ledger", _shows_hidden, id="partitioned"),
    pytest.param("select * from public.ledger_7", _answers, id="partition"),
    pytest.param("select id from public.accounts where id > 0 and 1 / (balance - 42) > 0",
                 lambda status, text: status != 200, id="division_side_channel"),
]


@pytest.mark.parametrize(("query", "leaks"), HOSTILE)
async def test_no_shape_reaches_a_hidden_column_or_row(
    shop: TestClient, query: str, leaks: Callable[[int, str], bool]
) -> None:
    """Whatever the query's shape, the answer shows no hidden column or row, and tells nothing of them."""
    status, text = await get_data(shop, query)
    assert not leaks(status, text), text
    assert "HIDDEN" not in text, text


@pytest.mark.parametrize(("query", "leaks"), HOSTILE)
async def test_each_hostile_query_leaks_with_the_enforcement_off(
    shop: TestClient, query: str, leaks: Callable[[int, str], bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same query through a pool that ignores the narrowing (and grants every table) does leak: the test
    above can fail."""
    check_query = PostgresPool.check_query

    async def ignoring(self: PostgresPool, sql: str, granted: frozenset[tuple[str, str]], **ignored: Any) -> Any:
        return await check_query(self, sql, granted | {("public", "child"), ("public", "ledger_7")})

    monkeypatch.setattr(PostgresPool, "check_query", ignoring)
    status, text = await get_data(shop, query)
    assert leaks(status, text), text


async def test_a_hidden_column_is_refused_as_unknown(shop: TestClient) -> None:
    """Naming a hidden column is the same refusal as naming one that does not exist."""
    hidden_status, hidden = await get_data(shop, "select email from public.accounts")
    absent_status, absent = await get_data(shop, "select nosuch from public.accounts")
    assert hidden_status == absent_status == 400
    assert orjson.loads(hidden)["message"].replace("email", "nosuch") == orjson.loads(absent)["message"]


async def test_rows_and_columns_are_those_granted(shop: TestClient) -> None:
    """The token reads tenant 42's rows with the granted columns; a whole grant reads everything."""
    status, text = await get_data(shop, "select * from public.accounts order by id")
    answer = orjson.loads(text)[0]
    assert status == 200 and [c["name"] for c in answer["columns"]] == VISIBLE
    assert answer["row_count"] == 100 and all(row["id"] % 2 == 0 for row in answer["data"])
    await granted(shop, WHOLE, ACCOUNTS)
    status, text = await get_data(shop, "select * from public.accounts", WHOLE)
    assert status == 200 and orjson.loads(text)[0]["row_count"] == 200


async def test_describe_shows_the_granted_columns_only(shop: TestClient) -> None:
    """GetTableData describes the granted columns, in the table's order."""
    response = await table_data(shop, TOKEN, local_table_name=ACCOUNTS)
    body = await response.json()
    assert list(body["TableData"]["columns"]) == VISIBLE


async def test_a_point_lookup_through_a_narrowed_grant_is_an_index_scan(shop: TestClient, shop_database: str) -> None:
    """The pool's checked statement for the narrowed token, EXPLAINed here: an index scan on the primary key."""
    await granted(shop, TOKEN, "shop_public_big", columns="id,tenant", row_filter=FILTER)
    state = shop.app[REGISTRY].state
    pool = shop.app[POOLS].get(state.database("shop"))

    token_hash = hash_user_token(state.token_salt, TOKEN)
    narrowing = {ref: NarrowedGrant(limits.columns, limits.row_filter)
                 for ref, limits in state.narrowing(token_hash, "shop").items()}
    checked = await pool.check_query("select * from public.big where id = 42", state.granted_refs(
        token_hash, "shop"), narrowing=narrowing)
    plan = "\n".join(line for (line,) in run_sql(shop_database, "EXPLAIN " + checked.sql))
    assert "Index Scan using big_pkey" in plan and "Seq Scan" not in plan, plan
    assert run_sql(shop_database, checked.sql) == [(42, 42)]
