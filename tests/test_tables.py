"""Tables over HTTP: ChangeLocalTableName, GetTableData and ListTable."""

from __future__ import annotations


import pytest
from aiohttp.test_utils import TestClient

from support import (
    ADMIN_TOKEN,
    DISTINCTIVE_PASSWORD,
    admin_headers,
    all_table_names,
    database_parameters,
    error_of,
    grant,
    granted_names,
    listed,
    message_template,
    register_database,
    rename_table,
    run_sql,
    success_of,
    table_data,
    user_headers,
)

# Columns in an order that is neither alphabetical nor by type, to show ordinal order is kept.
MEASUREMENTS_SQL = """
CREATE TABLE public.measurements (
    taken timestamp, note text, ratio real, id integer, amount numeric(10, 2), tags integer[],
    gone integer, at_utc timestamptz, flag boolean, payload jsonb, small smallint, big bigint,
    label varchar(20), score double precision
);
ALTER TABLE public.measurements DROP COLUMN gone;
"""

MEASUREMENTS_COLUMNS = [
    ("taken", "timestamp without time zone"),
    ("note", "text"),
    ("ratio", "real"),
    ("id", "integer"),
    ("amount", "numeric"),
    ("tags", "integer[]"),
    ("at_utc", "timestamp with time zone"),
    ("flag", "boolean"),
    ("payload", "jsonb"),
    ("small", "smallint"),
    ("big", "bigint"),
    ("label", "character varying"),
    ("score", "double precision"),
]

TWO_TABLES_SQL = "CREATE TABLE public.alpha (id integer); CREATE TABLE public.beta (id integer, note text)"


SHOP_SQL = TWO_TABLES_SQL + ";" + MEASUREMENTS_SQL
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


@pytest.fixture
async def changeable_shop(gateway: TestClient, scratch_database: str) -> TestClient:
    """Like ``shop``, but over a database of this test's own, which the test may change."""
    run_sql(scratch_database, TWO_TABLES_SQL + ";" + MEASUREMENTS_SQL)
    await register_database(gateway, "shop", scratch_database)
    return gateway


# -- ChangeLocalTableName -----------------------------------------------------------------------------------


async def test_rename_by_local_name_in_the_body(shop: TestClient) -> None:
    """Body {"table":{"local_table_name"},"new_local_table_name"} renames and answers new_table_name."""
    response = await rename_table(
        shop, {"table": {"local_table_name": "shop_public_alpha"}, "new_local_table_name": "first"}
    )
    assert await success_of(response) == [{"status": "success", "new_table_name": "first"}]
    names = await all_table_names(shop)
    assert "first" in names and "shop_public_alpha" not in names


async def test_rename_by_full_path_in_the_body(shop: TestClient) -> None:
    """The body's table object may give database, folder and table instead."""
    body = {"table": {"database": "shop", "folder": "public", "table": "beta"}, "new_local_table_name": "second"}
    assert await success_of(await rename_table(shop, body)) == [{"status": "success", "new_table_name": "second"}]
    assert "second" in await all_table_names(shop)
    assert "shop_public_beta" not in await all_table_names(shop)


async def test_rename_by_full_path_in_the_query_string(shop: TestClient) -> None:
    """The table may be identified by the query string's full path, the new name in the body."""
    response = await rename_table(
        shop, {"new_local_table_name": "third"}, database="shop", folder="public", table="beta"
    )
    assert await success_of(response) == [{"status": "success", "new_table_name": "third"}]
    assert "third" in await all_table_names(shop)


async def test_rename_by_local_name_in_the_query_string(shop: TestClient) -> None:
    """The table may be identified by the query string's local_table_name."""
    response = await rename_table(shop, {"new_local_table_name": "fourth"}, local_table_name="shop_public_alpha")
    assert await success_of(response) == [{"status": "success", "new_table_name": "fourth"}]
    assert "fourth" in await all_table_names(shop)


