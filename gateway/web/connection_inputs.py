"""A database's connection inputs: read against its driver's declared fields, documented, and answered.

AddDatabase (PUT /Database) and UpdateDatabase (PATCH /Database) take the
connection fields as one input group (``new_connection``, ``connection_changes``;
``gateway.web.parameters``): ``read_new_connection`` and ``read_connection_changes``
are the only places that read them, and ``new_connection_parameters`` /
``connection_change_parameters`` the only place the OpenAPI document gets them
from (the installed drivers' declarations, ``gateway.contract.connection_fields``). A
field the chosen driver does not declare is 400 naming the fields it does; only
the declared fields are stored, and ``database_data`` answers only those (never
a secret). A secret input (a field any installed driver declares secret) goes
to the log redactor before any input of the operation is read.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from gateway.contract.connection_fields import (
    ConnectionData,
    ConnectionField,
    ConnectionValue,
    FieldKind,
    as_connection,
)
from gateway.databases.driver_loader import DriverCatalog, connection_parameters
from gateway.errors import BadRequest
from gateway.registry import DatabaseRecord
from gateway.web.inputs import RequestInputs
from gateway.web.openapi_schemas import SUCCESS_STATUS, TEXT, Component, closed_object, one_element_array
from gateway.web.parameters import (
    DocumentContext,
    Parameter,
    ReadContext,
    optional_text,
    parameter,
    parameter_group,
    required_text,
)

PORT_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 65535}
PORT_TEXT = {"type": "string", "pattern": "^[0-9]{1,5}$", "description": "The port, as a string (specification)."}
"""How GetDatabaseData answers the port."""

# -- the document ----------------------------------------------------------------------------------


def new_connection_parameters(context: DocumentContext) -> dict[str, Parameter]:
    """AddDatabase's connection fields: every installed driver's, required where every installed driver requires it."""
    return _documented(context, adding=True)


def connection_change_parameters(context: DocumentContext) -> dict[str, Parameter]:
    """UpdateDatabase's connection fields: the same, none required (give those that change)."""
    return _documented(context, adding=False)


def _documented(context: DocumentContext, *, adding: bool) -> dict[str, Parameter]:
    declarations = {name: context.drivers.connection_fields(name) for name in context.drivers.names}
    parameters: dict[str, Parameter] = {}
    for field in connection_parameters(context.drivers.drivers):
        taking = [name for name, fields in declarations.items() if any(f.name == field.name for f in fields)]
        required = adding and all(
            any(f.name == field.name and f.required for f in fields) for fields in declarations.values()
        )
        description = (field.description or field.name).rstrip(".") + "."
        if len(taking) < len(declarations):
            description += f" Only for base_type {', '.join(taking)}."
        parameters[field.name] = _parameter(field, description, required)
    return parameters


def _parameter(field: ConnectionField, description: str, required: bool) -> Parameter:
    if field.kind in (FieldKind.PORT, FieldKind.INTEGER):
        schema: dict[str, Any] = PORT_SCHEMA if field.kind is FieldKind.PORT else {"type": "integer"}
        return Parameter(
            description,
            schema=schema,
            body_schema={
                "anyOf": [schema, {"type": "string", "pattern": "^-?[0-9]+$"}],
                "description": f"{description} A number or a string of digits.",
            },
            required=required,
            secret=field.secret,
        )
    if field.kind is FieldKind.BOOLEAN:
        flag: dict[str, Any] = {"type": "string", "enum": ["true", "false"]}  # a query string carries text
        either = {"anyOf": [{"type": "boolean"}, flag], "description": f"{description} true or false."}
        return Parameter(description, schema=flag, body_schema=either, required=required, secret=field.secret)
    if field.kind is FieldKind.CHOICE:
        choice: dict[str, Any] = {"type": "string", "enum": list(field.choices)}
        body = {**choice, "description": description}
        return Parameter(description, schema=choice, body_schema=body, required=required, secret=field.secret)
    return Parameter(description, required=required, secret=field.secret)


def base_type_schema(context: DocumentContext) -> dict[str, object]:
    return {"type": "string", "enum": context.drivers.names}


def base_type(*, required: bool) -> Any:
    """The ``base_type`` parameter: one of the installed drivers."""
    return parameter(
        "Driver; one of the installed drivers. It decides which connection fields the database takes.",
        schema=base_type_schema,
        body_schema=lambda context: {**base_type_schema(context), "description": "Same as the query parameter."},
        reader=required_text if required else optional_text,
        required=required,
    )


def _database_data_schema(context: DocumentContext) -> dict[str, object]:
    fields = [field for field in connection_parameters(context.drivers.drivers) if not field.secret]
    properties: dict[str, object] = {"status": SUCCESS_STATUS, "local_name": TEXT}
    for field in fields:
        properties[field.name] = PORT_TEXT if field.kind is FieldKind.PORT else TEXT
    properties["base_type"] = TEXT
    declared = "; ".join(
        f"{name}: {', '.join(f.name for f in context.drivers.connection_fields(name) if not f.secret) or 'none'}"
        for name in context.drivers.names
    )
    return {
        "description": "A registered database's connection data: the fields its driver declares, each as a string"
        f" ({declared}); never a secret.",
        **one_element_array(closed_object(properties, optional=tuple(field.name for field in fields))),
    }


