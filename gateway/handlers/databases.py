"""AddDatabase (PUT /Database), GetDatabaseData (GET /Database) and the shared /Database/list route."""

from __future__ import annotations

from aiohttp import web

from gateway.audit import AdminAction
from gateway.auth import (
    require_admin,
)
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
    password = inputs.get("password") or ""
    app[REDACTOR].add(password)  # before anything can log it
    valid_connection_text("password", password)
    record = DatabaseRecord(
        local_name=valid_name("local_database_name", inputs.require("local_database_name")),
        host=valid_host(inputs.require("ip")),
        port=valid_port(inputs.require("port")),
        database=valid_connection_text("database", inputs.require("database")),
        username=valid_connection_text("username", inputs.require("username")),
        password=password,
        base_type=inputs.require("base_type"),
    )
    app[DRIVERS].get(record.base_type)
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
    """GetDatabaseData's fields for a database: its connection data without the password."""
    return {
        "local_name": record.local_name,
        "ip": record.host,
        "port": str(record.port),
        "username": record.username,
        "database": record.database,
        "base_type": record.base_type,
    }


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


def valid_host(value: str) -> str:
    if not value.isprintable() or any(c.isspace() for c in value) or "/" in value:
        raise BadRequest("parameter 'ip' must be a host name or address without port, spaces or slashes")
    return value


def valid_connection_text(parameter: str, value: str) -> str:
    """Database name, user name or password as a driver can pass it on: libpq cannot carry a NUL character."""
    if "\x00" in value:
        raise BadRequest(f"parameter {parameter!r} must not contain a NUL character")  # never echo: it may be a password
    return value


def valid_port(value: str) -> int:
    try:
        port = int(value.strip())
    except ValueError:
        port = 0
    if not 1 <= port <= 65535 or not value.strip().isdigit():
        raise BadRequest(f"parameter 'port' must be an integer from 1 to 65535, got {value!r}")
    return port
