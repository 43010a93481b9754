"""Schemathesis against a live ``dbgateway serve``: generated requests get only answers the OpenAPI document allows.

One gateway process serves a registered scratch database and a user token with
grants. Every operation of the OpenAPI document it serves (GET /openapi.json) gets a fixed number of
generated requests (valid and invalid inputs, derandomized so CI sends the same
ones each run), first with the user token, then with the admin token. The admin
run goes last because it may unregister, rename or re-point what the user run
reads; every answer either run gets is still documented, so nothing is excluded.
Generated hosts are pinned to 127.0.0.1: AddDatabase and PATCH /Database connect
to the host they are given, and nothing may leave this machine.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
import requests
import schemathesis
from aiohttp.test_utils import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core import NOT_SET
from schemathesis.errors import FailureGroup

from support import (
    ADMIN_TOKEN,
    admin_headers,
    create_database,
    database_parameters,
    drop_database,
    error_of,
    free_port,
    register_database,
    start_gateway_process,
    stop_process,
    wait_until_listening,
)

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
NOT_SERVER_ERRORS = ["2xx", "3xx", "4xx", "502", "503", "504"]
"""502/503/504 are the gateway's documented answers about the database behind it (unreachable, no free
connection, past the statement time limit), not failures of the gateway itself; status_code_conformance
still holds each operation to the statuses it documents, and response_schema_conformance to their codes."""
EXAMPLES_PER_RUN = 5
"""Generated requests per operation, per kind of run, per token: about four hundred in all, a few seconds."""
REQUEST_TIMEOUT_SECONDS = 15.0
USER_TOKEN = "schemathesis-user-7c1d0e"
LOCAL_NAME = "shop"
LOOPBACK = "127.0.0.1"
CONNECTING_OPERATIONS = {("PUT", "/Database"), ("PATCH", "/Database")}
"""Operations that make the gateway connect to the ``ip`` they are given."""

SETUP_SQL = """
CREATE TABLE public.items (id int PRIMARY KEY, note text, price numeric, seen timestamptz);
INSERT INTO public.items VALUES (1, 'one', 1.50, '2024-01-01T00:00:00Z'), (2, NULL, NULL, NULL);
CREATE SCHEMA sales;
CREATE TABLE sales.orders (id int, item int, placed date);
"""


@attrs.frozen
class LiveGateway:
    """A ``dbgateway serve`` process with one registered database and one user token granted its tables."""

    base_url: str
    """http://127.0.0.1:<port>"""
    server_database: str
    """The scratch database's name on the PostgreSQL server (registered as ``LOCAL_NAME``)."""


@attrs.define
class FuzzReport:
    """What one run sent and what broke."""

    requests: int = 0
    """Requests sent."""
    failures: list[str] = attrs.Factory(list)
    """One entry per failing request: operation, failed checks, a curl command and the answer."""


@attrs.frozen
class Focus:
    """Query parameters that carry generated requests past the first checks, into the database work."""

    fixed: dict[str, Any]
    """Always sent as given."""
    defaults: dict[str, Any] = attrs.Factory(dict)
    """Sent when generation left them out, so a request is not merely missing a parameter."""

    def apply(self, case: Any) -> None:
        case.query = {**self.defaults, **(case.query or {}), **self.fixed}
        case.body = NOT_SET  # a generated body would mostly disagree with the fixed values: 400 ambiguous_request


@pytest.fixture(scope="module")
def live_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGateway]:
    data_dir = tmp_path_factory.mktemp("schemathesis") / "data"
    data_dir.mkdir()
    database = create_database(SETUP_SQL)
    port = free_port()
    # A short acquire limit bounds how long a generated AddDatabase waits on a local port that never answers.
    process = start_gateway_process(
        data_dir, port, DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN, DBGATEWAY_ACQUIRE_TIMEOUT="2", DBGATEWAY_LOG_LEVEL="warning"
    )
    try:
        wait_until_listening(process, port)
        gateway = LiveGateway(base_url=f"http://127.0.0.1:{port}", server_database=database)
        _register_and_grant(gateway)
        yield gateway
    finally:
        stop_process(process)
        drop_database(database)


def _register_and_grant(gateway: LiveGateway) -> None:
    admin = {"admin_token": ADMIN_TOKEN}
    parameters = database_parameters(LOCAL_NAME, gateway.server_database)
    registered = requests.put(f"{gateway.base_url}/Database", params=parameters, headers=admin, timeout=30)
    assert registered.status_code == 200, registered.text
    for table in (f"{LOCAL_NAME}_public_items", f"{LOCAL_NAME}_sales_orders"):
        granted = requests.post(
            f"{gateway.base_url}/GrantTableAccess",
            params={"user_token": USER_TOKEN, "local_table_name": table},
            headers=admin,
            timeout=30,
        )
        assert granted.status_code == 200, granted.text


def load_schema(gateway: LiveGateway) -> Any:
    """The document the live gateway serves."""
    served = requests.get(f"{gateway.base_url}/openapi.json", timeout=30)
    served.raise_for_status()
    schema = schemathesis.openapi.from_dict(served.json())
    # Each run sends the token it is given; generated token headers would only ever be wrong ones.
    schema.config.generation.update(with_security_parameters=False)
    schema.config.checks.not_a_server_error.expected_statuses = NOT_SERVER_ERRORS
    return schema