DATABASE_DATA = Component("DatabaseData", _database_data_schema)
"""GetDatabaseData's answer, and UpdateDatabase's."""


def database_data(record: DatabaseRecord) -> dict[str, str]:
    """GetDatabaseData's fields for a database: the connection fields its driver declared, never a secret."""
    answer = {"local_name": record.local_name}
    for name, value in record.connection.values.items():  # in the driver's declaration order
        answer[name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    answer["base_type"] = record.base_type
    return answer


# -- reading ---------------------------------------------------------------------------------------


def new_connection() -> Any:
    """AddDatabase's connection fields, one input group; a secret goes to the redactor whichever driver is chosen."""
    return parameter_group(new_connection_parameters, read_new_connection, secrets=_secret_fields)


def connection_changes() -> Any:
    """UpdateDatabase's connection fields given, by name, one input group; a secret goes to the redactor first."""
    return parameter_group(connection_change_parameters, read_connection_changes, secrets=_secret_fields)


def _secret_fields(context: ReadContext) -> tuple[str, ...]:
    return context.drivers.secret_fields


def read_new_connection(raw: RequestInputs, context: ReadContext) -> ConnectionData:
    """AddDatabase's connection: every field ``base_type``'s driver requires present and valid, none undeclared.

    With ``base_type`` missing or not served, the fields every installed driver
    requires are checked (``base_type``, read next, then says what is wrong with
    it), so a request missing several parameters is told the same first one as
    before drivers declared their fields.
    """
    given_type = raw.get("base_type")
    if given_type is None or given_type not in context.drivers.names:
        common = [field for field in connection_parameters(context.drivers.drivers) if field.required]
        required_by_all = [
            field for field in common
            if all(field.name in {f.name for f in context.drivers.connection_fields(n)} for n in context.drivers.names)
        ]
        return _new_connection(raw, tuple(required_by_all))
    fields = context.drivers.connection_fields(given_type)
    _refuse_undeclared(_given_fields(raw, context), fields, given_type)
    return _new_connection(raw, fields)


def _given_fields(raw: RequestInputs, context: ReadContext) -> list[str]:
    return [name for name in sorted(context.drivers.field_names) if raw.get(name) is not None]


def _new_connection(raw: RequestInputs, fields: tuple[ConnectionField, ...]) -> ConnectionData:
    values: dict[str, ConnectionValue] = {}
    for field in fields:
        text = raw.require(field.name) if field.required else raw.get(field.name)
        if text is not None:
            values[field.name] = _valid(field, text)
        elif field.kind in (FieldKind.TEXT, FieldKind.HOST):
            values[field.name] = ""  # an optional text left out is empty (a password under trust authentication)
    return as_connection(fields, values)


def read_connection_changes(raw: RequestInputs, context: ReadContext) -> dict[str, str]:
    """UpdateDatabase's connection fields as given, by name; ``changed_connection`` checks them later."""
    return {name: text for name in _given_fields(raw, context) if (text := raw.get(name)) is not None}


def changed_connection(
    given: Mapping[str, str], drivers: DriverCatalog, base_type: str, current: ConnectionData
) -> ConnectionData:
    """PATCH /Database's connection: ``current`` with the declared fields given changed (a secret may be empty)."""
    fields = drivers.connection_fields(base_type)
    _refuse_undeclared(given, fields, base_type)
    values = {name: current[name] for name in current.names()}
    for field in fields:
        text = given.get(field.name)
        if text is None:
            continue
        if not text and not field.secret and field.kind is not FieldKind.PORT:
            raise BadRequest(f"parameter {field.name!r} must not be empty")
        values[field.name] = _valid(field, text)
    return as_connection(fields, values)


def _refuse_undeclared(given: Collection[str], fields: tuple[ConnectionField, ...], base_type: str) -> None:
    declared = {field.name for field in fields}
    for name in given:
        if name not in declared:
            raise BadRequest(
                f"parameter {name!r} is not a connection field of base_type {base_type!r};"
                f" its fields are: {', '.join(field.name for field in fields) or 'none'}"
            )


def _valid(field: ConnectionField, text: str) -> ConnectionValue:
    if field.kind is FieldKind.PORT:
        return valid_port(field.name, text)
    if field.kind is FieldKind.HOST:
        return valid_host(field.name, text)
    if field.kind is FieldKind.INTEGER:
        if not re.fullmatch(r"\s*-?[0-9]{1,18}\s*", text):
            raise BadRequest(f"parameter {field.name!r} must be an integer, got {text!r}")
        return int(text)
    if field.kind is FieldKind.BOOLEAN:
        if text.strip().lower() not in ("true", "false"):
            raise BadRequest(f"parameter {field.name!r} must be true or false, got {text!r}")
        return text.strip().lower() == "true"
    if field.kind is FieldKind.CHOICE and text not in field.choices:
        raise BadRequest(f"parameter {field.name!r} must be one of {', '.join(field.choices)}, got {text!r}")
    return valid_connection_text(field.name, text)


def valid_host(parameter: str, value: str) -> str:
    if not value.isprintable() or any(c.isspace() for c in value) or "/" in value:
        raise BadRequest(f"parameter {parameter!r} must be a host name or address without port, spaces or slashes")
    return value


def valid_connection_text(parameter: str, value: str) -> str:
    """Text a driver can pass on: most client libraries cannot carry a NUL character."""
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
