"""Conventions every route follows: paths, header spellings, 404/405/413/400 answers and the error body."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient

from support import (
    ADMIN_TOKEN,
    admin_headers,
    database_parameters,
    error_of,
    granted_names,
    listed,
    registry_path,
    rename_table,
    success_of,
    user_headers,
)

# Every operation's method and path, as the specification and the contract spell them (without trailing slash).
ROUTES = [
    ("PUT", "/Database"),
    ("GET", "/Database"),
    ("GET", "/Database/list"),
    ("GET", "/Database/List"),
    ("POST", "/Table"),
    ("GET", "/Table"),
    ("GET", "/Table/list"),
    ("GET", "/Table/List"),
    ("POST", "/GrantTableAccess"),
    ("GET", "/Logs"),
    ("GET", "/GetData"),
    ("POST", "/GetData"),
]

ONE_MIB = 1024 * 1024


SHOP_SQL = "CREATE TABLE public.alpha (id integer)"
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


SHOP_GRANTS = {"reader-token-0001": ["shop_public_alpha"]}
"""The grants of the ``shop`` fixture (conftest.py)."""


# -- paths ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
async def test_every_path_is_served_with_and_without_a_trailing_slash(
    gateway: TestClient, method: str, path: str
) -> None:
    """A path and the same path with "/" appended reach the same operation (same status, same error code)."""
    outcomes = []
    for spelling in (path, path + "/"):
        response = await gateway.request(method, spelling, headers=admin_headers())
        body = await response.json()
        outcome = body["error"] if isinstance(body, dict) and body["status"] == "error" else "success"
        assert outcome not in ("not_found", "method_not_allowed"), spelling
        outcomes.append((response.status, outcome))
    assert outcomes[0] == outcomes[1]


async def test_database_list_is_also_spelt_with_a_capital_l(shop: TestClient) -> None:
    """/Database/List answers exactly as /Database/list, for the admin and for a user token."""
    for headers in (admin_headers(), user_headers("reader-token-0001")):
        lower = await success_of(await shop.get("/Database/list", headers=headers))
        upper = await success_of(await shop.get("/Database/List", headers=headers))
        assert lower == upper
    assert await listed(shop, "/Database/List", admin_headers()) == ["shop"]
    assert await listed(shop, "/Database/List", user_headers("reader-token-0001")) == ["shop_public_alpha"]


async def test_table_list_is_also_spelt_with_a_capital_l(shop: TestClient) -> None:
    """/Table/List answers exactly as /Table/list."""
    assert await listed(shop, "/Table/List", admin_headers()) == await listed(shop, "/Table/list", admin_headers())


# -- header spellings -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["admin_token", "Admin-Token", "admin-token", "ADMIN_TOKEN", "Admin_Token"])
async def test_admin_token_header_spellings(shop: TestClient, name: str) -> None:
    """The admin token is accepted under admin_token or Admin-Token, in any letter case."""
    assert await listed(shop, "/Database/list", {name: ADMIN_TOKEN}) == ["shop"]
    response = await shop.post(
        "/GrantTableAccess/",
        params={"user_token": "other-token-00001", "local_table_name": "shop_public_alpha"},
        headers={name: ADMIN_TOKEN},
    )
    assert await success_of(response) == [{"status": "success"}]


@pytest.mark.parametrize("name", ["user_token", "User-Token", "user-token", "USER_TOKEN"])
async def test_user_token_header_spellings(shop: TestClient, name: str) -> None:
    """The user token is accepted under user_token or User-Token, in any letter case."""
    assert await listed(shop, "/Database/list", {name: "reader-token-0001"}) == ["shop_public_alpha"]
    response = await shop.get(
        "/Table", params={"local_table_name": "shop_public_alpha"}, headers={name: "reader-token-0001"}
    )
    assert (await success_of(response))["TableData"]["table_name"] == "alpha"


async def test_wrong_hyphenated_admin_token_is_denied(shop: TestClient) -> None:
    """A wrong token under Admin-Token is 403, like under admin_token."""
    response = await shop.get("/Database/list", headers={"Admin-Token": ADMIN_TOKEN + "-not"})
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"


async def test_an_empty_admin_token_header_counts_as_absent(shop: TestClient) -> None:
    """An empty admin_token header beside a user token makes /Database/list a ListTable."""
    headers = {"admin_token": "", "user_token": "reader-token-0001"}
    assert await listed(shop, "/Database/list", headers) == ["shop_public_alpha"]


# -- unknown routes and methods --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/index.html", "/nope", "/Database/extra", "/Logs/x", "/database", "/GrantTableAccess/more/"])
async def test_unknown_route_is_a_json_404(gateway: TestClient, path: str) -> None:
    """A path no operation serves is 404 not_found as a JSON error body."""
    response = await gateway.get(path, headers=admin_headers())
    assert response.status == 404
    assert (await error_of(response))["error"] == "not_found"


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/Table", {"GET", "POST"}),
        ("PATCH", "/Logs/", {"GET"}),
        ("PUT", "/GrantTableAccess/", {"POST", "GET", "DELETE"}),
        ("PUT", "/Table", {"GET", "POST"}),
        ("POST", "/Database/list", {"GET"}),
    ],
)
async def test_wrong_method_is_a_json_405_with_allow(
    gateway: TestClient, method: str, path: str, allowed: set[str]
) -> None:
    """A known path with another method is 405 method_not_allowed with an Allow header listing the served methods."""
    response = await gateway.request(method, path, headers=admin_headers())
    assert response.status == 405
    assert (await error_of(response))["error"] == "method_not_allowed"
    served = {item.strip() for item in response.headers["Allow"].split(",")}
    assert allowed <= served
    assert method not in served


# -- bodies ------------------------------------------------------------------------------------------------------


def oversized_json(size: int) -> bytes:
    """A JSON object of exactly ``size`` bytes."""
    head, tail = b'{"pad": "', b'"}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


@pytest.mark.parametrize(("method", "path"), [("PUT", "/Database"), ("POST", "/Table"), ("POST", "/GetData")])
async def test_body_over_one_mib_is_payload_too_large(shop: TestClient, method: str, path: str) -> None:
    """A body of 1 MiB + 1 byte is 413 payload_too_large as a JSON error body."""
    headers = {**admin_headers(), **user_headers("reader-token-0001"), "Content-Type": "application/json"}
    response = await shop.request(method, path, data=oversized_json(ONE_MIB + 1), headers=headers)
    assert response.status == 413
    assert (await error_of(response))["error"] == "payload_too_large"


async def test_chunked_body_over_one_mib_is_payload_too_large(shop: TestClient) -> None:
    """A chunked body (no Content-Length) that grows past 1 MiB is 413 too."""

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"pad": "'
        for _ in range(17):
            yield b"x" * 65536
        yield b'"}'

    headers = {**admin_headers(), "Content-Type": "application/json"}
    response = await shop.put("/Database", data=chunks(), headers=headers)
    assert response.status == 413
    assert (await error_of(response))["error"] == "payload_too_large"
    assert await listed(shop, "/Database/list", admin_headers()) == ["shop"]


async def test_body_of_exactly_one_mib_is_accepted(gateway: TestClient, shop_database: str) -> None:
    """A 1 MiB body is not over the limit: AddDatabase with padding to exactly 1 MiB succeeds."""
    parameters = database_parameters("padded", shop_database)
    prefix = ("{" + ", ".join(f'"{k}": "{v}"' for k, v in parameters.items()) + ', "pad": "').encode()
    body = prefix + b"x" * (ONE_MIB - len(prefix) - 2) + b'"}'
    assert len(body) == ONE_MIB
    response = await gateway.put(
        "/Database", data=body, headers={**admin_headers(), "Content-Type": "application/json"}
    )
    assert await success_of(response) == [{"status": "success", "local_name": "padded"}]


@pytest.mark.parametrize(
    "body",
    [b'{"local_database_name": ', b"{'single': 'quotes'}", b"[1, 2]", b'"text"', b"\xff\xfe"],
    ids=["truncated", "single-quotes", "array", "string", "not-utf8"],
)
async def test_malformed_json_body_is_a_bad_request(gateway: TestClient, body: bytes) -> None:
    """A body that is not one JSON object is 400 bad_request and registers nothing."""
    before = registry_path(gateway).read_bytes()
    response = await gateway.put(
        "/Database", data=body, headers={**admin_headers(), "Content-Type": "application/json"}
    )
    assert response.status == 400
    assert (await error_of(response))["error"] == "bad_request"
    assert registry_path(gateway).read_bytes() == before


async def test_malformed_json_body_on_rename_is_a_bad_request(shop: TestClient) -> None:
    """ChangeLocalTableName with a body that is not JSON is 400 and renames nothing."""
    response = await shop.post("/Table", data=b"{oops", headers={**admin_headers(), "Content-Type": "application/json"})
    assert response.status == 400
    assert (await error_of(response))["error"] == "bad_request"
    assert await listed(shop, "/Table/list", admin_headers()) == ["shop_public_alpha"]


async def test_body_field_of_the_wrong_json_type_is_named(gateway: TestClient, shop_database: str) -> None:
    """A body field that should be text but is an object is 400 naming that field."""
    body = {**database_parameters("shop", shop_database), "username": {"nested": True}}
    response = await gateway.put("/Database", json=body, headers=admin_headers())
    assert response.status == 400
    assert "username" in (await error_of(response))["message"]


# -- query string versus body ---------------------------------------------------------------------------------------


async def test_field_given_differently_in_query_and_body_is_ambiguous(gateway: TestClient, shop_database: str) -> None:
    """AddDatabase with local_database_name "a" in the query and "b" in the body is 400 ambiguous_request naming it."""
    response = await gateway.put(
        "/Database",
        params={"local_database_name": "a"},
        json=database_parameters("b", shop_database),
        headers=admin_headers(),
    )
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "ambiguous_request"
    assert "local_database_name" in body["message"]
    assert await listed(gateway, "/Database/list", admin_headers()) == []


async def test_field_given_equally_in_query_and_body_is_not_ambiguous(gateway: TestClient, shop_database: str) -> None:
    """The same value in both places is one value: AddDatabase succeeds."""
    parameters = database_parameters("same", shop_database)
    response = await gateway.put(
        "/Database", params={"local_database_name": "same"}, json=parameters, headers=admin_headers()
    )
    assert await success_of(response) == [{"status": "success", "local_name": "same"}]


async def test_new_name_given_differently_in_query_and_body_is_ambiguous(shop: TestClient) -> None:
    """ChangeLocalTableName with two different new_local_table_name values is 400 ambiguous_request naming it."""
    response = await rename_table(
        shop,
        {"table": {"local_table_name": "shop_public_alpha"}, "new_local_table_name": "one"},
        new_local_table_name="two",
    )
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "ambiguous_request"
    assert "new_local_table_name" in body["message"]
    assert await listed(shop, "/Table/list", admin_headers()) == ["shop_public_alpha"]


async def test_query_parameter_repeated_with_different_values_is_ambiguous(shop: TestClient) -> None:
    """user_token given twice with different values is 400 ambiguous_request naming it, and grants nothing."""
    response = await shop.post(
        "/GrantTableAccess/?user_token=first-token-00001&user_token=second-token-0001&local_table_name=shop_public_alpha",
        headers=admin_headers(),
    )
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "ambiguous_request"
    assert "user_token" in body["message"]
    assert await granted_names(shop, "first-token-00001") == [] and await granted_names(shop, "second-token-0001") == []


# -- the error body ------------------------------------------------------------------------------------------------


ERROR_REQUESTS = [
    ("GET", "/nope", {}, None, 404),
    ("DELETE", "/Logs", {}, None, 405),
    ("GET", "/Database", {}, None, 403),
    ("GET", "/Database/list", {}, None, 401),
    ("GET", "/Database", {"local_database_name": "nowhere"}, "admin", 404),
    ("GET", "/Logs/", {"level": "loud"}, "admin", 400),
    (
        "POST",
        "/Table",
        {"local_table_name": "shop_public_alpha", "new_local_table_name": "shop_public_alpha_x"},
        None,
        403,
    ),
    ("GET", "/Table", {"local_table_name": "shop_public_alpha"}, "stranger-token-001", 403),
    ("GET", "/Table", {"local_table_name": "nowhere"}, "reader-token-0001", 403),
    ("PUT", "/Database", {"local_database_name": "shop"}, "admin", 400),
]


@pytest.mark.parametrize(("method", "path", "params", "who", "status"), ERROR_REQUESTS)
async def test_every_error_body_is_status_error_message(
    shop: TestClient, method: str, path: str, params: dict[str, str], who: str | None, status: int
) -> None:
    """Errors answer JSON {"status":"error","error":<snake_case>,"message":<text>} and nothing else, never HTML."""
    headers = admin_headers() if who == "admin" else user_headers(who) if who else {}
    response = await shop.request(method, path, params=params, headers=headers)
    assert response.status == status
    body = await error_of(response)
    assert body["error"].replace("_", "").isalpha() and body["error"].islower()
    text = await response.text()
    assert "<html" not in text.lower() and "Traceback" not in text


async def test_success_answers_are_json(shop: TestClient) -> None:
    """Every non-GetData success answers Content-Type application/json with "status": "success"."""
    responses = [
        await shop.get("/Database", params={"local_database_name": "shop"}, headers=admin_headers()),
        await shop.get("/Database/list", headers=admin_headers()),
        await shop.get("/Table/list", headers=user_headers("reader-token-0001")),
        await shop.get("/Table", params={"local_table_name": "shop_public_alpha"}, headers=user_headers("reader-token-0001")),
        await shop.get("/Logs/", headers=admin_headers()),
    ]
    for response in responses:
        body = await success_of(response)
        assert (body[0] if isinstance(body, list) else body)["status"] == "success"
