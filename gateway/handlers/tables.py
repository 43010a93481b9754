"""ChangeLocalTableName (POST /Table), GetTableData (GET /Table) and ListTable (GET /Table/list)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from gateway.audit import AdminAction
from gateway.auth import (
    ADMIN_TOKEN_HEADERS,
    USER_TOKEN_HEADERS,
    hash_user_token,
    header_token,
    require_admin,
    require_user_token,
)
from gateway.errors import AccessDenied, BadRequest, TableNotFound, TokenRequired
from gateway.inputs import find_table, read_inputs, table_identification
from gateway.keys import ADMIN_TOKEN, AUDITOR, CONFIG, POOLS, REGISTRY
from gateway.registry import RegistryState, TableAddress, TableRecord
from gateway.responses import success


async def change_local_table_name(request: web.Request) -> web.Response:
    """Rename a table's local name; the body's ``table`` wins over the query string's identification."""
    app = request.app
    require_admin(request, app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=True, max_body_bytes=app[CONFIG].max_body_bytes)
    body_table: Any = inputs.body.get("table")
    if body_table is not None and not isinstance(body_table, dict):
        raise BadRequest("field 'table' of the body must be an object with local_table_name, or database, folder and table")
    identification = (table_identification(body_table) if body_table else None) or table_identification(inputs)
    new_name = (inputs.get("new_local_table_name") or "").strip()
    if not new_name:
        raise BadRequest("parameter 'new_local_table_name' is required and must not be empty")
    if len(new_name) > 200 or not new_name.isprintable():
        raise BadRequest("parameter 'new_local_table_name' must be 1 to 200 printable characters")

    def rename(state: RegistryState) -> tuple[RegistryState, TableRecord]:
        table = find_table(state, identification)
        return state.with_table_renamed(table, new_name), table

    table = await app[REGISTRY].update(rename)
    app[AUDITOR].admin_change(
        AdminAction.TABLE_RENAMED, old_local_table_name=table.local_name, new_local_table_name=new_name
    )
    return success({"new_table_name": new_name}, as_array=True)


async def get_table_data(request: web.Request) -> web.Response:
    """Columns of a table granted to the user token, read live from the database."""
    app = request.app
    token = require_user_token(request)
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    state = app[REGISTRY].state
    table = _granted_table(state, table_identification(inputs), token)
    database = state.database(table.address.database)
    columns = await app[POOLS].get(database).describe_table(table.address.folder, table.address.table)
    if columns is None:
        raise TableNotFound(
            f"table {table.local_name!r} is registered but no longer exists in database {database.local_name!r}"
        )
    return success(
        {
            "TableData": {
                "columns": {column.name: column.type_name for column in columns},
                "database_name": table.address.database,
                "folder_name": table.address.folder,
                "table_name": table.address.table,
            }
        },
        as_array=False,
    )


def _granted_table(state: RegistryState, identification: TableAddress | str | None, token: str) -> TableRecord:
    """The table asked for if it is granted to ``token``; else 403, worded alike whether or not it exists.

    A token holder must not learn which tables are registered (no existence
    oracle), so the refusal names the table only as the request identified it.
    """
    try:
        table: TableRecord | None = find_table(state, identification)
    except TableNotFound:
        table = None
    if table is None or table.address not in state.grants.get(hash_user_token(state.token_salt, token), frozenset()):
        if isinstance(identification, TableAddress):
            asked = f"{identification.folder}.{identification.table} of database {identification.database!r}"
        else:
            asked = repr(identification)
        raise AccessDenied(f"access denied: table {asked} is not granted to this token")
    return table


async def list_tables(request: web.Request) -> web.Response:
    """ListTable on its old path: every local name for the admin, the granted ones for a user token."""
    return await answer_list(
        request,
        admin_names=lambda state, only_database: [
            r.local_name for r in state.tables.values() if only_database in (None, r.address.database)
        ],
        no_token_message="send a user_token header (or an admin_token header) to list tables",
    )


async def answer_list(
    request: web.Request,
    *,
    admin_names: Callable[[RegistryState, str | None], list[str]],
    no_token_message: str,
) -> web.Response:
    """The list routes' rule: a valid admin token gets ``admin_names``, only a user token its granted tables.

    An admin token present but wrong is 403 even beside a valid user token; no
    token at all is 401. ``local_database_name`` filters either list.
    """
    app = request.app
    state = app[REGISTRY].state
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    only_database = inputs.get("local_database_name")
    if header_token(request, ADMIN_TOKEN_HEADERS) is not None:
        require_admin(request, app[ADMIN_TOKEN])
        names = admin_names(state, only_database)
    elif (token := header_token(request, USER_TOKEN_HEADERS)) is not None:
        token_hash = hash_user_token(state.token_salt, token)
        names = [r.local_name for r in state.granted_tables(token_hash, only_database)]
    else:
        raise TokenRequired(no_token_message)
    return success({"List": sorted(names)}, as_array=False)