async def test_body_identification_wins_over_the_query_string(shop: TestClient) -> None:
    """When body and query string both identify a table, the body's table is renamed and the other is untouched."""
    response = await rename_table(
        shop,
        {"table": {"local_table_name": "shop_public_beta"}, "new_local_table_name": "chosen"},
        local_table_name="shop_public_alpha",
    )
    assert await success_of(response) == [{"status": "success", "new_table_name": "chosen"}]
    names = await all_table_names(shop)
    assert "shop_public_alpha" in names
    assert "shop_public_beta" not in names
    await grant(shop, "chosen-reader-token", "chosen")
    assert (await success_of(await table_data(shop, "chosen-reader-token", local_table_name="chosen")))["TableData"][
        "table_name"
    ] == "beta"


async def test_full_path_wins_over_local_name_in_the_body(shop: TestClient) -> None:
    """Within the body's table object the full path beats local_table_name."""
    body = {
        "table": {"local_table_name": "shop_public_alpha", "database": "shop", "folder": "public", "table": "beta"},
        "new_local_table_name": "by_path",
    }
    await success_of(await rename_table(shop, body))
    names = await all_table_names(shop)
    assert "shop_public_alpha" in names
    assert "shop_public_beta" not in names and "by_path" in names


async def test_full_path_wins_over_local_name_in_the_query_string(shop: TestClient) -> None:
    """Within the query string the full path beats local_table_name."""
    await success_of(
        await rename_table(
            shop,
            {"new_local_table_name": "by_path"},
            local_table_name="shop_public_alpha",
            database="shop",
            folder="public",
            table="beta",
        )
    )
    names = await all_table_names(shop)
    assert "shop_public_alpha" in names
    assert "shop_public_beta" not in names


async def test_rename_to_a_name_used_by_another_table_is_a_conflict(shop: TestClient) -> None:
    """A new name held by another table is 409 table_exists and changes nothing."""
    before = await all_table_names(shop)
    response = await rename_table(
        shop, {"table": {"local_table_name": "shop_public_alpha"}, "new_local_table_name": "shop_public_beta"}
    )
    assert response.status == 409
    assert (await error_of(response))["error"] == "table_exists"
    assert await all_table_names(shop) == before


async def test_rename_to_its_own_name_is_a_success(shop: TestClient) -> None:
    """Renaming a table to the name it already has succeeds and changes nothing."""
    before = await all_table_names(shop)
    response = await rename_table(
        shop, {"table": {"local_table_name": "shop_public_alpha"}, "new_local_table_name": "shop_public_alpha"}
    )
    assert await success_of(response) == [{"status": "success", "new_table_name": "shop_public_alpha"}]
    assert await all_table_names(shop) == before


@pytest.mark.parametrize(
    "table",
    [
        {"local_table_name": "nowhere"},
        {"database": "shop", "folder": "public", "table": "nowhere"},
        {"database": "elsewhere", "folder": "public", "table": "alpha"},
    ],
    ids=["local-name", "path", "database"],
)
async def test_rename_of_an_unknown_table_is_not_found(shop: TestClient, table: dict[str, str]) -> None:
    """An identification that matches no registered table is 404 table_not_found."""
    response = await rename_table(shop, {"table": table, "new_local_table_name": "whatever"})
    assert response.status == 404
    assert (await error_of(response))["error"] == "table_not_found"
    assert "whatever" not in await all_table_names(shop)


@pytest.mark.parametrize("new_name", [None, "", "   "], ids=["missing", "empty", "blank"])
async def test_rename_without_a_new_name_is_a_bad_request(shop: TestClient, new_name: str | None) -> None:
    """A missing or empty new_local_table_name is 400 naming it."""
    body: dict[str, object] = {"table": {"local_table_name": "shop_public_alpha"}}
    if new_name is not None:
        body["new_local_table_name"] = new_name
    response = await rename_table(shop, body)
    assert response.status == 400
    assert "new_local_table_name" in (await error_of(response))["message"]
    assert "shop_public_alpha" in await all_table_names(shop)


