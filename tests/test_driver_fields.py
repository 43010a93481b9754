"""Connection fields declared by a driver: AddDatabase, PATCH /Database and GetDatabaseData follow the declaration.

The driver here is PostgreSQL on the test server reached by database name only
(it knows the server itself), installed through the ``dbgateway.drivers``
entry-point group as a package would be, so every request goes through real
HTTP to a real PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import attrs
import pytest
import structlog
from aiohttp.test_utils import TestClient

from drivers.postgres import CONNECTION_FIELDS, PostgresDriver, PostgresPool
from gateway.databases import driver_loader
from gateway.contract.connection_fields import ConnectionData, ConnectionField, FieldKind, as_connection
from gateway.settings.config import GatewayConfig
from gateway.web.connection_inputs import connection_change_parameters, new_connection_parameters
from gateway.databases.driver_loader import DriverCatalog, connection_parameters
from gateway.contract.driver_protocol import PoolLimits
from gateway.errors import BadRequest
from gateway.web.handlers.databases import NewDatabase
from gateway.web.inputs import RequestInputs
from gateway.observability.logbook import SecretRedactor
from gateway.web.openapi_document import build_document
from gateway.web.operations import handler_operations
from gateway.web.parameters import DocumentContext, Parameter, ReadContext, read_declared
from support import admin_headers, database_from, error_of, registry_path, server_parameters, success_of

LOCAL_TYPE = "pglocal"


class LocalPostgresDriver(PostgresDriver):
    """PostgreSQL on the test server, given only the database's name; remembers what the gateway handed it."""

    base_type = LOCAL_TYPE
    connection_fields = (ConnectionField("database", FieldKind.TEXT, description="A database of the test server"),)
    received: list[ConnectionData] = []

    def open_pool(
        self, connection: ConnectionData, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger
    ) -> PostgresPool:
        LocalPostgresDriver.received.append(connection)
        server = server_parameters()
        full = as_connection(
            CONNECTION_FIELDS,
            {**server, "port": int(server["port"]), "database": connection["database"]},
        )
        return super().open_pool(full, limits, logger)


@pytest.fixture(autouse=True)
def local_driver_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    real_entry_points = driver_loader.entry_points
    installed = EntryPoint(LOCAL_TYPE, f"{__name__}:LocalPostgresDriver", driver_loader.ENTRY_POINT_GROUP)

    def with_local_driver(*, group: str) -> list[EntryPoint]:
        return [*real_entry_points(group=group), installed]

    monkeypatch.setattr(driver_loader, "entry_points", with_local_driver)
    LocalPostgresDriver.received.clear()


@pytest.fixture(scope="module")
def local_database() -> Iterator[str]:
    with database_from("CREATE TABLE public.t (id integer)") as name:
        yield name


def add(client: TestClient, **parameters: str) -> Any:
    return client.put("/Database", params={"local_database_name": "local", **parameters}, headers=admin_headers())


async def test_a_database_of_a_driver_with_fewer_fields_keeps_and_answers_only_those(
    gateway: TestClient, local_database: str
) -> None:
    """AddDatabase needs only the declared field; the driver gets only it; GetDatabaseData answers only it."""
    await success_of(await add(gateway, base_type=LOCAL_TYPE, database=local_database))
    assert LocalPostgresDriver.received[-1] == ConnectionData({"database": local_database})
    answer = await success_of(await gateway.get("/Database", params={"local_database_name": "local"}, headers=admin_headers()))
    assert answer == [{"status": "success", "local_name": "local", "database": local_database, "base_type": LOCAL_TYPE}]
    stored = json.loads(Path(registry_path(gateway)).read_text())["databases"]
    assert stored == [{"local_name": "local", "base_type": LOCAL_TYPE, "connection": {"database": local_database}}]


async def test_the_registry_holding_such_a_database_loads_again(
    make_gateway: Any, tmp_path: Path, local_database: str
) -> None:
    """A registry file whose database has no host, port, username or password loads in a new gateway."""
    first = await make_gateway()
    await success_of(await add(first, base_type=LOCAL_TYPE, database=local_database))
    second = await make_gateway()
    answer = await success_of(await second.get("/Database", params={"local_database_name": "local"}, headers=admin_headers()))
    assert answer[0]["database"] == local_database and "ip" not in answer[0]


@pytest.mark.parametrize("undeclared", ["ip", "port", "username", "password"])
async def test_add_database_refuses_a_field_the_driver_does_not_declare(
    gateway: TestClient, local_database: str, undeclared: str
) -> None:
    """Any connection field the driver does not declare is 400 naming the driver's fields; nothing is registered."""
    value = {"ip": "127.0.0.1", "port": "5432", "username": "postgres", "password": "x"}[undeclared]
    response = await add(gateway, base_type=LOCAL_TYPE, database=local_database, **{undeclared: value})
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "bad_request"
    assert body["message"] == (
        f"parameter {undeclared!r} is not a connection field of base_type {LOCAL_TYPE!r}; its fields are: database"
    )
    assert LocalPostgresDriver.received == []


