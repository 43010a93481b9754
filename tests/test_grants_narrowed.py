"""Grants narrower than a table over HTTP (issue 22): columns, row_filter, expires_at granted, listed, enforced.

The database holds the accounts of two tenants: tenant 42's rows are granted, tenant 7's are not, and the
columns ``tenant`` and ``email`` are hidden. Every hidden value holds the word HIDDEN, so an answer that
shows one is seen at once. Each hostile query is also sent with the enforcement switched off (the pool then
ignores the narrowing): it must leak there, so each of these tests can fail.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient
from support import (
    admin_headers,
    error_of,
    read_logs,
    register_database,
    registry_path,
    run_sql,
    success_of,
    table_data,
    user_headers,
    wait_until,
)

from drivers.postgres.pool import PostgresPool
from gateway.contract.driver_protocol import NarrowedGrant
from gateway.registry.file_format import load_registry
from gateway.request.auth import hash_user_token
from gateway.web.keys import POOLS, REGISTRY

SHOP_SQL = """
CREATE TABLE public.accounts (id integer PRIMARY KEY, tenant integer NOT NULL, balance integer NOT NULL,
    email text NOT NULL, note text);
INSERT INTO public.accounts SELECT i, CASE WHEN i % 2 = 0 THEN 42 ELSE 7 END,
    CASE WHEN i % 2 = 0 THEN i % 40 ELSE 42 END, 'HIDDEN-mail-' || i,
    CASE WHEN i % 2 = 0 THEN 'note ' || i ELSE 'HIDDEN-row-' || i END FROM generate_series(1, 200) i;
CREATE TABLE public.branches (id integer PRIMARY KEY, account_id integer, city text);
INSERT INTO public.branches SELECT i, i, 'city ' || i FROM generate_series(1, 200) i;
CREATE TABLE public.parent (id integer, tenant integer, secret text);
CREATE TABLE public.child () INHERITS (public.parent);
INSERT INTO public.parent VALUES (1, 42, 'HIDDEN-parent-1'), (2, 7, 'HIDDEN-parent-2');
INSERT INTO public.child VALUES (3, 42, 'HIDDEN-child-3'), (4, 7, 'HIDDEN-child-4');
CREATE TABLE public.ledger (id integer, tenant integer, secret text) PARTITION BY LIST (tenant);
CREATE TABLE public.ledger_42 PARTITION OF public.ledger FOR VALUES IN (42);
CREATE TABLE public.ledger_7 PARTITION OF public.ledger FOR VALUES IN (7);
INSERT INTO public.ledger VALUES (1, 42, 'HIDDEN-ledger-1'), (2, 7, 'HIDDEN-ledger-2');
CREATE TABLE public.big (id integer PRIMARY KEY, tenant integer NOT NULL, secret text);
INSERT INTO public.big SELECT i, CASE WHEN i % 2 = 0 THEN 42 ELSE 7 END, 'HIDDEN-big-' || i
    FROM generate_series(1, 50000) i;