async def test_rename_without_any_identification_is_a_bad_request(shop: TestClient) -> None:
    """No table identification anywhere is 400."""
    response = await rename_table(shop, {"new_local_table_name": "orphan"})
    assert response.status == 400
    assert (await error_of(response))["error"] == "bad_request"


async def test_rename_with_a_partial_full_path_names_what_is_missing(shop: TestClient) -> None:
    """database and folder without table is 400 naming 'table'."""
    response = await rename_table(
        shop, {"table": {"database": "shop", "folder": "public"}, "new_local_table_name": "x"}
    )
    assert response.status == 400
    assert "table" in (await error_of(response))["message"]


async def test_rename_with_a_table_field_that_is_not_an_object_is_a_bad_request(shop: TestClient) -> None:
    """A body whose table field is a string is 400 naming 'table'."""
    response = await rename_table(shop, {"table": "shop_public_alpha", "new_local_table_name": "x"})
    assert response.status == 400
    assert "table" in (await error_of(response))["message"]


@pytest.mark.parametrize("headers", [{}, {"admin_token": "wrong-admin-token-000000"}], ids=["absent", "wrong"])
async def test_rename_without_the_admin_token_is_denied(shop: TestClient, headers: dict[str, str]) -> None:
    """An absent or wrong admin token is 403 access_denied and renames nothing."""
    response = await shop.post(
        "/Table",
        json={"table": {"local_table_name": "shop_public_alpha"}, "new_local_table_name": "x"},
        headers=headers,
    )
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"
    assert "shop_public_alpha" in await all_table_names(shop)


async def test_grants_follow_a_renamed_table(shop: TestClient) -> None:
    """After a rename the token lists the new name and reads the table by it; the old name is gone."""
    await grant(shop, "follower-token-001", "shop_public_alpha")
    await success_of(
        await rename_table(
            shop, {"table": {"local_table_name": "shop_public_alpha"}, "new_local_table_name": "renamed"}
        )
    )
    assert await granted_names(shop, "follower-token-001") == ["renamed"]
    body = await success_of(await table_data(shop, "follower-token-001", local_table_name="renamed"))
    assert body["TableData"]["table_name"] == "alpha"
    response = await table_data(shop, "follower-token-001", local_table_name="shop_public_alpha")
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"


# -- GetTableData -------------------------------------------------------------------------------------------


async def test_table_data_lists_columns_in_ordinal_order_with_database_type_names(shop: TestClient) -> None:
    """The answer is {"status","TableData":{columns in ordinal order, database_name, folder_name, table_name}}."""
    await grant(shop, "reader-token-0001", "shop_public_measurements")
    body = await success_of(await table_data(shop, "reader-token-0001", local_table_name="shop_public_measurements"))
    assert body == {
        "status": "success",
        "TableData": {
            "columns": dict(MEASUREMENTS_COLUMNS),
            "database_name": "shop",
            "folder_name": "public",
            "table_name": "measurements",
        },
    }
    assert list(body["TableData"]["columns"].items()) == MEASUREMENTS_COLUMNS


async def test_table_data_by_full_path(shop: TestClient) -> None:
    """database, folder and table identify the table as well as its local name does."""
    await grant(shop, "reader-token-0001", "shop_public_beta")
    body = await success_of(await table_data(shop, "reader-token-0001", database="shop", folder="public", table="beta"))
    assert body["TableData"] == {
        "columns": {"id": "integer", "note": "text"},
        "database_name": "shop",
        "folder_name": "public",
        "table_name": "beta",
    }


async def test_table_data_is_read_live(changeable_shop: TestClient, scratch_database: str) -> None:
    """A column added after registration appears at the end of the columns."""
    shop = changeable_shop
    await grant(shop, "reader-token-0001", "shop_public_beta")
    run_sql(scratch_database, "ALTER TABLE public.beta ADD COLUMN added_later date")
    answer = await table_data(shop, "reader-token-0001", local_table_name="shop_public_beta")
    columns = (await success_of(answer))["TableData"]["columns"]
    assert list(columns.items()) == [("id", "integer"), ("note", "text"), ("added_later", "date")]


