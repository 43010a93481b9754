"""AddDatabase (PUT /Database), GetDatabaseData (GET /Database) and the shared /Database/list route."""

from __future__ import annotations

import attrs
from aiohttp import web

from gateway import errors
from gateway.contract.connection_fields import ConnectionData
from gateway.errors import BadRequest, DatabaseExists
from gateway.observability.audit import AdminAction
from gateway.registry import DatabaseRecord, RegistryState
from gateway.request.responses import success
from gateway.web.connection_inputs import DATABASE_DATA, base_type, database_data, new_connection
from gateway.web.keys import AUDITOR, DRIVERS, POOLS, REGISTRY
from gateway.web.listing import LIST_ERRORS, NAME_LIST_ANSWER, ListInputs, answer_list
from gateway.web.named_inputs import MAX_NAME_LENGTH, NAME, DatabaseNameInputs
from gateway.web.openapi_schemas import TEXT, Component, one_element_array, success_object
from gateway.web.operations import (
    ACCESS_DENIED,
    BAD_INPUT,
    DATABASE_NOT_FOUND,
    PAYLOAD_TOO_LARGE,
    REGISTRY_WRITE,
    UPSTREAM_UNAVAILABLE,
    Access,
    Operation,
    error_answer,
    json_answer,
)
from gateway.web.parameters import ReadContext, parameter, required_text


def valid_name(name: str, text: str | None, context: ReadContext) -> str:
    value = required_text(name, text, context)
    if len(value) > MAX_NAME_LENGTH or not value.isprintable() or value != value.strip():
        raise BadRequest(
            f"parameter {name!r} must be 1 to {MAX_NAME_LENGTH} printable characters without leading or trailing spaces"
        )
    return value


@attrs.frozen(kw_only=True)
class NewDatabase:
    """AddDatabase's inputs."""

    local_database_name: str = parameter("The local name to register it under.", schema=NAME, reader=valid_name)
    """The local name."""
    connection: ConnectionData = new_connection()
    """Where the database is and how to log in: the fields ``base_type``'s driver declares."""
    base_type: str = base_type(required=True)
    """Its driver."""


async def add_database(request: web.Request, inputs: NewDatabase) -> web.Response:
    """Connect with the given credentials, read the catalog, then register database and tables."""
    app = request.app
    app[DRIVERS].get(inputs.base_type)  # UnsupportedBaseType naming the served ones
    record = DatabaseRecord.of(inputs.local_database_name, inputs.base_type, inputs.connection)
    if record.local_name in app[REGISTRY].state.databases:
        raise DatabaseExists(f"a database is already registered as {record.local_name!r}")
    async with app[POOLS].on_trial(record) as pool:
        await pool.check()
        catalog = await pool.read_catalog()
        await app[REGISTRY].update(lambda state: (state.with_database(record, catalog), None))
    app[AUDITOR].admin_change(
        AdminAction.DATABASE_REGISTERED,
        local_database_name=record.local_name,
        base_type=record.base_type,
        tables=len(catalog),
    )
    return success({"local_name": record.local_name}, as_array=True)


async def get_database(request: web.Request, inputs: DatabaseNameInputs) -> web.Response:
    """Connection data of one database, without its password."""
    record = request.app[REGISTRY].state.database(inputs.local_database_name)
    return success(database_data(record), as_array=True)


async def list_databases_or_tables(request: web.Request, inputs: ListInputs) -> web.Response:
    """ListDatabase with an admin token, ListTable with only a user token (the contract's table)."""
    return await answer_list(
        request,
        inputs,
        admin_names=database_names,
        no_token_message="send an admin_token header to list databases, or a user_token header to list tables",
    )


def database_names(state: RegistryState, only_database: str | None) -> list[str]:
    return sorted(name for name in state.databases if only_database is None or name == only_database)


OPERATIONS = (
    Operation(
        "AddDatabase",
        ("PUT",),
        "/Database",
        add_database,
        Access.ADMIN,
        "Register a database (connects and reads its catalog first)",
        description="Inputs from the query string or the body: local_database_name, base_type and the connection "
        "fields base_type's driver declares (the parameters below; each says which drivers take it when not all "
        "do); another driver's field is 400. Every relation the driver's catalog lists (outside its system "
        "schemas) gets the local name <local_database_name>_<folder>_<table> (_2, _3 ... on a collision).",
        inputs=NewDatabase,
        body=True,
        answers={
            200: json_answer(
                "Registered",
                Component("DatabaseAdded", one_element_array(success_object(local_name=TEXT))),
                [{"status": "success", "local_name": "shop"}],
            )
        },
        errors=(
            *REGISTRY_WRITE,
            BAD_INPUT,
            error_answer("UnsupportedBaseType", "No installed driver serves base_type", errors.UnsupportedBaseType),
            ACCESS_DENIED,
            error_answer("DatabaseExists", "Already exists", errors.DatabaseExists),
            PAYLOAD_TOO_LARGE,
            UPSTREAM_UNAVAILABLE,
        ),
    ),
    Operation(
        "GetDatabaseData",
        ("GET",),
        "/Database",
        get_database,
        Access.ADMIN,
        "A registered database's connection data, without its password",
        inputs=DatabaseNameInputs,
        answers={200: json_answer("The connection data", DATABASE_DATA)},
        errors=(BAD_INPUT, ACCESS_DENIED, DATABASE_NOT_FOUND),
    ),
    Operation(
        "ListDatabaseOrTable",
        ("GET",),
        "/Database/list",
        list_databases_or_tables,
        Access.ADMIN_OR_USER,
        "With a valid admin token: every registered database; with only a user token: its granted tables",
        description="Headers decide the operation: a valid admin_token (with or without user_token) lists databases, "
        "a wrong one is 403; only a user_token lists the tables granted to it; neither is 401.",
        aliases=("/Database/List",),
        inputs=ListInputs,
        answers={200: json_answer("The names", NAME_LIST_ANSWER, {"status": "success", "List": ["orders"]})},
        errors=LIST_ERRORS,
    ),
)
