"""ChangeLocalTableName (POST /Table), GetTableData (GET /Table) and ListTable (GET /Table/list)."""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from gateway import errors
from gateway.errors import AccessDenied, BadRequest, TableNotFound
from gateway.observability.audit import AdminAction
from gateway.registry import RegistryState, TableAddress, TableRecord
from gateway.request.auth import hash_user_token
from gateway.request.responses import success
from gateway.web.inputs import RequestInputs, find_table, table_identification
from gateway.web.keys import AUDITOR, POOLS, REGISTRY
from gateway.web.listing import LIST_ERRORS, NAME_LIST_ANSWER, ListInputs, answer_list
from gateway.web.named_inputs import MAX_NAME_LENGTH, NAME, table_by_name_or_path
from gateway.web.openapi_schemas import (
    TEXT,
    TEXT_OR_NUMBER,
    Component,
    closed_object,
    one_element_array,
    success_object,
)
from gateway.web.operations import (
    ACCESS_DENIED,
    BAD_INPUT,
    DATABASE_UNAVAILABLE,
    PAYLOAD_TOO_LARGE,
    REGISTRY_WRITE,
    TABLE_NOT_FOUND,
    TOKEN_REQUIRED,
    USER_TOKEN,
    Access,
    Operation,
    error_answer,
    json_answer,
)
from gateway.web.parameters import ReadContext, Source, parameter


@attrs.frozen(kw_only=True)
class Rename:
    """ChangeLocalTableName's inputs: the body's ``table`` object wins over the query string's identification."""

    table_object: Any = parameter(
        "The table: local_table_name, or database + folder + table (the full path wins).",
        name="table",
        source=Source.BODY,
        body_schema={
            "type": "object",
            "description": "The table: local_table_name, or database + folder + table (the full path wins).",
            "properties": {name: TEXT_OR_NUMBER for name in ("local_table_name", "database", "folder", "table")},
        },
    )
    """The body's ``table`` object, if any (read into ``identification``)."""
    identification: TableAddress | str | None = table_by_name_or_path()
    """The table, from the body's ``table`` object or else the query string; None when neither names one."""
    new_local_table_name: str = parameter(
        "The new local name (the body may give it).", schema=NAME, body_schema={**TEXT_OR_NUMBER}
    )
    """The new name, stripped."""

    @classmethod
    def from_inputs(cls, raw: RequestInputs, context: ReadContext) -> Rename:
        body_table: Any = raw.body.get("table")
        if body_table is not None and not isinstance(body_table, dict):
            raise BadRequest(
                "field 'table' of the body must be an object with local_table_name, or database, folder and table"
            )
        identification = (table_identification(body_table) if body_table else None) or table_identification(raw)
        new_name = (raw.get("new_local_table_name") or "").strip()
        if not new_name:
            raise BadRequest("parameter 'new_local_table_name' is required and must not be empty")
        if len(new_name) > MAX_NAME_LENGTH or not new_name.isprintable():
            raise BadRequest(f"parameter 'new_local_table_name' must be 1 to {MAX_NAME_LENGTH} printable characters")
        return cls(table_object=body_table, identification=identification, new_local_table_name=new_name)


@attrs.frozen(kw_only=True)
class TableInputs:
    """GetTableData's inputs."""

    identification: TableAddress | str | None = table_by_name_or_path()
    """The table; None when the request names none."""


async def change_local_table_name(request: web.Request, inputs: Rename) -> web.Response:
    """Rename a table's local name."""
    app = request.app
    identification, new_name = inputs.identification, inputs.new_local_table_name

    def rename(state: RegistryState) -> tuple[RegistryState, TableRecord]:
        table = find_table(state, identification)
        return state.with_table_renamed(table, new_name), table

    table = await app[REGISTRY].update(rename)
    app[AUDITOR].admin_change(
        AdminAction.TABLE_RENAMED, old_local_table_name=table.local_name, new_local_table_name=new_name
    )
    return success({"new_table_name": new_name}, as_array=True)


