"""GrantTableAccess (POST /GrantTableAccess/) over HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from gateway.settings.config import ConfigError
from support import (
    GatewayFactory,
    admin_headers,
    error_of,
    gateway_config,
    grant,
    granted_names,
    register_database,
    registry_path,
    success_of,
    table_data,
    user_headers,
)


SHOP_SQL = (
    "CREATE TABLE public.alpha (id integer); CREATE TABLE public.beta (id integer);"
    "CREATE SCHEMA sales; CREATE TABLE sales.gamma (id integer)"
)
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


async def grant_with(client: TestClient, headers: dict[str, str] | None = None, **params: str) -> ClientResponse:
    """GrantTableAccess with these query parameters, as the admin unless ``headers`` says otherwise."""
    return await client.post(
        "/GrantTableAccess/", params=params, headers=admin_headers() if headers is None else headers
    )


async def test_grant_by_local_name(shop: TestClient) -> None:
    """Granting by local_table_name answers [{"status":"success"}] and the token then lists and reads the table."""
    response = await grant_with(shop, user_token="reader-token-0001", local_table_name="shop_public_alpha")
    assert await success_of(response) == [{"status": "success"}]
    assert await granted_names(shop, "reader-token-0001") == ["shop_public_alpha"]
    assert (await table_data(shop, "reader-token-0001", local_table_name="shop_public_alpha")).status == 200


async def test_grant_by_full_path(shop: TestClient) -> None:
    """Granting by database, folder and table grants that table."""
    response = await grant_with(shop, user_token="reader-token-0001", database="shop", folder="sales", table="gamma")
    assert await success_of(response) == [{"status": "success"}]
    assert await granted_names(shop, "reader-token-0001") == ["shop_sales_gamma"]


async def test_full_path_wins_over_local_name(shop: TestClient) -> None:
    """Given the local name of alpha and the full path of beta, beta is granted and alpha is not."""
    response = await grant_with(
        shop,
        user_token="reader-token-0001",
        local_table_name="shop_public_alpha",
        database="shop",
        folder="public",
        table="beta",
    )
    assert await success_of(response) == [{"status": "success"}]
    assert await granted_names(shop, "reader-token-0001") == ["shop_public_beta"]
    assert (await table_data(shop, "reader-token-0001", local_table_name="shop_public_alpha")).status == 403


async def test_granting_twice_is_a_success_and_grants_once(shop: TestClient) -> None:
    """A repeated grant succeeds, lists the table once and leaves the registry file as it was."""
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    before = registry_path(shop).read_bytes()
    response = await grant_with(shop, user_token="reader-token-0001", database="shop", folder="public", table="alpha")
    assert await success_of(response) == [{"status": "success"}]
    assert await granted_names(shop, "reader-token-0001") == ["shop_public_alpha"]
    assert registry_path(shop).read_bytes() == before


async def test_grants_belong_to_their_token_only(shop: TestClient) -> None:
    """A grant to one token gives nothing to another; a token's grants accumulate."""
    await grant(shop, "first-token-00001", "shop_public_alpha")
    await grant(shop, "first-token-00001", "shop_sales_gamma")
    await grant(shop, "second-token-0001", "shop_public_beta")
    assert await granted_names(shop, "first-token-00001") == ["shop_public_alpha", "shop_sales_gamma"]
    assert await granted_names(shop, "second-token-0001") == ["shop_public_beta"]
    assert (await table_data(shop, "second-token-0001", local_table_name="shop_public_alpha")).status == 403


async def test_user_tokens_are_compared_exactly(shop: TestClient) -> None:
    """A token differing only in letter case is another token, without the grant."""
    await grant(shop, "Reader-token-0001", "shop_public_alpha")
    assert await granted_names(shop, "reader-token-0001") == []
    assert await granted_names(shop, "Reader-token-0001") == ["shop_public_alpha"]


@pytest.mark.parametrize(
    "params",
    [
        {"local_table_name": "nowhere"},
        {"database": "shop", "folder": "public", "table": "nowhere"},
        {"database": "elsewhere", "folder": "public", "table": "alpha"},
    ],
    ids=["local-name", "path", "unknown-database"],
)
async def test_grant_on_an_unknown_table_is_not_found(shop: TestClient, params: dict[str, str]) -> None:
    """A table that is not registered is 404 table_not_found and nothing is granted."""
    response = await grant_with(shop, user_token="reader-token-0001", **params)
    assert response.status == 404
    assert (await error_of(response))["error"] == "table_not_found"
    assert await granted_names(shop, "reader-token-0001") == []


@pytest.mark.parametrize("user_token", [None, ""], ids=["missing", "empty"])
async def test_grant_without_a_user_token_parameter_is_a_bad_request(shop: TestClient, user_token: str | None) -> None:
    """No (or an empty) user_token query parameter is 400 naming user_token."""
    params = {"local_table_name": "shop_public_alpha"}
    if user_token is not None:
        params["user_token"] = user_token
    response = await grant_with(shop, **params)
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "bad_request"
    assert "user_token" in body["message"]


