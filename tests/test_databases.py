"""AddDatabase (PUT /Database), GetDatabaseData (GET /Database) and ListDatabase (GET /Database/list), over HTTP."""

from __future__ import annotations


import pytest
from aiohttp.test_utils import TestClient

from support import (
    ADMIN_TOKEN,
    DISTINCTIVE_PASSWORD,
    admin_headers,
    database_parameters,
    error_of,
    free_port,
    listed,
    register_database,
    registry_path,
    success_of,
)


REQUIRED_PARAMETERS = ["local_database_name", "ip", "port", "database", "username", "base_type"]


async def database_list(client: TestClient) -> list[str]:
    return await listed(client, "/Database/list", admin_headers())


# -- AddDatabase: success ------------------------------------------------------------------------------


async def test_add_database_answers_the_local_name(gateway: TestClient, served_database: str) -> None:
    """A reachable database is registered and the answer is [{"status":"success","local_name":...}]."""
    response = await gateway.put(
        "/Database", params=database_parameters("shop", served_database), headers=admin_headers()
    )
    assert await success_of(response) == [{"status": "success", "local_name": "shop"}]
    assert await database_list(gateway) == ["shop"]


async def test_add_database_reads_parameters_from_a_json_body(gateway: TestClient, served_database: str) -> None:
    """Every AddDatabase parameter may come in a JSON body instead of the query string."""
    body = database_parameters("from_body", served_database)
    response = await gateway.put("/Database", json=body, headers=admin_headers())
    assert await success_of(response) == [{"status": "success", "local_name": "from_body"}]
    data = await success_of(
        await gateway.get("/Database", params={"local_database_name": "from_body"}, headers=admin_headers())
    )
    assert data[0]["database"] == served_database


async def test_add_database_accepts_a_numeric_port_in_the_body(gateway: TestClient, served_database: str) -> None:
    """A JSON number is a valid port; GetDatabaseData answers it as a string."""
    body = database_parameters("numeric_port", served_database)
    body["port"] = int(body["port"])
    assert (await success_of(await gateway.put("/Database", json=body, headers=admin_headers())))[0][
        "local_name"
    ] == "numeric_port"
    data = await success_of(
        await gateway.get("/Database", params={"local_database_name": "numeric_port"}, headers=admin_headers())
    )
    assert data[0]["port"] == str(body["port"])


async def test_add_database_combines_query_string_and_body(gateway: TestClient, served_database: str) -> None:
    """The body supplies whatever the query string does not give."""
    parameters = database_parameters("mixed", served_database)
    in_query = {name: parameters.pop(name) for name in ("local_database_name", "ip", "port")}
    response = await gateway.put("/Database", params=in_query, json=parameters, headers=admin_headers())
    assert await success_of(response) == [{"status": "success", "local_name": "mixed"}]


async def test_same_server_database_can_be_registered_under_two_local_names(
    gateway: TestClient, served_database: str
) -> None:
    """Local names, not server databases, must be unique."""
    await register_database(gateway, "first", served_database)
    await register_database(gateway, "second", served_database)
    assert await database_list(gateway) == ["first", "second"]
    assert await listed(gateway, "/Table/list", admin_headers()) == ["first_public_t", "second_public_t"]


# -- AddDatabase: errors (and nothing registered on failure) ---------------------------------------------


@pytest.mark.parametrize("headers", [{}, {"admin_token": "not-the-admin-token-at-all"}], ids=["absent", "wrong"])
async def test_add_database_without_the_admin_token_is_denied(
    gateway: TestClient, served_database: str, headers: dict[str, str]
) -> None:
    """An absent or wrong admin token is 403 access_denied and registers nothing."""
    response = await gateway.put("/Database", params=database_parameters("shop", served_database), headers=headers)
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"
    assert await database_list(gateway) == []


async def test_duplicate_local_database_name_is_a_conflict(gateway: TestClient, served_database: str) -> None:
    """A second AddDatabase under a used name is 409 database_exists and leaves the first as it was."""
    await register_database(gateway, "shop", served_database)
    before = registry_path(gateway).read_bytes()
    response = await gateway.put(
        "/Database", params=database_parameters("shop", "postgres", username="someone_else"), headers=admin_headers()
    )
    assert response.status == 409
    assert (await error_of(response))["error"] == "database_exists"
    data = await success_of(
        await gateway.get("/Database", params={"local_database_name": "shop"}, headers=admin_headers())
    )
    assert data[0]["database"] == served_database
    assert registry_path(gateway).read_bytes() == before


