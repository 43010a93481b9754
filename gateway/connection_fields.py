"""The connection fields a driver declares, and reading AddDatabase / PATCH /Database inputs against them.

A driver names the AddDatabase parameters its databases need
(``Driver.connection_fields``); the gateway checks the inputs against that
declaration, stores only what was declared, and answers only that (never a
secret). ``connection_parameters`` lists every field of the installed drivers
(for the OpenAPI description and the redactor); ``new_connection`` and
``changed_connection`` are the only places that read connection inputs.

The registry keeps a database's connection in five slots (``ConnectionData``),
so a driver declares a subset of them: ``ip`` (kind ``HOST``), ``port``
(``PORT``), ``database``, ``username`` (``TEXT``) and ``password`` (``TEXT``,
``secret``: encrypted at rest, never answered, never logged). A driver that
declares nothing gets ``DEFAULT_CONNECTION_FIELDS``, the five as PostgreSQL
declares them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from gateway.errors import BadRequest

if TYPE_CHECKING:
    from gateway.driver_loader import DriverCatalog
    from gateway.driver_protocol import Driver
    from gateway.inputs import RequestInputs


class FieldKind(enum.Enum):
    """How a connection field's text is checked."""

    TEXT = "text"
    """Any text a driver can pass on (no NUL character)."""
    HOST = "host"
    """A host name or address, without port, spaces or slashes."""
    PORT = "port"
    """A TCP port, an integer from 1 to 65535 (stored as an integer)."""


@attrs.frozen
class ConnectionData:
    """Where a registered database lives and how to log in: the fields its driver declared, None for the others."""

    host: str | None = None
    """Address without the port (the parameter ``ip``)."""
    port: int | None = None
    """TCP port, 1-65535."""
    database: str | None = None
    """The database's name on its server (or whatever the driver declared ``database`` to be, e.g. a file)."""
    username: str | None = None
    """The account the gateway reads through; its privileges always apply."""
    password: str | None = attrs.field(default=None, repr=False)
    """That account's password; never logged, never answered."""


@attrs.frozen
class ConnectionField:
    """One AddDatabase parameter a driver needs to reach its database."""

    name: str
    """The AddDatabase / PATCH /Database parameter: one of ``SLOTS``."""
    kind: FieldKind
    """How its value is checked."""
    required: bool = True
    """AddDatabase refuses to go on without it (400 naming it); an optional text field left out is empty."""
    secret: bool = False
    """A password: encrypted at rest, never answered, never logged. Only ``password`` is, and it must be."""
    description: str = ""
    """For people (the API description)."""


SLOTS: Mapping[str, str] = {"ip": "host", "port": "port", "database": "database", "username": "username", "password": "password"}
"""Each connection parameter a driver may declare, and the ``ConnectionData`` attribute that holds it."""

DEFAULT_CONNECTION_FIELDS: tuple[ConnectionField, ...] = (
    ConnectionField("ip", FieldKind.HOST, description="Host name or address of the database server, without port"),
    ConnectionField("port", FieldKind.PORT, description="TCP port of the database server"),
    ConnectionField("database", FieldKind.TEXT, description="The database's name on its server"),
    ConnectionField("username", FieldKind.TEXT, description="The account the gateway reads through"),
    ConnectionField(
        "password", FieldKind.TEXT, required=False, secret=True, description="That account's password; never answered"
    ),
)
"""What PostgreSQL declares, and what a driver that declares nothing is taken to need."""


def declared_fields(driver: Driver) -> tuple[ConnectionField, ...]:
    """The driver's connection fields; a driver written before the declaration existed needs the default five."""
    return tuple(getattr(driver, "connection_fields", DEFAULT_CONNECTION_FIELDS))


def declaration_problem(fields: Iterable[ConnectionField]) -> str | None:
    """Why a driver's declaration cannot be served (the registry has five slots), or None."""
    seen: set[str] = set()
    for field in fields:
        if field.name not in SLOTS:
            return f"connection field {field.name!r} is not one of {', '.join(SLOTS)}"
        if field.name in seen:
            return f"connection field {field.name!r} is declared twice"
        seen.add(field.name)
        if (field.kind is FieldKind.PORT) != (field.name == "port"):
            return "only the connection field 'port' is of kind port, and it must be"
        if field.secret != (field.name == "password"):
            return "only the connection field 'password' is secret (encrypted at rest), and it must be"
    return None


