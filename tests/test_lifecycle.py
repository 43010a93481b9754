"""An administrator's lifecycle operations over HTTP: mint and revoke tokens, list grants, unregister,
refresh and change a database."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from gateway.request.auth import hash_user_token, token_fingerprint
from gateway.web.keys import REGISTRY
from support import (
    ADMIN_TOKEN,
    DISTINCTIVE_PASSWORD,
    admin_headers,
    all_table_names,
    create_database,
    database_from,
    drop_database,
    error_of,
    free_port,
    grant,
    granted_names,
    listed,
    read_logs,
    register_database,
    registry_path,
    rename_table,
    run_sql,
    success_of,
    table_data,
    user_headers,
)

SHOP_TABLES = ["shop_public_alpha", "shop_public_beta", "shop_sales_gamma"]


SHOP_SQL = (
    "CREATE TABLE public.alpha (id integer); INSERT INTO public.alpha VALUES (1);"
    "CREATE TABLE public.beta (id integer); CREATE SCHEMA sales; CREATE TABLE sales.gamma (id integer)"
)
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


@pytest.fixture
def own_database() -> Iterator[str]:
    """A database this test alone uses (and may change): public.keep, public.gone, public.other."""
    with database_from(
        "CREATE TABLE public.keep (id integer); CREATE TABLE public.gone (id integer);"
        "CREATE TABLE public.other (id integer)"
    ) as name:
        yield name


async def mint(client: TestClient) -> str:
    """PUT /UserToken as the admin; the minted token."""
    body = await success_of(await client.put("/UserToken", headers=admin_headers()))
    assert isinstance(body, list) and len(body) == 1 and set(body[0]) == {"status", "user_token"}, body
    assert body[0]["status"] == "success"
    return body[0]["user_token"]


async def revoke(client: TestClient, **params: str) -> ClientResponse:
    return await client.delete("/GrantTableAccess/", params=params, headers=admin_headers())


async def grants_of(client: TestClient, user_token: str) -> list[dict[str, str]]:
    """GET /GrantTableAccess for ``user_token``: the ``tables`` list."""
    response = await client.get("/GrantTableAccess", params={"user_token": user_token}, headers=admin_headers())
    body = await success_of(response)
    assert isinstance(body, list) and len(body) == 1 and set(body[0]) == {"status", "tables"}, body
    return body[0]["tables"]


async def get_data(client: TestClient, user_token: str, database: str, query: str) -> tuple[int, Any]:
    response = await client.get(
        "/GetData", params={"local_database_name": database, "query": query}, headers=user_headers(user_token)
    )
    return response.status, json.loads(await response.text())


def gateway_sessions(database: str) -> int:
    """Sessions the gateway (application_name dbgateway) has open on ``database``, as the server sees them."""
    rows = run_sql(
        None,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = 'dbgateway'",
        (database,),
    )
    return int(rows[0][0])


async def wait_for_no_sessions(database: str, timeout: float = 5.0) -> int:
    """Poll until the gateway holds no session on ``database`` (closing is asynchronous server-side)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while (count := gateway_sessions(database)) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    return count


async def database_data(client: TestClient, local_name: str) -> dict[str, str]:
    response = await client.get("/Database", params={"local_database_name": local_name}, headers=admin_headers())
    body = await success_of(response)
    return body[0]


# -- PUT /UserToken -----------------------------------------------------------------------------------


async def test_minted_tokens_are_long_url_safe_and_new_each_time(gateway: TestClient) -> None:
    """A minted token has at least 256 bits in URL-safe characters, and no two are alike."""
    tokens = [await mint(gateway) for _ in range(5)]
    for token in tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]{43,}", token), token
    assert len(set(tokens)) == len(tokens)


async def test_minted_tokens_are_at_least_min_user_token_length_long(make_gateway: Any) -> None:
    """With min_user_token_length=100 a minted token has at least 100 characters."""
    client = await make_gateway(min_user_token_length=100)
    token = await mint(client)
    assert re.fullmatch(r"[A-Za-z0-9_-]{100,}", token), token


