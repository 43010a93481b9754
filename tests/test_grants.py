"""GrantTableAccess (POST /GrantTableAccess/) over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from support import (
    admin_headers,
    database_from,
    error_of,
    grant,
    granted_names,
    register_database,
    registry_path,
    success_of,
    table_data,
)


@pytest.fixture(scope="module")
def shop_database() -> Iterator[str]:
    """A database holding public.alpha, public.beta and sales.gamma; tests only read it."""
    with database_from(
        "CREATE TABLE public.alpha (id integer); CREATE TABLE public.beta (id integer);"
        "CREATE SCHEMA sales; CREATE TABLE sales.gamma (id integer)"
    ) as name:
        yield name


@pytest.fixture
async def shop(gateway: TestClient, shop_database: str) -> TestClient:
    """A gateway with database "shop" holding public.alpha, public.beta and sales.gamma."""
    await register_database(gateway, "shop", shop_database)
    return gateway


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
        shop, user_token="reader-token-0001", local_table_name="shop_public_alpha", database="shop", folder="public", table="beta"
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