async def test_user_token_header_does_not_replace_the_parameter(shop: TestClient) -> None:
    """The token to grant comes from the query parameter; a user_token header alone is 400."""
    response = await grant_with(
        shop, headers={**admin_headers(), "user_token": "reader-token-0001"}, local_table_name="shop_public_alpha"
    )
    assert response.status == 400
    assert "user_token" in (await error_of(response))["message"]
    assert await granted_names(shop, "reader-token-0001") == []


async def test_grant_without_a_table_is_a_bad_request(shop: TestClient) -> None:
    """No local_table_name and no full path is 400."""
    response = await grant_with(shop, user_token="reader-token-0001")
    assert response.status == 400
    assert (await error_of(response))["error"] == "bad_request"


async def test_grant_with_a_partial_full_path_names_what_is_missing(shop: TestClient) -> None:
    """database and table without folder is 400 naming 'folder'."""
    response = await grant_with(shop, user_token="reader-token-0001", database="shop", table="alpha")
    assert response.status == 400
    assert "folder" in (await error_of(response))["message"]


@pytest.mark.parametrize("headers", [{}, {"admin_token": "wrong-admin-token-000000"}], ids=["absent", "wrong"])
async def test_grant_without_the_admin_token_is_denied(shop: TestClient, headers: dict[str, str]) -> None:
    """An absent or wrong admin token is 403 access_denied and grants nothing."""
    response = await grant_with(shop, headers=headers, user_token="reader-token-0001", local_table_name="shop_public_alpha")
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"
    assert await granted_names(shop, "reader-token-0001") == []


async def test_grants_span_databases(shop: TestClient, shop_database: str) -> None:
    """One token may hold tables of several databases; all are listed."""
    await register_database(shop, "other", shop_database)
    await grant(shop, "reader-token-0001", "other_sales_gamma")
    await grant(shop, "reader-token-0001", "shop_public_beta")
    assert await granted_names(shop, "reader-token-0001") == ["other_sales_gamma", "shop_public_beta"]


# -- the shortest user token a grant takes ----------------------------------------------------------------


@pytest.mark.parametrize("user_token", ["x", "reader", "fifteen-chars-x"], ids=["1", "6", "15"])
async def test_a_user_token_shorter_than_16_characters_is_refused(shop: TestClient, user_token: str) -> None:
    """Granting a token under 16 characters is 400 naming user_token and the minimum; nothing is granted."""
    response = await grant_with(shop, user_token=user_token, local_table_name="shop_public_alpha")
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "bad_request"
    assert "user_token" in body["message"] and "16" in body["message"]
    assert await granted_names(shop, user_token) == []


async def test_a_user_token_of_exactly_16_characters_is_granted(shop: TestClient) -> None:
    """Sixteen characters is enough."""
    response = await grant_with(shop, user_token="sixteen-chars-xy", local_table_name="shop_public_alpha")
    assert await success_of(response) == [{"status": "success"}]
    assert await granted_names(shop, "sixteen-chars-xy") == ["shop_public_alpha"]


async def test_the_minimum_is_a_setting_and_older_short_grants_keep_working(
    make_gateway: GatewayFactory, shop_database: str
) -> None:
    """With min_user_token_length=4 "abcd" is granted; after a restart with the default the grant still serves."""
    lenient = await make_gateway(min_user_token_length=4)
    await register_database(lenient, "shop", shop_database)
    granted = await grant_with(lenient, user_token="abcd", local_table_name="shop_public_alpha")
    assert await success_of(granted) == [{"status": "success"}]
    assert (await grant_with(lenient, user_token="abc", local_table_name="shop_public_beta")).status == 400

    strict = await make_gateway()
    assert await granted_names(strict, "abcd") == ["shop_public_alpha"]
    assert (await table_data(strict, "abcd", local_table_name="shop_public_alpha")).status == 200
    listed_grants = await strict.get("/GrantTableAccess/", params={"user_token": "abcd"}, headers=admin_headers())
    assert [t["local_table_name"] for t in (await success_of(listed_grants))[0]["tables"]] == ["shop_public_alpha"]
    revoked = await strict.delete(
        "/GrantTableAccess/", params={"user_token": "abcd", "local_table_name": "shop_public_alpha"}, headers=admin_headers()
    )
    assert await success_of(revoked) == [{"status": "success", "revoked": True}]
    assert (await strict.get("/Table/list", headers=user_headers("abcd"))).status == 200


@pytest.mark.parametrize("value", [0, -1, 1025])
def test_the_minimum_must_be_between_1_and_1024(tmp_path: Path, value: int) -> None:
    """min_user_token_length outside 1-1024 stops start-up with a ConfigError naming it."""
    with pytest.raises(ConfigError, match="min_user_token_length"):
        gateway_config(tmp_path, min_user_token_length=value)