async def test_table_data_without_a_user_token_is_token_required(shop: TestClient) -> None:
    """No user_token header is 401 token_required (the admin token does not replace it)."""
    for headers in ({}, admin_headers()):
        response = await shop.get("/Table", params={"local_table_name": "shop_public_alpha"}, headers=headers)
        assert response.status == 401
        assert (await error_of(response))["error"] == "token_required"


async def test_table_data_for_a_table_not_granted_is_denied(shop: TestClient) -> None:
    """A token granted another table, and a token never granted, both get 403 access_denied."""
    await grant(shop, "partial-token-0001", "shop_public_beta")
    for token in ("partial-token-0001", "stranger-token-001"):
        response = await table_data(shop, token, local_table_name="shop_public_alpha")
        assert response.status == 403
        assert (await error_of(response))["error"] == "access_denied"


@pytest.mark.parametrize(
    ("unknown", "ungranted"),
    [
        ({"local_table_name": "nowhere"}, {"local_table_name": "shop_public_beta"}),
        (
            {"database": "shop", "folder": "public", "table": "nowhere"},
            {"database": "shop", "folder": "public", "table": "beta"},
        ),
        (
            {"database": "elsewhere", "folder": "public", "table": "beta"},
            {"database": "shop", "folder": "public", "table": "beta"},
        ),
    ],
    ids=["local-name", "path", "unknown-database"],
)
async def test_table_data_for_an_unknown_table_is_denied_as_an_ungranted_one(
    shop: TestClient, unknown: dict[str, str], ungranted: dict[str, str]
) -> None:
    """An unregistered table is 403 access_denied, worded as a registered table not granted (no existence oracle)."""
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    unknown_answer = await table_data(shop, "reader-token-0001", **unknown)
    ungranted_answer = await table_data(shop, "reader-token-0001", **ungranted)
    assert (unknown_answer.status, ungranted_answer.status) == (403, 403)
    unknown_body, ungranted_body = await error_of(unknown_answer), await error_of(ungranted_answer)
    assert unknown_body["error"] == ungranted_body["error"] == "access_denied"
    assert message_template(unknown_body["message"], *unknown.values()) == message_template(
        ungranted_body["message"], *ungranted.values()
    )


async def test_table_data_without_identification_is_a_bad_request(shop: TestClient) -> None:
    """GetTableData with no local_table_name and no full path is 400."""
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    response = await table_data(shop, "reader-token-0001")
    assert response.status == 400
    assert "local_table_name" in (await error_of(response))["message"]


async def test_table_dropped_after_registration_is_not_found(
    changeable_shop: TestClient, scratch_database: str
) -> None:
    """A registered, granted table dropped from the database since is 404 table_not_found."""
    shop = changeable_shop
    await grant(shop, "reader-token-0001", "shop_public_alpha")
    await success_of(await table_data(shop, "reader-token-0001", local_table_name="shop_public_alpha"))
    run_sql(scratch_database, "DROP TABLE public.alpha")
    response = await table_data(shop, "reader-token-0001", local_table_name="shop_public_alpha")
    assert response.status == 404
    assert (await error_of(response))["error"] == "table_not_found"


async def test_table_data_never_carries_the_password(gateway: TestClient, shop_database: str) -> None:
    """The GetTableData answer does not hold the database password."""
    parameters = database_parameters("shop", shop_database, password=DISTINCTIVE_PASSWORD)
    await success_of(await gateway.put("/Database", params=parameters, headers=admin_headers()))
    await grant(gateway, "reader-token-0001", "shop_public_alpha")
    response = await table_data(gateway, "reader-token-0001", local_table_name="shop_public_alpha")
    assert response.status == 200
    text = await response.text()
    assert DISTINCTIVE_PASSWORD not in text
    assert "password" not in text