ANALYZE;
"""
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""

TOKEN = "narrowed-reader-0001"
WHOLE = "whole-reader-00001"
ACCOUNTS = "shop_public_accounts"
VISIBLE = ["id", "balance", "note"]
FILTER = "tenant = 42"


@pytest.fixture
async def shop(gateway: TestClient, shop_database: str) -> TestClient:
    """A gateway with database "shop"; TOKEN holds narrowed grants of accounts, parent and ledger, and branches."""
    await register_database(gateway, "shop", shop_database)
    await granted(gateway, TOKEN, ACCOUNTS, columns=",".join(VISIBLE), row_filter=FILTER)
    await granted(gateway, TOKEN, "shop_public_parent", columns="id", row_filter=FILTER)
    await granted(gateway, TOKEN, "shop_public_ledger", columns="id", row_filter=FILTER)
    await granted(gateway, TOKEN, "shop_public_branches")
    return gateway


async def grant_with(client: TestClient, user_token: str, local_table_name: str, **params: str) -> ClientResponse:
    return await client.post("/GrantTableAccess/", headers=admin_headers(),
                             params={"user_token": user_token, "local_table_name": local_table_name, **params})


async def granted(client: TestClient, user_token: str, local_table_name: str, **params: str) -> Any:
    return await success_of(await grant_with(client, user_token, local_table_name, **params))


async def listing(client: TestClient, user_token: str) -> list[dict[str, Any]]:
    response = await client.get("/GrantTableAccess/", params={"user_token": user_token}, headers=admin_headers())
    return (await success_of(response))[0]["tables"]  # type: ignore[no-any-return]


async def get_data(client: TestClient, query: str, token: str = TOKEN) -> tuple[int, str]:
    response = await client.post("/GetData", json={"local_database_name": "shop", "query": query},
                                 headers=user_headers(token))
    return response.status, await response.text()


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


async def test_grant_answers_and_listings_show_what_is_granted(shop: TestClient) -> None:
    """The answer and GET listing show columns (table order), the normalised filter and the expiry."""
    answer = await granted(shop, "lister-token-00001", ACCOUNTS, columns="note,id", row_filter="accounts.tenant=42",
                           expires_at="2999-01-01T00:00:00+01:00")
    expected = {"local_table_name": ACCOUNTS, "columns": ["id", "note"], "row_filter": "tenant = 42",
                "expires_at": "2998-12-31T23:00:00Z", "expired": False}
    assert answer == [{"status": "success", "grant": expected}]
    (listed,) = await listing(shop, "lister-token-00001")
    assert listed == {**expected, "database": "shop", "folder": "public", "table": "accounts"}


async def test_granting_again_replaces_the_grant(shop: TestClient) -> None:
    """A second grant replaces the first: here the whole table again, listed as before issue 22."""
    await granted(shop, "replaced-token-0001", ACCOUNTS, columns="id")
    assert await granted(shop, "replaced-token-0001", ACCOUNTS) == [{"status": "success"}]
    (listed,) = await listing(shop, "replaced-token-0001")
    assert listed == {"local_table_name": ACCOUNTS, "database": "shop", "folder": "public", "table": "accounts"}
    status, text = await get_data(shop, "select email from public.accounts where id = 1", "replaced-token-0001")
    assert status == 200 and "HIDDEN-mail-1" in text


async def test_the_columns_may_come_as_a_list_in_the_body(shop: TestClient) -> None:
    """In a JSON body, ``columns`` is a list."""
    response = await shop.post("/GrantTableAccess/", headers=admin_headers(), json={
        "user_token": "body-token-000001", "local_table_name": ACCOUNTS, "columns": ["id", "balance"]})
    assert (await success_of(response))[0]["grant"]["columns"] == ["id", "balance"]


@pytest.mark.parametrize(("params", "fragment"), [
    ({"columns": "id,nosuch"}, "parameter 'columns' names 'nosuch'"),
    ({"columns": "id,,note"}, "parameter 'columns' must name at least one column"),
    ({"row_filter": "tenant = "}, "parameter 'row_filter' is refused: the row filter does not parse"),
    ({"row_filter": "tenant = 42) union select 1 from public.branches where (true"},
     "parameter 'row_filter' is refused"),
    ({"row_filter": "branches.id = 1"}, "not of branches"),
    ({"row_filter": "nosuch = 1"}, "parameter 'row_filter' is refused"),
    ({"row_filter": "pg_read_file('x') is not null"}, "parameter 'row_filter' is refused"),
    ({"row_filter": "random() < 0.5"}, "parameter 'row_filter' is refused"),
    ({"row_filter": "id in (select id from public.branches)"}, "sub-select"),
    ({"expires_at": "tomorrow"}, "parameter 'expires_at' must be an RFC 3339 time"),
    ({"expires_at": "2030-01-01T00:00:00"}, "parameter 'expires_at' must be an RFC 3339 time"),
    ({"expires_at": "2030-02-30T00:00:00Z"}, "parameter 'expires_at' is not a valid time"),
])
async def test_a_bad_input_is_a_400_naming_it_and_changes_nothing(
    shop: TestClient, params: dict[str, str], fragment: str
) -> None:
    """Each bad input is refused with a 400 saying which and why; the registry file stays as it was."""
    before = registry_path(shop).read_bytes()
    response = await grant_with(shop, "refused-token-00001", ACCOUNTS, **params)
    error = await error_of(response)
    assert response.status == 400 and fragment in error["message"], error
    assert registry_path(shop).read_bytes() == before


# -- expiry ----------------------------------------------------------------------------------------------------


def _in(seconds: float) -> str:
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return moment.isoformat().replace("+00:00", "Z")


async def test_an_expired_grant_is_as_if_it_were_not_there(shop: TestClient) -> None:
    """A grant past its time: the 403 of a token never granted, absent from the token's list and describe; the
    admin's listing marks it expired; the audit tells the operator why."""
    await granted(shop, "expired-token-00001", ACCOUNTS, expires_at=_in(-60))
    expired = await get_data(shop, "select id from public.accounts", "expired-token-00001")
    never = await get_data(shop, "select id from public.accounts", "never-token-0000001")
    assert expired[0] == never[0] == 403 and expired[1] == never[1]
    assert (await table_data(shop, "expired-token-00001", local_table_name=ACCOUNTS)).status == 403
    response = await shop.get("/Table/list", headers=user_headers("expired-token-00001"))
    assert (await response.json())["List"] == []
    (listed,) = await listing(shop, "expired-token-00001")
    assert listed["expired"] is True
    entries = [e for e in await read_logs(shop, event="audit") if e.get("action") == "get_data"]
    assert [e.get("refusal_reason") for e in entries] == ["grant expired", None]


async def test_a_grant_expires_while_the_gateway_runs(shop: TestClient) -> None:
    """No restart, no timer: the clock at request time decides, so a grant stops a few seconds after granting."""
    await granted(shop, "expiring-token-0001", ACCOUNTS, columns="id", expires_at=_in(3))
    first = await get_data(shop, "select id from public.accounts where id = 2", "expiring-token-0001")
    assert first[0] in (200, 403)  # 403 only on a machine too slow to ask within 3 s

    async def refused() -> bool:
        return (await get_data(shop, "select id from public.accounts where id = 2", "expiring-token-0001"))[0] == 403

    await wait_until(refused, 30.0, "the grant to expire")