async def test_the_registry_file_keeps_only_the_minted_tokens_hash(gateway: TestClient) -> None:
    """The file lists the token's salted hash among minted_tokens and never the token itself."""
    token = await mint(gateway)
    content = registry_path(gateway).read_text()
    assert token not in content
    document = json.loads(content)
    assert document["minted_tokens"] == [hash_user_token(document["token_salt"], token)]


async def test_a_minted_token_can_be_granted_and_used(shop: TestClient) -> None:
    """A minted token, once granted a table, lists it, describes it and queries it."""
    token = await mint(shop)
    await grant(shop, token, "shop_public_alpha")
    assert await granted_names(shop, token) == ["shop_public_alpha"]
    assert (await table_data(shop, token, local_table_name="shop_public_alpha")).status == 200
    status, body = await get_data(shop, token, "shop", "SELECT id FROM public.alpha")
    assert status == 200 and body[0]["data"] == [{"id": 1}], body


async def test_a_minted_token_has_no_grant_until_one_is_given(shop: TestClient) -> None:
    """A fresh minted token lists no table and is refused a table."""
    token = await mint(shop)
    assert await granted_names(shop, token) == []
    assert (await table_data(shop, token, local_table_name="shop_public_alpha")).status == 403


# -- DELETE /GrantTableAccess -------------------------------------------------------------------------


async def test_revoking_a_grant_takes_the_table_away(shop: TestClient) -> None:
    """After a revoke the token is refused the table, no longer lists it, and keeps its other grants."""
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    await grant(shop, "reader-token-0001", "shop_public_beta")
    await grant(shop, "other-token-00001", "shop_public_alpha")
    response = await revoke(shop, user_token="reader-token-0001", local_table_name="shop_public_alpha")
    assert await success_of(response) == [{"status": "success", "revoked": True}]
    forbidden = await table_data(shop, "reader-token-0001", local_table_name="shop_public_alpha")
    assert forbidden.status == 403 and (await error_of(forbidden))["error"] == "access_denied"
    assert await granted_names(shop, "reader-token-0001") == ["shop_public_beta"]
    assert await granted_names(shop, "other-token-00001") == ["shop_public_alpha"]


async def test_revoking_again_answers_revoked_false(shop: TestClient) -> None:
    """Revoking what is not granted (any more) is a success with revoked false."""
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    assert (await success_of(await revoke(shop, user_token="reader-token-0001", local_table_name="shop_public_alpha")))[0][
        "revoked"
    ] is True
    again = await success_of(await revoke(shop, user_token="reader-token-0001", local_table_name="shop_public_alpha"))
    assert again == [{"status": "success", "revoked": False}]
    never = await success_of(await revoke(shop, user_token="stranger-token-001", local_table_name="shop_public_beta"))
    assert never == [{"status": "success", "revoked": False}]


async def test_revoke_full_path_wins_over_local_name(shop: TestClient) -> None:
    """With both forms given, the full path names the table revoked and the local name is ignored."""
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    await grant(shop, "reader-token-0001", "shop_sales_gamma")
    response = await revoke(
        shop,
        user_token="reader-token-0001",
        local_table_name="shop_public_alpha",
        database="shop",
        folder="sales",
        table="gamma",
    )
    assert (await success_of(response))[0]["revoked"] is True
    assert await granted_names(shop, "reader-token-0001") == ["shop_public_alpha"]


@pytest.mark.parametrize(
    ("params", "status", "code"),
    [
        ({"user_token": "reader-token-0001", "local_table_name": "nope"}, 404, "table_not_found"),
        (
            {"user_token": "reader-token-0001", "database": "shop", "folder": "public", "table": "nope"},
            404,
            "table_not_found",
        ),
        ({"local_table_name": "shop_public_alpha"}, 400, "bad_request"),
        ({"user_token": "reader-token-0001"}, 400, "bad_request"),
    ],
)
async def test_revoke_errors(shop: TestClient, params: dict[str, str], status: int, code: str) -> None:
    """An unknown table is 404 table_not_found; no user_token or no table is 400."""
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    response = await revoke(shop, **params)
    assert response.status == status
    assert (await error_of(response))["error"] == code
    assert await granted_names(shop, "reader-token-0001") == ["shop_public_alpha"]