async def test_add_database_requires_the_declared_field(gateway: TestClient) -> None:
    response = await add(gateway, base_type=LOCAL_TYPE)
    assert response.status == 400
    assert (await error_of(response))["message"] == "parameter 'database' is required"


async def test_patch_changes_declared_fields_only(gateway: TestClient, local_database: str) -> None:
    """PATCH /Database refuses an undeclared field and changes a declared one."""
    await success_of(await add(gateway, base_type=LOCAL_TYPE, database=local_database))
    params = {"local_database_name": "local", "port": "5433"}
    response = await gateway.patch("/Database", params=params, headers=admin_headers())
    assert response.status == 400
    assert "its fields are: database" in (await error_of(response))["message"]
    params = {"local_database_name": "local", "database": local_database}
    answer = await success_of(await gateway.patch("/Database", params=params, headers=admin_headers()))
    assert answer == [{"status": "success", "local_name": "local", "database": local_database, "base_type": LOCAL_TYPE}]


def test_a_declaration_the_gateway_cannot_serve_is_refused() -> None:
    """A badly formed name, an operation's own parameter, a secret not of kind text, or choices astray."""
    odd = [
        ConnectionField("File Path", FieldKind.TEXT),
        ConnectionField("base_type", FieldKind.TEXT),
        ConnectionField("pin", FieldKind.INTEGER, secret=True),
        ConnectionField("ssl_mode", FieldKind.CHOICE),
        ConnectionField("path", FieldKind.TEXT, choices=("a",)),
    ]
    for field in odd:

        class Odd(PostgresDriver):
            connection_fields = (field,)

        with pytest.raises(ValueError, match="connection field"):
            DriverCatalog({"odd": Odd()})


FILE_TYPE = "pgfile"
"""A driver declaring fields of any names and kinds (as DuckDB's or MySQL's would), on the test server."""


class FileLikeDriver(LocalPostgresDriver):
    base_type = FILE_TYPE
    connection_fields = (
        ConnectionField("path", FieldKind.TEXT, description="Where the database is"),
        ConnectionField("read_only", FieldKind.BOOLEAN, required=False),
        ConnectionField("ssl_mode", FieldKind.CHOICE, choices=("disable", "require")),
        ConnectionField("threads", FieldKind.INTEGER, required=False),
        ConnectionField("api_key", FieldKind.TEXT, required=False, secret=True),
    )

    def open_pool(
        self, connection: ConnectionData, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger
    ) -> PostgresPool:
        LocalPostgresDriver.received.append(connection)
        server = {**server_parameters(), "port": int(server_parameters()["port"]), "database": connection["path"]}
        return PostgresDriver.open_pool(self, as_connection(CONNECTION_FIELDS, server), limits, logger)


@pytest.fixture
def file_driver_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    real_entry_points = driver_loader.entry_points
    installed = EntryPoint(FILE_TYPE, f"{__name__}:FileLikeDriver", driver_loader.ENTRY_POINT_GROUP)
    monkeypatch.setattr(driver_loader, "entry_points", lambda *, group: [*real_entry_points(group=group), installed])


async def test_fields_of_any_names_and_kinds_are_stored_as_one_object_and_the_secret_never_answered(
    file_driver_installed: None, make_gateway: Any, local_database: str
) -> None:
    """Text, boolean, choice, integer and a secret: checked, handed to the driver typed, stored, answered but the secret."""
    gateway = await make_gateway()
    fields = {"path": local_database, "read_only": "true", "ssl_mode": "require", "threads": "4", "api_key": "k-Wombat-9"}
    response = await add(gateway, base_type=FILE_TYPE, **fields)
    await success_of(response)
    assert LocalPostgresDriver.received[-1] == ConnectionData(
        {"path": local_database, "read_only": True, "ssl_mode": "require", "threads": 4}, {"api_key": "k-Wombat-9"}
    )
    answer = await success_of(await gateway.get("/Database", params={"local_database_name": "local"}, headers=admin_headers()))
    assert answer == [{
        "status": "success", "local_name": "local", "path": local_database, "read_only": "true",
        "ssl_mode": "require", "threads": "4", "base_type": FILE_TYPE,
    }]
    stored = json.loads(Path(registry_path(gateway)).read_text())["databases"][0]
    assert stored["connection"] == {"path": local_database, "read_only": True, "ssl_mode": "require", "threads": 4}
    assert stored["secrets"] == {"api_key": "k-Wombat-9"}  # clear: this gateway has no secret_key
    again = await make_gateway()
    answer = await success_of(await again.get("/Database", params={"local_database_name": "local"}, headers=admin_headers()))
    assert answer[0]["read_only"] == "true" and "api_key" not in answer[0]
    for wrong, message in [
        ({"ssl_mode": "sometimes"}, "must be one of disable, require"),
        ({"read_only": "perhaps"}, "must be true or false"),
        ({"threads": "many"}, "must be an integer"),
        ({"ip": "127.0.0.1"}, "its fields are: path, read_only, ssl_mode, threads, api_key"),
    ]:
        response = await add(gateway, base_type=FILE_TYPE, **{**fields, "local_database_name": "other", **wrong})
        assert response.status == 400 and message in (await error_of(response))["message"]


