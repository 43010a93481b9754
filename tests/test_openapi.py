"""The OpenAPI document: valid, built from the running gateway's declarations and settings, true to its routes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient
from openapi_spec_validator import validate

import gateway
from gateway import errors
from gateway.settings.config import GatewayConfig
from gateway.databases.driver_loader import DriverCatalog
from gateway.web.openapi_document import OPENAPI_DOCUMENT, build_document
from gateway.web.operations import handler_operations
from gateway.web.parameters import DocumentContext
from gateway.web.console.routes import CONSOLE_PATHS
from openapi_contract import ResponseContract, canonical_path, default_document
from support import (
    GatewayFactory,
    admin_headers,
    create_database,
    drop_database,
    grant,
    register_database,
    user_headers,
)

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def documented_operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }


def served_operations(client: TestClient) -> set[tuple[str, str]]:
    """(method, path) of every route, trailing-slash twins folded into the documented spelling.

    The console's page and assets are left out: a page for people, not an operation (docs/console.md).
    """
    return {
        (route.method, canonical_path(route.resource.canonical))
        for route in client.app.router.routes()
        if route.resource.canonical not in CONSOLE_PATHS
    }


def gateway_error_codes() -> set[str]:
    """Every machine code an exception class in gateway.errors can answer with."""
    found: set[str] = set()
    pending: list[type[errors.GatewayError]] = [errors.GatewayError]
    while pending:
        cls = pending.pop()
        found.add(cls.code)
        pending.extend(cls.__subclasses__())
    return found - {errors.Conflict.code}  # a base class; only its subclasses are raised


# -- the document itself ---------------------------------------------------------------------------


def test_document_is_a_valid_openapi_3_1_document() -> None:
    """The document built from the declarations passes the OpenAPI 3.1 validator."""
    document = default_document()
    assert document["openapi"].startswith("3.1.")
    validate(document)


def test_document_version_is_the_package_version() -> None:
    """info.version is the gateway's own version."""
    assert default_document()["info"]["version"] == gateway.__version__


def test_documented_error_codes_are_the_gateways_codes() -> None:
    """The ErrorCode enum lists exactly the codes gateway.errors can answer with."""
    documented = set(default_document()["components"]["schemas"]["ErrorCode"]["enum"])
    assert documented == gateway_error_codes()


def test_every_operation_documents_its_success_and_internal_error() -> None:
    """Each operation has an operationId, a 200 answer and the 500 internal_error body."""
    document = default_document()
    operation_ids = []
    for method, path in documented_operations(document):
        entry = document["paths"][path][method.lower()]
        operation_ids.append(entry["operationId"])
        assert {"200", "500"} <= set(entry["responses"]), (method, path)
    assert len(operation_ids) == len(set(operation_ids))


NOT_JSON_SUCCESS = {
    ("GET", "/metrics"),
    *((method, f"/GetData/{name}") for method in ("GET", "POST") for name in ("csv", "ndjson")),
}
"""Prometheus reads the text exposition format only; GetData's CSV and NDJSON operations answer their own format
only (a generated client returns the text); every other success is JSON."""


def test_every_success_answer_declares_application_json() -> None:
    """Clients generated from the document (openapi-python-client) parse a 200 only when it is declared JSON."""
    document = default_document()
    for method, path in documented_operations(document) - NOT_JSON_SUCCESS:
        content = document["paths"][path][method.lower()]["responses"]["200"]["content"]
        assert "application/json" in content, (method, path, sorted(content))


# -- served as documented --------------------------------------------------------------------------


async def test_routes_served_are_the_routes_documented(gateway: TestClient) -> None:
    """Every route the app serves is in the document, and every documented operation is served."""
    served = served_operations(gateway)
    documented = documented_operations(default_document())
    assert served - documented == set(), "served but not documented"
    assert documented - served == set(), "documented but not served"


async def test_every_route_is_served_with_and_without_trailing_slash(gateway: TestClient) -> None:
    """The document's promise: each path but / is also served with a trailing slash."""
    paths = {route.resource.canonical for route in gateway.app.router.routes()}
    for path in paths - {"/"}:
        twin = path[:-1] if path.endswith("/") else path + "/"
        assert twin in paths, path


@pytest.mark.parametrize("path", ["/openapi.json", "/openapi.json/"])
async def test_document_is_served_without_a_token(gateway: TestClient, path: str) -> None:
    """GET /openapi.json answers the app's document, as JSON, to anyone; with the default settings, the default one."""
    response = await gateway.get(path)
    assert response.status == 200
    assert response.content_type == "application/json"
    served = orjson.loads(await response.read())
    assert served == gateway.app[OPENAPI_DOCUMENT].document == default_document()