# -- GET /GrantTableAccess ----------------------------------------------------------------------------


async def test_grants_are_listed_by_local_name_with_their_full_path(shop: TestClient) -> None:
    """A token's grants come sorted by local name, each with database, folder and table; renames show."""
    await grant(shop, "reader-token-0001", "shop_sales_gamma")
    await grant(shop, "reader-token-0001", "shop_public_beta")
    renamed = await rename_table(shop, {"table": {"local_table_name": "shop_public_beta"}, "new_local_table_name": "b"})
    assert renamed.status == 200
    assert await grants_of(shop, "reader-token-0001") == [
        {"local_table_name": "b", "database": "shop", "folder": "public", "table": "beta"},
        {"local_table_name": "shop_sales_gamma", "database": "shop", "folder": "sales", "table": "gamma"},
    ]


async def test_a_token_without_grants_lists_nothing(shop: TestClient) -> None:
    """A minted token without grants, and a token never seen, both have an empty list."""
    assert await grants_of(shop, await mint(shop)) == []
    assert await grants_of(shop, "never-seen") == []


async def test_listing_grants_needs_a_user_token(shop: TestClient) -> None:
    """GET /GrantTableAccess without user_token is 400 naming the parameter."""
    response = await shop.get("/GrantTableAccess/", headers=admin_headers())
    assert response.status == 400
    assert "user_token" in (await error_of(response))["message"]


# -- DELETE /Database ---------------------------------------------------------------------------------


async def test_unregistering_removes_tables_and_grants(shop: TestClient, own_database: str) -> None:
    """The answer counts what went; the database, its tables and grants are gone, others stay."""
    await register_database(shop, "own", own_database)
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    await grant(shop, "reader-token-0001", "shop_public_beta")
    await grant(shop, "other-token-00001", "shop_public_alpha")
    await grant(shop, "other-token-00001", "own_public_keep")
    response = await shop.delete("/Database", params={"local_database_name": "shop"}, headers=admin_headers())
    assert await success_of(response) == [
        {"status": "success", "local_name": "shop", "removed_tables": 3, "removed_grants": 3}
    ]
    assert await listed(shop, "/Database/list", admin_headers()) == ["own"]
    assert await all_table_names(shop) == ["own_public_gone", "own_public_keep", "own_public_other"]
    assert await grants_of(shop, "reader-token-0001") == []
    assert await granted_names(shop, "other-token-00001") == ["own_public_keep"]
    missing = await shop.get("/Database", params={"local_database_name": "shop"}, headers=admin_headers())
    assert missing.status == 404
    assert '"shop"' not in registry_path(shop).read_text()


async def test_unregistering_closes_the_pool_and_the_name_can_be_reused(gateway: TestClient, own_database: str) -> None:
    """No gateway session stays on the database; registering the same name again starts without grants."""
    await register_database(gateway, "own", own_database)
    await grant(gateway, "reader-token-0001", "own_public_keep")
    assert (await table_data(gateway, "reader-token-0001", local_table_name="own_public_keep")).status == 200
    assert gateway_sessions(own_database) > 0
    response = await gateway.delete("/Database/", params={"local_database_name": "own"}, headers=admin_headers())
    assert (await success_of(response))[0]["removed_grants"] == 1
    assert await wait_for_no_sessions(own_database) == 0
    await register_database(gateway, "own", own_database)
    assert await all_table_names(gateway) == ["own_public_gone", "own_public_keep", "own_public_other"]
    assert await granted_names(gateway, "reader-token-0001") == []


@pytest.mark.parametrize(("params", "status"), [({"local_database_name": "nope"}, 404), ({}, 400)])
async def test_unregister_errors(shop: TestClient, params: dict[str, str], status: int) -> None:
    """An unknown database is 404 database_not_found; no local_database_name is 400."""
    response = await shop.delete("/Database", params=params, headers=admin_headers())
    assert response.status == status
    assert (await error_of(response))["error"] == ("database_not_found" if status == 404 else "bad_request")
    assert await listed(shop, "/Database/list", admin_headers()) == ["shop"]


