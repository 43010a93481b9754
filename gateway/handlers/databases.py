"""AddDatabase (PUT /Database), GetDatabaseData (GET /Database) and the shared /Database/list route."""

from __future__ import annotations

from aiohttp import web

from gateway.audit import AdminAction
from gateway.auth import (
    require_admin,
)
from gateway.connection_fields import SECRET_PARAMETERS, answered_fields, new_connection
from gateway.errors import BadRequest, DatabaseExists
from gateway.handlers.tables import answer_list
from gateway.inputs import read_inputs
from gateway.keys import ADMIN_TOKEN, AUDITOR, CONFIG, DRIVERS, POOLS, REDACTOR, REGISTRY
from gateway.registry import DatabaseRecord, RegistryState
from gateway.responses import success

MAX_NAME_LENGTH = 200


async def add_database(request: web.Request) -> web.Response:
    """Connect with the given credentials, read the catalog, then register database and tables."""
    app = request.app
    require_admin(request, app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=True, max_body_bytes=app[CONFIG].max_body_bytes)
    for secret in SECRET_PARAMETERS:
        app[REDACTOR].add(inputs.get(secret))  # before anything can log it
    local_name = valid_name("local_database_name", inputs.require("local_database_name"))
    base_type, connection = new_connection(inputs, app[DRIVERS])
    record = DatabaseRecord.of(local_name, base_type, connection)
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


async def get_database(request: web.Request) -> web.Response:
    """Connection data of one database, without its password."""
    require_admin(request, request.app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    record = request.app[REGISTRY].state.database(inputs.require("local_database_name"))
    return success(database_data(record), as_array=True)


def database_data(record: DatabaseRecord) -> dict[str, str]:
    """GetDatabaseData's fields for a database: the connection fields its driver declared, never a secret."""
    return {"local_name": record.local_name, **answered_fields(record.connection), "base_type": record.base_type}


async def list_databases_or_tables(request: web.Request) -> web.Response:
    """ListDatabase with an admin token, ListTable with only a user token (the contract's table)."""
    return await answer_list(
        request,
        admin_names=database_names,
        no_token_message="send an admin_token header to list databases, or a user_token header to list tables",
    )


def database_names(state: RegistryState, only_database: str | None) -> list[str]:
    return sorted(name for name in state.databases if only_database is None or name == only_database)


def valid_name(parameter: str, value: str) -> str:
    if len(value) > MAX_NAME_LENGTH or not value.isprintable() or value != value.strip():
        raise BadRequest(
            f"parameter {parameter!r} must be 1 to {MAX_NAME_LENGTH} printable characters"
            " without leading or trailing spaces"
        )
    return value