async def test_unknown_base_type_lists_the_served_ones(gateway: TestClient, served_database: str) -> None:
    """base_type other than an installed driver is 400 unsupported_base_type naming "postgres"."""
    response = await gateway.put(
        "/Database", params=database_parameters("shop", served_database, base_type="mysql"), headers=admin_headers()
    )
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "unsupported_base_type"
    assert "postgres" in body["message"]
    assert await database_list(gateway) == []


@pytest.mark.parametrize("port", ["0", "65536", "-1", "abc", "54.32", "5432abc", "99999999999999999999"])
async def test_port_outside_1_to_65535_is_a_bad_request(gateway: TestClient, served_database: str, port: str) -> None:
    """A port that is not an integer from 1 to 65535 is 400 naming 'port'."""
    response = await gateway.put(
        "/Database", params=database_parameters("shop", served_database, port=port), headers=admin_headers()
    )
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "bad_request"
    assert "port" in body["message"]
    assert await database_list(gateway) == []


@pytest.mark.parametrize("missing", REQUIRED_PARAMETERS)
async def test_missing_parameter_is_named(gateway: TestClient, served_database: str, missing: str) -> None:
    """AddDatabase without one required parameter is 400 naming that parameter."""
    parameters = database_parameters("shop", served_database)
    del parameters[missing]
    response = await gateway.put("/Database", params=parameters, headers=admin_headers())
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "bad_request"
    assert missing in body["message"]
    assert await database_list(gateway) == []


@pytest.mark.parametrize("empty", ["local_database_name", "database", "username"])
async def test_empty_parameter_is_named(gateway: TestClient, served_database: str, empty: str) -> None:
    """An empty required parameter is as bad as a missing one: 400 naming it."""
    parameters = database_parameters("shop", served_database)
    parameters[empty] = ""
    response = await gateway.put("/Database", params=parameters, headers=admin_headers())
    assert response.status == 400
    assert empty in (await error_of(response))["message"]


async def test_unreachable_server_is_database_unavailable(gateway: TestClient) -> None:
    """A port nothing listens on is 502 database_unavailable; the password is not echoed; nothing is registered."""
    before = registry_path(gateway).read_bytes()
    parameters = database_parameters("ghost", "postgres", port=str(free_port()), password=DISTINCTIVE_PASSWORD)
    response = await gateway.put("/Database", params=parameters, headers=admin_headers())
    assert response.status == 502
    text = await response.text()
    assert (await error_of(response))["error"] == "database_unavailable"
    assert DISTINCTIVE_PASSWORD not in text
    assert await database_list(gateway) == []
    assert registry_path(gateway).read_bytes() == before


async def test_nonexistent_server_database_is_database_unavailable(gateway: TestClient) -> None:
    """A database name the server does not have fails at connect: 502 with the driver's reason, nothing registered."""
    before = registry_path(gateway).read_bytes()
    missing = "dbgw_test_no_such_database_4242"
    response = await gateway.put(
        "/Database",
        params=database_parameters("ghost", missing, password=DISTINCTIVE_PASSWORD),
        headers=admin_headers(),
    )
    assert response.status == 502
    body = await error_of(response)
    assert body["error"] == "database_unavailable"
    assert missing in body["message"]
    assert DISTINCTIVE_PASSWORD not in body["message"]
    assert await database_list(gateway) == []
    assert await listed(gateway, "/Table/list", admin_headers()) == []
    assert registry_path(gateway).read_bytes() == before


async def test_failed_registration_leaves_the_name_free(gateway: TestClient, served_database: str) -> None:
    """After a 502 the same local name can be registered successfully."""
    response = await gateway.put(
        "/Database", params=database_parameters("shop", "dbgw_test_no_such_database_4242"), headers=admin_headers()
    )
    assert response.status == 502
    assert (await register_database(gateway, "shop", served_database))[0]["local_name"] == "shop"


# -- GetDatabaseData --------------------------------------------------------------------------------------