# -- POST /Database (refresh) -------------------------------------------------------------------------


async def refresh(client: TestClient, local_name: str) -> ClientResponse:
    return await client.post("/Database", params={"local_database_name": local_name}, headers=admin_headers())


async def test_refresh_adds_new_tables_removes_dropped_ones_and_keeps_renames(
    gateway: TestClient, own_database: str
) -> None:
    """A new table gets its default name, a dropped one goes with its grants, a renamed one keeps name and grants."""
    await register_database(gateway, "own", own_database)
    renamed = await rename_table(
        gateway, {"table": {"local_table_name": "own_public_keep"}, "new_local_table_name": "kept"}
    )
    assert renamed.status == 200
    await grant(gateway, "reader-token-0001", "kept")
    await grant(gateway, "reader-token-0001", "own_public_gone")
    run_sql(own_database, "CREATE TABLE public.fresh (id integer); DROP TABLE public.gone")
    response = await refresh(gateway, "own")
    assert await success_of(response) == [
        {
            "status": "success",
            "local_name": "own",
            "added": ["own_public_fresh"],
            "removed": ["own_public_gone"],
            "unchanged": 2,
        }
    ]
    assert await all_table_names(gateway) == ["kept", "own_public_fresh", "own_public_other"]
    assert await granted_names(gateway, "reader-token-0001") == ["kept"]
    assert [t["local_table_name"] for t in await grants_of(gateway, "reader-token-0001")] == ["kept"]
    assert "gone" not in registry_path(gateway).read_text()


async def test_refresh_gives_a_colliding_new_name_a_suffix(gateway: TestClient, own_database: str) -> None:
    """A new table whose default name is taken gets the next free numeric suffix."""
    await register_database(gateway, "own", own_database)
    taken = await rename_table(
        gateway, {"table": {"local_table_name": "own_public_other"}, "new_local_table_name": "own_public_fresh"}
    )
    assert taken.status == 200
    run_sql(own_database, "CREATE TABLE public.fresh (id integer)")
    assert (await success_of(await refresh(gateway, "own")))[0]["added"] == ["own_public_fresh_2"]


async def test_refresh_without_changes_writes_nothing(shop: TestClient) -> None:
    """A catalog that did not change is reported as all unchanged and the file is not rewritten."""
    before = registry_path(shop).stat()
    body = await success_of(await refresh(shop, "shop"))
    assert body == [{"status": "success", "local_name": "shop", "added": [], "removed": [], "unchanged": 3}]
    after = registry_path(shop).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


async def test_refresh_of_an_unreachable_database_changes_nothing(gateway: TestClient) -> None:
    """A database that cannot be reached is 502 database_unavailable and every table stays registered."""
    name = create_database("CREATE TABLE public.t (id integer)")
    try:
        await register_database(gateway, "vanishing", name)
    finally:
        drop_database(name)
    content = registry_path(gateway).read_bytes()
    response = await refresh(gateway, "vanishing")
    assert response.status == 502
    assert (await error_of(response))["error"] == "database_unavailable"
    assert registry_path(gateway).read_bytes() == content


def gateway_backend_pids(database: str) -> set[int]:
    """Backend pids of the gateway's sessions on ``database``."""
    rows = run_sql(
        None, "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = 'dbgateway'", (database,)
    )
    return {int(pid) for (pid,) in rows}


async def test_refresh_serves_the_database_from_a_new_pool(gateway: TestClient, own_database: str) -> None:
    """After a refresh the old pool's sessions are gone: what the driver derived from the catalog is derived again."""
    await register_database(gateway, "own", own_database)
    await grant(gateway, "reader-token-0001", "own_public_keep")
    query = {"local_database_name": "own", "query": "SELECT count(*) AS n FROM public.keep"}
    assert (await gateway.get("/GetData", params=query, headers=user_headers("reader-token-0001"))).status == 200
    before = gateway_backend_pids(own_database)
    assert before
    assert (await refresh(gateway, "own")).status == 200
    assert (await gateway.get("/GetData", params=query, headers=user_headers("reader-token-0001"))).status == 200
    assert not before & gateway_backend_pids(own_database)


