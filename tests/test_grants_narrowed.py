"""Grants narrower than a table over HTTP (issue 22): columns, row_filter, expires_at granted, listed, expired,
kept by both registries, and given with a minted token. The database is ``narrowed_shop.py``'s; what the
grants keep out of reach is tested in ``test_grants_narrowed_redteam.py``.
"""

from __future__ import annotations

import datetime
from pathlib import Path
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
    get_data,
    grant_with,
    granted,
    listing,
)
from support import (
    admin_headers,
    error_of,
    read_logs,
    register_database,
    registry_path,
    success_of,
    table_data,
    user_headers,
    wait_until,
)

from gateway.registry.file_format import load_registry
from gateway.web.keys import REGISTRY


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
    ({"expires_at": "0001-01-01T00:00:00+01:00"}, "parameter 'expires_at' is not a valid time"),
    ({"expires_at": "9999-12-31T23:59:59-23:59"}, "parameter 'expires_at' is not a valid time"),
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


async def test_a_narrowed_token_binds_parameter_values_and_still_sees_only_its_part(shop: TestClient) -> None:
    """Parameter values reach a narrowed token's query: its columns and rows only, a hidden column still unknown."""

    async def bound(query: str, value: int) -> tuple[int, Any]:
        response = await shop.post("/GetData", json={"local_database_name": "shop", "query": query, "params": [value]},
                                   headers=user_headers(TOKEN))
        return response.status, orjson.loads(await response.read())

    status, body = await bound("SELECT * FROM public.accounts WHERE id = $1", 2)
    assert status == 200, body
    assert [sorted(row) for row in body[0]["data"]] == [sorted(VISIBLE)]
    status, body = await bound("SELECT * FROM public.accounts WHERE id = $1", 1)  # tenant 7's row
    assert status == 200 and body[0]["data"] == []
    status, body = await bound("SELECT email FROM public.accounts WHERE id = $1", 2)
    assert status == 400 and "HIDDEN" not in str(body)


async def test_a_filter_whose_first_term_is_not_leakproof_serves(shop: TestClient) -> None:
    """A filter of several AND terms, the first not leakproof (LIKE), reads like any other filter."""
    await granted(shop, "liker-token-000001", ACCOUNTS, columns="id,note", row_filter="note LIKE 'note%' AND tenant = 42")
    response = await shop.post("/GetData", json={"local_database_name": "shop",
                                                 "query": "SELECT count(*) AS n FROM public.accounts"},
                               headers=user_headers("liker-token-000001"))
    body = orjson.loads(await response.read())
    assert response.status == 200, body
    assert body[0]["data"] == [{"n": 100}]  # tenant 42's rows: the even ids of 1..200