# -- ListTable ------------------------------------------------------------------------------------------------


async def test_user_token_on_database_list_lists_its_granted_tables_sorted(shop: TestClient) -> None:
    """GET /Database/list with only a user_token answers the granted local names, sorted."""
    for name in ("shop_public_measurements", "shop_public_alpha"):
        await grant(shop, "lister-token-00001", name)
    body = await success_of(await shop.get("/Database/list", headers=user_headers("lister-token-00001")))
    assert body == {"status": "success", "List": ["shop_public_alpha", "shop_public_measurements"]}


async def test_user_token_without_grants_lists_nothing(shop: TestClient) -> None:
    """A token never granted gets an empty list, not an error."""
    assert await granted_names(shop, "nobody") == []


async def test_valid_admin_token_wins_over_user_token(shop: TestClient) -> None:
    """With a valid admin token, /Database/list is ListDatabase even when a user_token is given too."""
    await grant(shop, "lister-token-00001", "shop_public_alpha")
    headers = {**user_headers("lister-token-00001"), "admin_token": ADMIN_TOKEN}
    assert await listed(shop, "/Database/list", headers) == ["shop"]


async def test_wrong_admin_token_is_denied_even_with_a_valid_user_token(shop: TestClient) -> None:
    """A wrong admin token is 403 on /Database/list even though the user token would list tables."""
    await grant(shop, "lister-token-00001", "shop_public_alpha")
    headers = {**user_headers("lister-token-00001"), "admin_token": "wrong-admin-token-000000"}
    response = await shop.get("/Database/list", headers=headers)
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"


@pytest.mark.parametrize("path", ["/Database/list", "/Table/list"])
async def test_list_without_any_token_is_token_required(shop: TestClient, path: str) -> None:
    """Neither token on a list route is 401 token_required."""
    response = await shop.get(path)
    assert response.status == 401
    assert (await error_of(response))["error"] == "token_required"


async def test_table_list_for_the_admin_lists_every_table(shop: TestClient) -> None:
    """GET /Table/list with the admin token answers every local table name, sorted."""
    body = await success_of(await shop.get("/Table/list", headers=admin_headers()))
    assert body == {"status": "success", "List": ["shop_public_alpha", "shop_public_beta", "shop_public_measurements"]}


async def test_table_list_for_a_user_lists_its_granted_tables(shop: TestClient) -> None:
    """GET /Table/list with a user token answers only its granted names."""
    await grant(shop, "lister-token-00001", "shop_public_beta")
    assert await listed(shop, "/Table/list", user_headers("lister-token-00001")) == ["shop_public_beta"]


async def test_table_list_with_a_wrong_admin_token_is_denied(shop: TestClient) -> None:
    """A wrong admin token on /Table/list is 403 even with a valid user token."""
    await grant(shop, "lister-token-00001", "shop_public_beta")
    response = await shop.get(
        "/Table/list", headers={**user_headers("lister-token-00001"), "admin_token": "wrong-admin-token-000000"}
    )
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"


async def test_lists_filter_by_local_database_name(shop: TestClient, shop_database: str) -> None:
    """local_database_name narrows the admin's and the user's table lists to one database."""
    await register_database(shop, "other", shop_database)
    await grant(shop, "lister-token-00001", "shop_public_alpha")
    await grant(shop, "lister-token-00001", "other_public_beta")
    assert await all_table_names(shop, local_database_name="other") == [
        "other_public_alpha",
        "other_public_beta",
        "other_public_measurements",
    ]
    assert await listed(shop, "/Table/list", user_headers("lister-token-00001"), local_database_name="other") == [
        "other_public_beta"
    ]
    assert await granted_names(shop, "lister-token-00001", local_database_name="shop") == ["shop_public_alpha"]
    assert await granted_names(shop, "lister-token-00001") == ["other_public_beta", "shop_public_alpha"]
    assert await granted_names(shop, "lister-token-00001", local_database_name="nowhere") == []