async def test_document_states_the_running_gateways_settings(make_gateway: GatewayFactory) -> None:
    """Limits come from the app's config: the grant's minimum token length, the query size, /metrics' token."""
    client = await make_gateway(min_user_token_length=40, max_query_bytes=5000, metrics_require_admin=False)
    document = orjson.loads(await (await client.get("/openapi.json")).read())
    validate(document)
    parameters = document["components"]["parameters"]
    grant = document["paths"]["/GrantTableAccess"]["post"]["parameters"]
    token = next(parameters[p["$ref"].rsplit("/", 1)[1]] for p in grant if "user_token" in p["$ref"])
    assert token["schema"]["minLength"] == 40
    query = next(p for p in parameters.values() if p["name"] == "query")
    assert query["schema"]["maxLength"] == 5000
    assert document["paths"]["/metrics"]["get"]["security"] == []
    assert document["paths"]["/Logs"]["get"]["security"] != []


def test_base_type_lists_the_installed_drivers() -> None:
    """base_type's enum is the drivers the gateway has, not a list written by hand."""
    drivers = DriverCatalog({"mysql": object(), "postgres": object()})  # type: ignore[dict-item]
    document = build_document(handler_operations(), DocumentContext(GatewayConfig(), drivers))
    assert document["components"]["parameters"]["base_type"]["schema"]["enum"] == ["mysql", "postgres"]


def test_error_answers_are_written_once() -> None:
    """Every error answer of every operation is a reference to components/responses."""
    document = default_document()
    for method, path in documented_operations(document):
        for status, response in document["paths"][path][method.lower()]["responses"].items():
            if int(status) >= 400 and (method, path, status) != ("GET", "/readyz", "503"):
                assert set(response) == {"$ref"}, (method, path, status)


# -- the answer check the whole suite runs ---------------------------------------------------------


def contract_problems(method: str, path: str, status: int, body: Any, media_type: str = "application/json") -> list[str]:
    return ResponseContract(default_document()).problems(method, path, status, media_type, orjson.dumps(body))


DATABASE_DATA = {
    "status": "success",
    "local_name": "shop",
    "ip": "127.0.0.1",
    "port": "5432",
    "username": "postgres",
    "database": "shop",
    "base_type": "postgres",
}


def test_answer_check_accepts_a_documented_answer() -> None:
    """A GetDatabaseData answer of the documented shape raises no problem, with or without trailing slash."""
    assert contract_problems("GET", "/Database", 200, [DATABASE_DATA]) == []
    assert contract_problems("GET", "/Database/", 200, [DATABASE_DATA]) == []


def test_answer_check_reports_an_extra_field() -> None:
    """A password in GetDatabaseData's answer breaks the document."""
    problems = contract_problems("GET", "/Database", 200, [{**DATABASE_DATA, "password": "x"}])
    assert problems and "password" in problems[0]


def test_answer_check_reports_an_undocumented_status_or_code() -> None:
    """A status the operation does not document, or an error code its status does not list, is reported."""
    error = {"status": "error", "error": "query_timeout", "message": "too slow"}
    assert "not documented" in contract_problems("GET", "/Logs", 504, error)[0]
    assert contract_problems("GET", "/Logs", 403, error)
    assert contract_problems("GET", "/Logs", 403, {**error, "error": "access_denied"}) == []


def test_answer_check_reports_a_wrong_content_type() -> None:
    """GetData answers text/javascript or application/json; the same body as text/plain breaks the document."""
    result = [{"status": "success", "columns": [], "data": [], "row_count": 0, "truncated": False}]
    assert contract_problems("GET", "/GetData", 200, result, "text/javascript") == []
    assert contract_problems("GET", "/GetData", 200, result, "application/json") == []
    assert contract_problems("GET", "/GetData", 200, result, "text/plain")
    assert contract_problems("GET", "/GetData", 200, [{"status": "success"}], "application/json")


def test_answer_check_holds_unknown_paths_to_the_error_body() -> None:
    """An unknown path's 404 must still be the contract's error body."""
    assert contract_problems("GET", "/nowhere", 404, {"status": "error", "error": "not_found", "message": "no"}) == []
    assert contract_problems("GET", "/nowhere", 404, {"detail": "Not Found"})