async def get_table_data(request: web.Request, inputs: TableInputs) -> web.Response:
    """Columns of a table granted to the user token, read live from the database."""
    app = request.app
    state = app[REGISTRY].state
    table = _granted_table(state, inputs.identification, request[USER_TOKEN])
    database = state.database(table.address.database)
    columns = await app[POOLS].get(database).describe_table(table.address.folder, table.address.table)
    if columns is None:
        raise TableNotFound(
            f"table {table.local_name!r} is registered but no longer exists in database {database.local_name!r}"
        )
    shown = state.limits(hash_user_token(state.token_salt, request[USER_TOKEN]), table.address).columns
    if shown is not None:  # a grant of some columns describes those only
        columns = [column for column in columns if column.name in shown]
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
    # An expired grant is as if it were not there: the same refusal, worded alike.
    if table is None or table.address not in state.live_grants(hash_user_token(state.token_salt, token)):
        if isinstance(identification, TableAddress):
            asked = f"{identification.folder}.{identification.table} of database {identification.database!r}"
        else:
            asked = repr(identification)
        raise AccessDenied(f"access denied: table {asked} is not granted to this token")
    return table


async def list_tables(request: web.Request, inputs: ListInputs) -> web.Response:
    """ListTable on its old path: every local name for the admin, the granted ones for a user token."""
    return await answer_list(
        request,
        inputs,
        admin_names=lambda state, only_database: [
            r.local_name for r in state.tables.values() if only_database in (None, r.address.database)
        ],
        no_token_message="send a user_token header (or an admin_token header) to list tables",
    )


TABLE_DATA = Component(
    "TableData",
    success_object(
        TableData=closed_object(
            {
                "columns": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Column name to type name (format_type), in ordinal order; a grant of some "
                    "columns shows those only.",
                },
                "database_name": TEXT,
                "folder_name": TEXT,
                "table_name": TEXT,
            }
        )
    ),
)

LIST_DESCRIPTION = "The old service's ListTable path; sorted names."

OPERATIONS = (
    Operation(
        "ChangeLocalTableName",
        ("POST",),
        "/Table",
        change_local_table_name,
        Access.ADMIN,
        "Give a table a new local name; its grants follow it",
        description="The table is identified in the body's `table` object or the query string; the body wins, "
        "and within one identification the full path wins over local_table_name.",
        inputs=Rename,
        body=True,
        answers={
            200: json_answer(
                "Renamed", Component("TableRenamed", one_element_array(success_object(new_table_name=TEXT)))
            )
        },
        errors=(
            *REGISTRY_WRITE,
            BAD_INPUT,
            ACCESS_DENIED,
            TABLE_NOT_FOUND,
            error_answer("TableExists", "Already exists", errors.TableExists),
            PAYLOAD_TOO_LARGE,
        ),
    ),
    Operation(
        "GetTableData",
        ("GET",),
        "/Table",
        get_table_data,
        Access.USER,
        "A granted table's columns and type names, read live",
        description="A table that is not registered is 403 access_denied, worded as for one not granted (no "
        "existence oracle); 404 table_not_found is a granted table dropped from its database since.",
        inputs=TableInputs,
        answers={200: json_answer("The description", TABLE_DATA)},
        errors=(BAD_INPUT, TOKEN_REQUIRED, ACCESS_DENIED, TABLE_NOT_FOUND, DATABASE_UNAVAILABLE),
    ),
    Operation(
        "ListTable",
        ("GET",),
        "/Table/list",
        list_tables,
        Access.ADMIN_OR_USER,
        "Local table names: every one for the admin token, the granted ones for a user token",
        description=LIST_DESCRIPTION,
        aliases=("/Table/List",),
        inputs=ListInputs,
        answers={200: json_answer("The names", NAME_LIST_ANSWER)},
        errors=LIST_ERRORS,
    ),
)