def test_the_document_describes_fields_of_any_kind() -> None:
    """AddDatabase's parameters and the DatabaseData answer come from the declarations, kinds and all."""
    documented = connection_documented(PostgresDriver(), FileLikeDriver())
    assert documented["read_only"].schema == {"type": "string", "enum": ["true", "false"]}
    assert documented["ssl_mode"].schema == {"type": "string", "enum": ["disable", "require"]}
    assert documented["threads"].schema == {"type": "integer"}
    assert documented["api_key"].secret and not documented["ssl_mode"].secret
    catalog = DriverCatalog({"postgres": PostgresDriver(), FILE_TYPE: FileLikeDriver()})
    document = build_document(handler_operations(), DocumentContext(GatewayConfig(), catalog))
    answer = document["components"]["schemas"]["DatabaseData"]
    assert "api_key" not in answer["items"]["properties"] and "path" in answer["items"]["properties"]
    assert "postgres: ip, port, database, username" in answer["description"]


def test_connection_parameters_list_each_field_once() -> None:
    """The fields of all drivers, in the order first declared; required only where every driver requires it."""
    fields = connection_parameters([PostgresDriver(), LocalPostgresDriver()])
    assert [field.name for field in fields] == ["ip", "port", "database", "username", "password"]
    assert fields == list(CONNECTION_FIELDS)
    optional_database = ConnectionField("database", FieldKind.TEXT, required=False)

    class Optional(PostgresDriver):
        connection_fields = (optional_database,)

    assert connection_parameters([LocalPostgresDriver(), Optional()]) == [
        attrs.evolve(LocalPostgresDriver.connection_fields[0], required=False)
    ]


def connection_documented(*drivers: PostgresDriver, adding: bool = True) -> dict[str, Parameter]:
    context = DocumentContext(GatewayConfig(), DriverCatalog({driver.base_type: driver for driver in drivers}))
    return (new_connection_parameters if adding else connection_change_parameters)(context)


def test_the_document_takes_the_connection_parameters_from_the_installed_drivers() -> None:
    """Required only where every installed driver requires the field; port an integer; password secret."""
    alone = connection_documented(PostgresDriver())
    assert {name: p.required for name, p in alone.items()} == {
        "ip": True, "port": True, "database": True, "username": True, "password": False
    }
    assert alone["port"].schema == {"type": "integer", "minimum": 1, "maximum": 65535}
    assert [name for name, p in alone.items() if p.secret] == ["password"]
    both = connection_documented(PostgresDriver(), LocalPostgresDriver())
    assert [name for name, p in both.items() if p.required] == ["database"]
    assert "Only for base_type postgres." in both["ip"].description
    assert not any(p.required for p in connection_documented(PostgresDriver(), adding=False).values())


def test_database_data_requires_no_connection_field() -> None:
    """GetDatabaseData answers only the declared fields, so the document requires none of them."""
    catalog = DriverCatalog({"postgres": PostgresDriver(), LOCAL_TYPE: LocalPostgresDriver()})
    document = build_document(handler_operations(), DocumentContext(GatewayConfig(), catalog))
    answer = document["components"]["schemas"]["DatabaseData"]["items"]
    assert answer["required"] == ["status", "local_name", "base_type"]
    add_database = document["paths"]["/Database"]["put"]["requestBody"]["content"]["application/json"]["schema"]
    assert {"ip", "port", "database", "username", "password"} <= set(add_database["properties"])


def test_a_password_goes_to_the_redactor_before_any_input_is_read() -> None:
    """AddDatabase reads local_database_name first; its 400 comes after the password is known to the redactor."""
    redactor = SecretRedactor()
    context = ReadContext(GatewayConfig(), redactor, DriverCatalog({"postgres": PostgresDriver()}))
    raw = RequestInputs(query={"password": "pw-Quokka-17", "base_type": "postgres"}, body={})
    with pytest.raises(BadRequest, match="'local_database_name' is required"):
        read_declared(NewDatabase, raw, context)
    assert "pw-Quokka-17" not in redactor.redact_text("login with pw-Quokka-17")