async def test_get_database_data_answers_the_connection_data(gateway: TestClient, served_database: str) -> None:
    """GetDatabaseData answers exactly status, local_name, ip, port (a string), username, database, base_type."""
    parameters = database_parameters("shop", served_database, password=DISTINCTIVE_PASSWORD)
    await success_of(await gateway.put("/Database", params=parameters, headers=admin_headers()))
    response = await gateway.get("/Database", params={"local_database_name": "shop"}, headers=admin_headers())
    body = await success_of(response)
    assert body == [
        {
            "status": "success",
            "local_name": "shop",
            "ip": parameters["ip"],
            "port": parameters["port"],
            "username": parameters["username"],
            "database": served_database,
            "base_type": "postgres",
        }
    ]
    assert isinstance(body[0]["port"], str)


async def test_get_database_data_never_carries_the_password(gateway: TestClient, served_database: str) -> None:
    """No key and no value of the answer is the password."""
    await success_of(
        await gateway.put(
            "/Database",
            params=database_parameters("shop", served_database, password=DISTINCTIVE_PASSWORD),
            headers=admin_headers(),
        )
    )
    response = await gateway.get("/Database", params={"local_database_name": "shop"}, headers=admin_headers())
    text = await response.text()
    assert response.status == 200
    assert DISTINCTIVE_PASSWORD not in text
    assert "password" not in text


async def test_get_database_data_for_an_unknown_name_is_not_found(gateway: TestClient) -> None:
    """An unregistered local_database_name is 404 database_not_found."""
    response = await gateway.get("/Database", params={"local_database_name": "nowhere"}, headers=admin_headers())
    assert response.status == 404
    assert (await error_of(response))["error"] == "database_not_found"


async def test_get_database_data_without_the_name_is_a_bad_request(gateway: TestClient) -> None:
    """GetDatabaseData without local_database_name is 400 naming it."""
    response = await gateway.get("/Database", headers=admin_headers())
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "bad_request"
    assert "local_database_name" in body["message"]


@pytest.mark.parametrize("headers", [{}, {"admin_token": ADMIN_TOKEN + "x"}], ids=["absent", "wrong"])
async def test_get_database_data_without_the_admin_token_is_denied(
    gateway: TestClient, served_database: str, headers: dict[str, str]
) -> None:
    """An absent or wrong admin token is 403 access_denied, even for a registered database."""
    await register_database(gateway, "shop", served_database)
    response = await gateway.get("/Database", params={"local_database_name": "shop"}, headers=headers)
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"


# -- ListDatabase -----------------------------------------------------------------------------------------


async def test_list_database_is_empty_at_first(gateway: TestClient) -> None:
    """A fresh gateway lists no database: {"status":"success","List":[]}."""
    body = await success_of(await gateway.get("/Database/list", headers=admin_headers()))
    assert body == {"status": "success", "List": []}


async def test_list_database_answers_every_name_sorted(gateway: TestClient, served_database: str) -> None:
    """ListDatabase answers all local database names in sorted order."""
    for name in ("beta", "alpha", "Gamma"):
        await register_database(gateway, name, served_database)
    body = await success_of(await gateway.get("/Database/list", headers=admin_headers()))
    assert body == {"status": "success", "List": ["Gamma", "alpha", "beta"]}


async def test_list_database_filters_by_local_database_name(gateway: TestClient, served_database: str) -> None:
    """local_database_name narrows the list to that database; an unknown one gives an empty list."""
    for name in ("alpha", "beta"):
        await register_database(gateway, name, served_database)
    assert await listed(gateway, "/Database/list", admin_headers(), local_database_name="beta") == ["beta"]
    assert await listed(gateway, "/Database/list", admin_headers(), local_database_name="nowhere") == []


async def test_list_database_never_carries_the_password(gateway: TestClient, served_database: str) -> None:
    """The list answer holds names only, never the password."""
    await success_of(
        await gateway.put(
            "/Database",
            params=database_parameters("shop", served_database, password=DISTINCTIVE_PASSWORD),
            headers=admin_headers(),
        )
    )
    response = await gateway.get("/Database/list", headers=admin_headers())
    assert response.status == 200
    assert DISTINCTIVE_PASSWORD not in await response.text()
