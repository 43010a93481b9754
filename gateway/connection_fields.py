"""A database's connection fields (ip, port, database, username, password): how they are read, checked and documented.

AddDatabase (PUT /Database) takes them all, UpdateDatabase (PATCH /Database)
any of them; ``connection_parameters`` is the one place the OpenAPI document
gets them from, and ``database_data`` what GetDatabaseData and UpdateDatabase
answer (never the password).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from gateway.driver_loader import DriverCatalog
from gateway.errors import BadRequest
from gateway.inputs import RequestInputs
from gateway.openapi_schemas import TEXT, Component, one_element_array, success_object
from gateway.parameters import DocumentContext, Parameter, ReadContext, optional_text, parameter, required_text
from gateway.registry import DatabaseRecord

CONNECTION_FIELDS = ("ip", "port", "database", "username", "password")
"""The connection parameters, in the specification's spelling (``ip`` is the record's ``host``)."""


def connection_parameters(drivers: DriverCatalog) -> dict[str, Parameter]:
    """The connection inputs as the document shows them, by name (the same for every driver today)."""
    return {
        "ip": Parameter("Database host name or address, without port."),
        "port": Parameter(
            "Database port.",
            schema={"type": "integer", "minimum": 1, "maximum": 65535},
            body_schema={
                "anyOf": [{"type": "integer", "minimum": 1, "maximum": 65535}, {"type": "string", "pattern": "^[0-9]+$"}],
                "description": "Database port, 1-65535, as a number or a string of digits.",
            },
        ),
        "database": Parameter("Database name on its server."),
        "username": Parameter("Database account the gateway reads through."),
        "password": Parameter("That account's password (may be empty); never answered or logged.", secret=True),
    }


def document_connection_parameters(context: DocumentContext) -> Mapping[str, Parameter]:
    return connection_parameters(context.drivers)


@attrs.frozen
class ConnectionData:
    """A new database's connection fields, checked."""

    host: str
    """``ip``."""
    port: int
    """``port``, 1-65535."""
    database: str
    """The database's name on its server."""
    username: str
    """The account."""
    password: str = attrs.field(repr=False)
    """Its password; may be empty (trust or peer authentication)."""


def read_new_connection(raw: RequestInputs, context: ReadContext) -> ConnectionData:
    """AddDatabase's connection fields: all required but the password, which may be empty."""
    password = raw.get("password") or ""
    context.redactor.add(password)  # before anything can log it
    valid_connection_text("password", password)
    return ConnectionData(
        host=valid_host(required_text("ip", raw.get("ip"), context)),
        port=valid_port(required_text("port", raw.get("port"), context)),
        database=valid_connection_text("database", required_text("database", raw.get("database"), context)),
        username=valid_connection_text("username", required_text("username", raw.get("username"), context)),
        password=password,
    )


def read_connection_changes(raw: RequestInputs, context: ReadContext) -> dict[str, str]:
    """UpdateDatabase's connection fields as given (checked once the database is known): name to text."""
    context.redactor.add(raw.get("password"))  # before anything can log it
    return {name: text for name in CONNECTION_FIELDS if (text := raw.get(name)) is not None}


DATABASE_DATA = Component(
    "DatabaseData",
    {
        "description": "A registered database's connection data; never its password.",
        **one_element_array(
            success_object(
                local_name=TEXT,
                ip=TEXT,
                port={"type": "string", "pattern": "^[0-9]{1,5}$", "description": "The port, as a string (specification)."},
                username=TEXT,
                database=TEXT,
                base_type=TEXT,
            )
        ),
    },
)
"""GetDatabaseData's answer, and UpdateDatabase's."""


def database_data(record: DatabaseRecord) -> dict[str, str]:
    """GetDatabaseData's fields for a database: its connection data without the password."""
    return {
        "local_name": record.local_name,
        "ip": record.host,
        "port": str(record.port),
        "username": record.username,
        "database": record.database,
        "base_type": record.base_type,
    }


def base_type_schema(context: DocumentContext) -> dict[str, object]:
    return {"type": "string", "enum": context.drivers.names}


def base_type(*, required: bool) -> Any:
    """The ``base_type`` parameter: one of the installed drivers."""
    return parameter(
        "Driver; one of the installed drivers.",
        schema=base_type_schema,
        body_schema=lambda context: {**base_type_schema(context), "description": "Same as the query parameter."},
        reader=required_text if required else optional_text,
        required=required,
    )


def valid_host(value: str) -> str:
    if not value.isprintable() or any(c.isspace() for c in value) or "/" in value:
        raise BadRequest("parameter 'ip' must be a host name or address without port, spaces or slashes")
    return value


def valid_connection_text(name: str, value: str) -> str:
    """Database name, user name or password as a driver can pass it on: libpq cannot carry a NUL character."""
    if "\x00" in value:
        raise BadRequest(f"parameter {name!r} must not contain a NUL character")  # never echo: it may be a password
    return value


def valid_port(value: str) -> int:
    try:
        port = int(value.strip())
    except ValueError:
        port = 0
    if not 1 <= port <= 65535 or not value.strip().isdigit():
        raise BadRequest(f"parameter 'port' must be an integer from 1 to 65535, got {value!r}")
    return port