# -- plans and registries ----------------------------------------------------------------------------------------


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


async def test_the_file_registry_keeps_the_limits_and_an_old_file_loads(shop: TestClient) -> None:
    """The file writes the limits beside the granted table; a whole grant is written as before."""
    document = orjson.loads(registry_path(shop).read_bytes())
    tables = {t["table"]: t for g in document["grants"] for t in g["tables"]}
    assert tables["accounts"]["columns"] == VISIBLE and tables["accounts"]["row_filter"] == FILTER
    assert set(tables["branches"]) == {"database", "folder", "table"}
    for grant in document["grants"]:  # the same file as a gateway before issue 22 wrote it
        for table in grant["tables"]:
            for key in ("columns", "row_filter", "expires_at"):
                table.pop(key, None)
    old = load_registry(orjson.dumps(document))
    assert old.grant_limits == {} and old.grants == shop.app[REGISTRY].state.grants


def _registry_url(database: str) -> str:
    return f"postgresql://postgres@127.0.0.1:5432/{database}"


async def test_the_postgresql_registry_keeps_the_limits(
    make_gateway: Any, shop_database: str, scratch_database: str, tmp_path: Path
) -> None:
    """Granted through one gateway on a PostgreSQL registry, read back by another: the same limits, enforced."""
    from cryptography.fernet import Fernet

    key = Fernet.generate_key().decode()
    first = await make_gateway(data_dir=tmp_path / "one", registry_url=_registry_url(scratch_database), secret_key=key)
    await register_database(first, "shop", shop_database)
    await granted(first, TOKEN, ACCOUNTS, columns="id,note", row_filter=FILTER, expires_at="2999-01-01T00:00:00Z")
    second = await make_gateway(data_dir=tmp_path / "two", registry_url=_registry_url(scratch_database), secret_key=key)
    (listed,) = await listing(second, TOKEN)
    assert (listed["columns"], listed["row_filter"], listed["expires_at"]) == (["id", "note"], FILTER,
                                                                              "2999-01-01T00:00:00Z")
    status, text = await get_data(second, "select * from public.accounts")
    assert status == 200 and "HIDDEN" not in text and orjson.loads(text)[0]["row_count"] == 100


# -- the token API ---------------------------------------------------------------------------------------------


async def test_a_token_minted_with_a_narrowed_grant(shop: TestClient) -> None:
    """PUT /UserToken may grant the new token a table at once, narrowed as GrantTableAccess narrows."""
    response = await shop.put("/UserToken", headers=admin_headers(), json={
        "local_table_name": ACCOUNTS, "columns": ["id", "note"], "row_filter": FILTER})
    (answer,) = await success_of(response)
    assert answer["grant"] == {"local_table_name": ACCOUNTS, "columns": ["id", "note"], "row_filter": FILTER}
    status, text = await get_data(shop, "select * from public.accounts", answer["user_token"])
    assert status == 200 and "HIDDEN" not in text and orjson.loads(text)[0]["row_count"] == 100
    (listed,) = await listing(shop, answer["user_token"])
    assert listed["columns"] == ["id", "note"]


@pytest.mark.parametrize(("params", "fragment"), [
    ({"columns": "id"}, "name the table to grant"),
    ({"local_table_name": ACCOUNTS, "expires_at": "soon"}, "parameter 'expires_at'"),
    ({"local_table_name": ACCOUNTS, "row_filter": "email = 1 +"}, "parameter 'row_filter' is refused"),
])
async def test_a_token_is_not_minted_with_a_bad_grant(shop: TestClient, params: dict[str, str], fragment: str) -> None:
    """A refused narrowing mints nothing: the registry file stays as it was."""
    before = registry_path(shop).read_bytes()
    response = await shop.put("/UserToken", headers=admin_headers(), params=params)
    error = await error_of(response)
    assert response.status == 400 and fragment in error["message"], error
    assert registry_path(shop).read_bytes() == before


async def test_a_revoked_grant_takes_its_limits_with_it(shop: TestClient) -> None:
    """Revoking drops the narrowing: a later whole grant is whole, and the file keeps no limits for it."""
    await granted(shop, "revoked-token-00001", ACCOUNTS, columns="id", row_filter=FILTER)
    response = await shop.delete("/GrantTableAccess/", headers=admin_headers(),
                                 params={"user_token": "revoked-token-00001", "local_table_name": ACCOUNTS})
    assert (await success_of(response))[0]["revoked"] is True
    assert await listing(shop, "revoked-token-00001") == []
    await granted(shop, "revoked-token-00001", ACCOUNTS)
    (listed,) = await listing(shop, "revoked-token-00001")
    assert "columns" not in listed and "row_filter" not in listed
    assert len(shop.app[REGISTRY].state.grant_limits) == 3  # the fixture's three narrowed grants only