async def test_refresh_of_an_unknown_database_is_404(shop: TestClient) -> None:
    """POST /Database for a name nobody registered is 404 database_not_found."""
    response = await refresh(shop, "nope")
    assert response.status == 404
    assert (await error_of(response))["error"] == "database_not_found"


# -- PATCH /Database ----------------------------------------------------------------------------------


async def test_a_wrong_port_is_502_and_changes_nothing(shop: TestClient) -> None:
    """New connection data that does not connect is refused with 502 and nothing is saved."""
    before = await database_data(shop, "shop")
    content = registry_path(shop).read_bytes()
    response = await shop.patch(
        "/Database", params={"local_database_name": "shop", "port": str(free_port())}, headers=admin_headers()
    )
    assert response.status == 502
    assert (await error_of(response))["error"] == "database_unavailable"
    assert await database_data(shop, "shop") == before
    assert registry_path(shop).read_bytes() == content


async def test_changing_the_database_saves_it_and_replaces_the_pool(gateway: TestClient) -> None:
    """After PATCH database=<other>, GetDatabaseData shows it and queries reach it; the old pool is closed."""
    first = create_database("CREATE TABLE public.t (id integer); INSERT INTO public.t VALUES (1)")
    second = create_database("CREATE TABLE public.t (id integer, note text); INSERT INTO public.t VALUES (2, 'two')")
    try:
        await register_database(gateway, "moving", first)
        await grant(gateway, "reader-token-0001", "moving_public_t")
        assert (await get_data(gateway, "reader-token-0001", "moving", "SELECT * FROM public.t"))[1][0]["data"] == [{"id": 1}]
        response = await gateway.patch(
            "/Database/", json={"local_database_name": "moving", "database": second}, headers=admin_headers()
        )
        answer = await success_of(response)
        assert answer == [{"status": "success", **(await database_data(gateway, "moving"))}]
        assert answer[0]["database"] == second and "password" not in answer[0]
        described = await success_of(await table_data(gateway, "reader-token-0001", local_table_name="moving_public_t"))
        assert described["TableData"]["columns"] == {"id": "integer", "note": "text"}
        status, body = await get_data(gateway, "reader-token-0001", "moving", "SELECT * FROM public.t")
        assert status == 200 and body[0]["data"] == [{"id": 2, "note": "two"}]
        assert await wait_for_no_sessions(first) == 0
        assert json.loads(registry_path(gateway).read_text())["databases"][0]["connection"]["database"] == second
    finally:
        drop_database(first)
        drop_database(second)


async def test_a_new_password_is_saved_and_never_answered(shop: TestClient) -> None:
    """A changed password is kept (the registry holds it) and neither the answer nor the logs show it."""
    response = await shop.patch(
        "/Database", params={"local_database_name": "shop", "password": DISTINCTIVE_PASSWORD}, headers=admin_headers()
    )
    assert DISTINCTIVE_PASSWORD not in await response.text()
    assert (await success_of(response))[0]["local_name"] == "shop"
    assert shop.app[REGISTRY].state.database("shop").connection["password"] == DISTINCTIVE_PASSWORD
    assert DISTINCTIVE_PASSWORD not in json.dumps(await read_logs(shop))


@pytest.mark.parametrize(
    ("params", "body", "status", "code", "named"),
    [
        ({"local_database_name": "shop"}, None, 400, "bad_request", "password"),
        ({"local_database_name": "shop", "port": "http"}, None, 400, "bad_request", "port"),
        ({"local_database_name": "shop", "username": ""}, None, 400, "bad_request", "username"),
        ({"local_database_name": "shop", "base_type": "mysql", "port": "5432"}, None, 400, "bad_request", "base_type"),
        ({"local_database_name": "shop", "port": "5432"}, {"port": "5433"}, 400, "ambiguous_request", "port"),
        ({"port": "5432"}, None, 400, "bad_request", "local_database_name"),
        ({"local_database_name": "nope", "port": "5432"}, None, 404, "database_not_found", "nope"),
    ],
)
async def test_patch_errors(
    shop: TestClient, params: dict[str, str], body: dict[str, str] | None, status: int, code: str, named: str
) -> None:
    """Nothing to change, a malformed value, another base_type, a disagreement or an unknown name is refused."""
    content = registry_path(shop).read_bytes()
    response = await shop.patch("/Database", params=params, json=body, headers=admin_headers())
    assert response.status == status
    error = await error_of(response)
    assert error["error"] == code and named in error["message"], error
    assert registry_path(shop).read_bytes() == content