def focus_for(method: str, path: str, gateway: LiveGateway) -> Focus | None:
    server = database_parameters(LOCAL_NAME, gateway.server_database)
    query_in_shop = Focus(fixed={"local_database_name": LOCAL_NAME}, defaults={"query": "SELECT 1"})
    focus = {
        # Generated local names, database names and passwords on the real server: registrations of the
        # scratch database under generated names, and databases the server does not have.
        ("PUT", "/Database"): Focus(
            fixed={name: server[name] for name in ("ip", "port", "username", "base_type")},
            defaults={"local_database_name": "fuzzed", "database": gateway.server_database},
        ),
        # Generated new connection data for the registered database (saved only when it connects).
        ("PATCH", "/Database"): Focus(fixed={"local_database_name": LOCAL_NAME}),
        # Generated SQL in the registered database.
        ("GET", "/GetData"): query_in_shop,
        ("POST", "/GetData"): query_in_shop,
    }
    return focus.get((method, path))


def confine_to_loopback(case: Any) -> None:
    """Generated hosts never leave this machine: AddDatabase and PATCH /Database connect to ``ip``."""
    if (case.method.upper(), case.path) not in CONNECTING_OPERATIONS:
        return
    case.query = {**(case.query or {}), "ip": LOOPBACK}
    if isinstance(case.body, dict) and "ip" in case.body:
        case.body = {**case.body, "ip": LOOPBACK}


def takes_input(operation: Any) -> bool:
    """Whether invalid inputs can be generated at all (query parameters or a body)."""
    return bool(operation.definition.raw.get("parameters") or operation.definition.raw.get("requestBody"))


def fuzz(gateway: LiveGateway, headers: dict[str, str]) -> FuzzReport:
    """Send every operation's generated requests with ``headers`` and check each answer."""
    report = FuzzReport()
    session = requests.Session()
    for result in load_schema(gateway).get_all_operations():
        operation = result.ok()
        runs: list[tuple[GenerationMode, Focus | None]] = [(GenerationMode.POSITIVE, None)]
        if takes_input(operation):
            runs.append((GenerationMode.NEGATIVE, None))
        focused = focus_for(operation.method.upper(), operation.path, gateway)
        if focused is not None:
            runs.append((GenerationMode.POSITIVE, focused))
        for mode, focus in runs:

            @settings(
                max_examples=EXAMPLES_PER_RUN,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def exercise(case: Any) -> None:
                if focus is not None:
                    focus.apply(case)
                confine_to_loopback(case)
                response = case.call(
                    base_url=gateway.base_url, headers=headers, session=session, timeout=REQUEST_TIMEOUT_SECONDS
                )
                report.requests += 1
                try:
                    case.validate_response(response, checks=CHECKS, headers=headers)
                except FailureGroup as group:
                    titles = "; ".join(sorted({failure.title for failure in group.exceptions}))
                    report.failures.append(
                        f"{operation.label} [{mode.value}] -> {response.status_code}: {titles}\n"
                        f"    {case.as_curl_command(headers=headers)}\n    {response.text[:300]}"
                    )

            exercise()
    session.close()
    return report


def test_valid_requests_get_documented_successes(live_gateway: LiveGateway) -> None:
    """Hand-made valid requests of the user's operations succeed and pass the same checks (generation seldom hits them)."""
    schema = load_schema(live_gateway)
    user = {"user_token": USER_TOKEN}
    calls = [
        ("GET", "/Database/list", {}, NOT_SET),
        ("GET", "/Table/list", {}, NOT_SET),
        ("GET", "/Table", {"local_table_name": f"{LOCAL_NAME}_public_items"}, NOT_SET),
        ("GET", "/GetData", {"local_database_name": LOCAL_NAME, "query": "SELECT * FROM public.items"}, NOT_SET),
        ("POST", "/GetData", {}, {"local_database_name": LOCAL_NAME, "query": "SELECT o.* FROM sales.orders AS o"}),
    ]
    with requests.Session() as session:
        for method, path, query, body in calls:
            case = schema[path][method].Case(query=query, body=body)
            response = case.call(base_url=live_gateway.base_url, headers=user, session=session, timeout=30)
            assert response.status_code == 200, (method, path, response.text)
            case.validate_response(response, checks=CHECKS, headers=user)


# The user run first: the admin run may unregister, rename or re-point what the user token reads.
@pytest.mark.parametrize(
    ("who", "headers"),
    [("user", {"user_token": USER_TOKEN}), ("admin", {"admin_token": ADMIN_TOKEN})],
)
def test_generated_requests_get_documented_answers(
    live_gateway: LiveGateway, who: str, headers: dict[str, str]
) -> None:
    """Every generated request with this token gets no 500, and a status, content type and body the document allows."""
    started = time.monotonic()
    report = fuzz(live_gateway, headers)
    print(f"schemathesis with the {who} token: {report.requests} requests in {time.monotonic() - started:.1f} s")
    assert report.requests >= 150, report.requests
    assert report.failures == [], f"{len(report.failures)} of {report.requests} answers break the document:\n" + (
        "\n".join(report.failures)
    )


# -- what schemathesis found, pinned ---------------------------------------------------------------


@pytest.mark.parametrize("field", ["database", "username", "password"])
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_nul_character_in_connection_data_is_a_bad_request(
    gateway: TestClient, scratch_database: str, method: str, field: str
) -> None:
    """A NUL in a database name, user or password is 400 naming the field, not a 500 from libpq."""
    await register_database(gateway, LOCAL_NAME, scratch_database)
    parameters = (
        database_parameters("other", scratch_database) if method == "PUT" else {"local_database_name": LOCAL_NAME}
    )
    parameters[field] = "x\x00y"
    response = await gateway.request(method, "/Database", params=parameters, headers=admin_headers())
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "bad_request" and repr(field) in body["message"], body