def connection_parameters(drivers: Iterable[Driver]) -> list[ConnectionField]:
    """Every connection field an installed driver declares, once, in ``SLOTS`` order (for the API description).

    A field is ``required`` when every driver declaring it requires it; its
    description is the first declaring driver's.
    """
    found: dict[str, ConnectionField] = {}
    for driver in drivers:
        for field in declared_fields(driver):
            known = found.get(field.name)
            found[field.name] = field if known is None else attrs.evolve(known, required=known.required and field.required)
    return [found[name] for name in SLOTS if name in found]


SECRET_PARAMETERS = ("password",)
"""The parameters a driver may declare secret: the handlers hand their values to the log redactor first."""


def new_connection(inputs: RequestInputs, drivers: DriverCatalog) -> tuple[str, ConnectionData]:
    """AddDatabase's ``base_type`` and connection: every required field present and valid, none undeclared.

    With ``base_type`` missing or not served, the fields are checked as
    ``DEFAULT_CONNECTION_FIELDS`` first, so a request missing several parameters
    is told the same first one as before drivers declared their fields.
    """
    given_type = inputs.get("base_type")
    served = given_type if given_type is not None and given_type in drivers.names else None
    fields = DEFAULT_CONNECTION_FIELDS if served is None else drivers.connection_fields(served)
    connection = _new_connection(inputs, fields, served)
    base_type = inputs.require("base_type")
    drivers.get(base_type)  # UnsupportedBaseType naming the served ones
    return base_type, connection


def _new_connection(inputs: RequestInputs, fields: tuple[ConnectionField, ...], base_type: str | None) -> ConnectionData:
    if base_type is not None:
        _refuse_undeclared(inputs, fields, base_type)
    values: dict[str, Any] = {}
    for field in fields:
        text = inputs.require(field.name) if field.required else inputs.get(field.name)
        if text is None:
            values[SLOTS[field.name]] = None if field.kind is FieldKind.PORT else ""
        else:
            values[SLOTS[field.name]] = _valid(field, text)
    return ConnectionData(**values)


def changed_connection(inputs: RequestInputs, drivers: DriverCatalog, base_type: str, current: ConnectionData) -> ConnectionData:
    """PATCH /Database's connection: ``current`` with the declared fields given changed (a secret may be empty)."""
    fields = drivers.connection_fields(base_type)
    _refuse_undeclared(inputs, fields, base_type)
    changes: dict[str, Any] = {}
    for field in fields:
        text = inputs.get(field.name)
        if text is None:
            continue
        if not text and not field.secret and field.kind is not FieldKind.PORT:
            raise BadRequest(f"parameter {field.name!r} must not be empty")
        changes[SLOTS[field.name]] = _valid(field, text)
    return attrs.evolve(current, **changes)


def answered_fields(connection: ConnectionData) -> dict[str, str]:
    """GetDatabaseData's connection fields: those the database has, never a secret, in the contract's order."""
    answer: dict[str, str] = {}
    for name in ("ip", "port", "username", "database"):
        value = getattr(connection, SLOTS[name])
        if value is not None:
            answer[name] = str(value)
    return answer


def _refuse_undeclared(inputs: RequestInputs, fields: tuple[ConnectionField, ...], base_type: str) -> None:
    declared = {field.name for field in fields}
    for name in SLOTS:
        if name not in declared and inputs.get(name) is not None:
            raise BadRequest(
                f"parameter {name!r} is not a connection field of base_type {base_type!r};"
                f" its fields are: {', '.join(field.name for field in fields) or 'none'}"
            )


def _valid(field: ConnectionField, text: str) -> Any:
    if field.kind is FieldKind.PORT:
        return valid_port(field.name, text)
    if field.kind is FieldKind.HOST:
        return valid_host(field.name, text)
    return valid_connection_text(field.name, text)


def valid_host(parameter: str, value: str) -> str:
    if not value.isprintable() or any(c.isspace() for c in value) or "/" in value:
        raise BadRequest(f"parameter {parameter!r} must be a host name or address without port, spaces or slashes")
    return value


def valid_connection_text(parameter: str, value: str) -> str:
    """Text a driver can pass on: libpq (and most client libraries) cannot carry a NUL character."""
    if "\x00" in value:
        raise BadRequest(f"parameter {parameter!r} must not contain a NUL character")  # never echo: it may be a password
    return value


def valid_port(parameter: str, value: str) -> int:
    try:
        port = int(value.strip())
    except ValueError:
        port = 0
    if not 1 <= port <= 65535 or not value.strip().isdigit():
        raise BadRequest(f"parameter {parameter!r} must be an integer from 1 to 65535, got {value!r}")
    return port