# -- every lifecycle operation needs the admin token, and is logged -----------------------------------

OPERATIONS = [
    ("PUT", "/UserToken", {}),
    ("DELETE", "/GrantTableAccess/", {"user_token": "reader-token-0001", "local_table_name": "shop_public_alpha"}),
    ("GET", "/GrantTableAccess/", {"user_token": "reader-token-0001"}),
    ("DELETE", "/Database", {"local_database_name": "shop"}),
    ("POST", "/Database", {"local_database_name": "shop"}),
    ("PATCH", "/Database", {"local_database_name": "shop", "port": "5432"}),
]


LIFECYCLE_CHANGES = (
    "token_minted",
    "grant_revoked",
    "database_refreshed",
    "database_updated",
    "database_unregistered",
)
"""The ``action`` of the ``audit`` entry each change writes (listing grants is no change: its own event)."""


@pytest.mark.parametrize(("method", "path", "params"), OPERATIONS)
@pytest.mark.parametrize("headers", [{}, {"admin_token": "wrong-admin-token-000000"}, {"user_token": "reader-token-0001"}])
async def test_lifecycle_operations_need_the_admin_token(
    shop: TestClient, method: str, path: str, params: dict[str, str], headers: dict[str, str]
) -> None:
    """Without the right admin token each operation is 403 access_denied and changes nothing."""
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    content = registry_path(shop).read_bytes()
    response = await shop.request(method, path, params=params, headers=headers)
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"
    assert registry_path(shop).read_bytes() == content


async def test_every_lifecycle_operation_is_logged_with_the_admin_fingerprint(shop: TestClient) -> None:
    """Each change writes an audit entry with the admin token's fingerprint; no token or password appears."""
    token = await mint(shop)
    await grant(shop, token, "shop_public_alpha")
    await grants_of(shop, token)
    assert (await revoke(shop, user_token=token, local_table_name="shop_public_alpha")).status == 200
    assert (await refresh(shop, "shop")).status == 200
    patched = await shop.patch(
        "/Database", params={"local_database_name": "shop", "password": DISTINCTIVE_PASSWORD}, headers=admin_headers()
    )
    assert patched.status == 200
    unregistered = await shop.delete("/Database", params={"local_database_name": "shop"}, headers=admin_headers())
    assert unregistered.status == 200

    entries = await read_logs(shop, level="info")
    salt = shop.app[REGISTRY].state.token_salt
    admin_fingerprint = token_fingerprint(salt, ADMIN_TOKEN)
    by_event = {entry["event"]: entry for entry in entries}
    by_event.update({entry["action"]: entry for entry in entries if entry["event"] == "audit"})
    for event in (*LIFECYCLE_CHANGES, "grants_listed"):
        assert by_event[event]["level"] == "info", by_event[event]
        assert by_event[event]["admin_token_fingerprint"] == admin_fingerprint, by_event[event]
    assert by_event["token_minted"]["minted_token_fingerprint"] == token_fingerprint(salt, token)
    assert by_event["grant_revoked"]["revoked_token_fingerprint"] == token_fingerprint(salt, token)
    assert by_event["grant_revoked"]["revoked"] is True
    assert by_event["database_updated"]["changed_fields"] == ["password"]
    assert by_event["database_unregistered"]["removed_tables"] == 3
    everything = json.dumps(entries) + shop.log_stream.getvalue()  # type: ignore[attr-defined]
    for secret in (token, ADMIN_TOKEN, DISTINCTIVE_PASSWORD):
        assert secret not in everything