async def test_suite_answers_are_checked(make_gateway: GatewayFactory) -> None:
    """The suite's clients record an answer that breaks the document (here: one checked against a stricter copy)."""
    client = await make_gateway()
    strict = orjson.loads(orjson.dumps(default_document()))
    strict["components"]["schemas"]["NameList"]["properties"]["List"]["maxItems"] = 0
    client.contract = ResponseContract(strict)  # type: ignore[attr-defined]
    database = create_database("CREATE TABLE public.items (id int)")
    try:
        await register_database(client, "shop", database)
        response = await client.get("/Database/list", headers=admin_headers())
        assert (await response.json())["List"] == ["shop"]  # the check left the body readable
    finally:
        drop_database(database)
    problems = client.contract_problems  # type: ignore[attr-defined]
    assert len(problems) == 1 and "/Database/list" in problems[0]
    problems.clear()  # recorded as it should be; the fixture must not fail this test for it



async def test_suite_requests_are_checked(make_gateway: GatewayFactory) -> None:
    """A request that got a 2xx with an undeclared query parameter, or a value its schema refuses, is recorded."""
    client = await make_gateway()
    assert (await client.get("/healthz", params={"verbose": "1"})).status == 200
    assert (await client.get("/Logs", params={"limit": "3"}, headers=admin_headers())).status == 200
    assert (await client.get("/Logs", params={"level": "INFO"}, headers=admin_headers())).status == 200
    assert (await client.get("/readyz", params={"databases": "maybe"})).status == 400  # refused: not checked
    problems = client.contract_problems  # type: ignore[attr-defined]
    assert len(problems) == 1 and "'verbose' is not declared" in problems[0], problems
    client.contract.document["components"]["parameters"]["limit"]["schema"]["maximum"] = 2  # type: ignore[attr-defined]
    client.contract = ResponseContract(client.contract.document)  # type: ignore[attr-defined]
    await client.get("/Logs", params={"limit": "3"}, headers=admin_headers())
    assert len(problems) == 2 and "limit='3'" in problems[1], problems
    problems.clear()  # recorded as they should be


STREAMED_SQL = "CREATE TABLE public.items (id int, pad text); " + (
    "INSERT INTO public.items SELECT g, repeat('x', 100) FROM generate_series(1, 5000) AS g"
)
"""About 600 KB of JSON: more than GetData sends whole (256 KiB), less than the check reads (1 MiB)."""


async def test_streamed_answers_are_checked(make_gateway: GatewayFactory) -> None:
    """A streamed GetData answer's headers are checked at once, its JSON body when the test reads it whole."""
    client = await make_gateway()
    strict = orjson.loads(orjson.dumps(client.contract.document))  # type: ignore[attr-defined]
    strict["components"]["schemas"]["QueryResult"]["items"]["properties"]["data"]["maxItems"] = 10
    strict["paths"]["/GetData"]["get"]["responses"]["200"]["headers"]["Dbgateway-Row-Count"]["required"] = True
    database = create_database(STREAMED_SQL)
    try:
        await register_database(client, "shop", database)
        await grant(client, "reader-token-0001", "shop_public_items")
        client.contract = ResponseContract(strict)  # type: ignore[attr-defined]
        response = await client.get(
            "/GetData",
            params={"local_database_name": "shop", "query": "SELECT id, pad FROM public.items"},
            headers=user_headers("reader-token-0001"),
        )
        assert response.status == 200 and "Content-Length" not in response.headers
        problems = client.contract_problems  # type: ignore[attr-defined]
        assert len(problems) == 1 and "Dbgateway-Row-Count is missing" in problems[0], problems
        assert (await response.json())[0]["row_count"] == 5000  # the check left the body readable
        assert len(problems) == 2 and "is too long" in problems[1], problems
        del strict["paths"]["/GetData"]["get"]["responses"]["200"]["x-streamed"]
        client.contract = ResponseContract(strict)  # type: ignore[attr-defined]
        await client.get(
            "/GetData",
            params={"local_database_name": "shop", "query": "SELECT id, pad FROM public.items"},
            headers=user_headers("reader-token-0001"),
        )
        assert "not declared streamed" in problems[2], problems
    finally:
        drop_database(database)
    problems.clear()  # recorded as they should be


@pytest.mark.parametrize("path", ["/GetData", "/GetData/csv", "/GetData/ndjson"])
def test_getdata_declares_its_parameter_values(path: str) -> None:
    """Issue 23: repeated `param` in the query string (an exploded form array), `params` in the POST body only."""
    document = default_document()
    operation = document["paths"][path]
    names = {entry["$ref"].rsplit("/", 1)[-1] for entry in operation["get"]["parameters"]}
    assert "param" in names and "params" not in names
    param = document["components"]["parameters"]["param"]
    assert (param["style"], param["explode"], param["schema"]["type"]) == ("form", True, "array")
    body = operation["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert "param" not in body
    assert body["params"]["type"] == "array"
    assert set(body["params"]["items"]["type"]) == {"string", "number", "boolean", "null"}
