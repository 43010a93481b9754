"""Building blocks of the OpenAPI document: body schemas, parameters, security schemes, response objects.

``scripts/build_openapi.py`` assembles these into ``gateway/openapi.json``.
Every schema here describes what the gateway answers exactly (objects are
closed with ``additionalProperties: false``), so the test suite and
schemathesis can hold the gateway to it.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

JSON = "application/json"
GETDATA_MEDIA_TYPE = "text/javascript"
CSV_MEDIA_TYPE = "text/csv"
NDJSON_MEDIA_TYPE = "application/x-ndjson"
RESULT_FORMATS = ["json", "csv", "ndjson"]
METRICS_MEDIA_TYPE = "text/plain"
HTML = "text/html"

ERROR_CODES = (
    "bad_request",
    "ambiguous_request",
    "unsupported_base_type",
    "query_rejected",
    "query_failed",
    "token_required",
    "access_denied",
    "not_found",
    "table_not_found",
    "database_not_found",
    "method_not_allowed",
    "table_exists",
    "database_exists",
    "payload_too_large",
    "result_too_large",
    "too_many_queries",
    "internal_error",
    "database_unavailable",
    "registry_unavailable",
    "registry_unwritable",
    "query_timeout",
)

ADMIN_SECURITY = [{"admin_token": []}, {"Admin-Token": []}]
USER_SECURITY = [{"user_token": []}, {"User-Token": []}]
EITHER_SECURITY = ADMIN_SECURITY + USER_SECURITY
NO_SECURITY: list[dict[str, list[str]]] = []


def ref(kind: str, name: str) -> Schema:
    return {"$ref": f"#/components/{kind}/{name}"}


def closed_object(properties: dict[str, Schema], *, optional: tuple[str, ...] = ()) -> Schema:
    """An object with exactly these properties, all required but the ``optional`` ones."""
    return {
        "type": "object",
        "required": [name for name in properties if name not in optional],
        "properties": properties,
        "additionalProperties": False,
    }


def one_element_array(item: Schema) -> Schema:
    """The specification's habit: a JSON array holding one object."""
    return {"type": "array", "minItems": 1, "maxItems": 1, "items": item}


def success_object(**properties: Schema) -> Schema:
    return closed_object({"status": ref("schemas", "SuccessStatus"), **properties})


TEXT = {"type": "string"}
NAME_LIST = {"type": "array", "items": {"type": "string"}}
COUNT = {"type": "integer", "minimum": 0}

DATABASE_DATA = closed_object(
    {
        "status": ref("schemas", "SuccessStatus"),
        "local_name": TEXT,
        "ip": TEXT,
        "port": {"type": "string", "pattern": "^[0-9]{1,5}$", "description": "The port, as a string (specification)."},
        "username": TEXT,
        "database": TEXT,
        "base_type": TEXT,
    },
    # Only the connection fields the database's driver declares (gateway/connection_fields.py); postgres: all four.
    optional=("ip", "port", "username", "database"),
)

SCHEMAS: dict[str, Schema] = {
    "SuccessStatus": {"const": "success"},
    "ErrorCode": {
        "type": "string",
        "enum": list(ERROR_CODES),
        "description": "Stable snake_case machine code; each operation lists the codes it can answer per status.",
    },
    "Error": {
        "description": "Every answer other than success: always JSON, never HTML, never a stack trace.",
        **closed_object(
            {
                "status": {"const": "error"},
                "error": ref("schemas", "ErrorCode"),
                "message": {"type": "string", "minLength": 1, "description": "One sentence a person can act on."},
            }
        ),
    },
    "DatabaseAdded": one_element_array(success_object(local_name=TEXT)),
    "DatabaseData": {
        "description": "A registered database's connection data: the fields its driver declares"
        " (postgres: ip, port, username, database); never its password.",
        **one_element_array(DATABASE_DATA),
    },
    "NameList": {"description": "Sorted local names.", **success_object(List=NAME_LIST)},
    "TableRenamed": one_element_array(success_object(new_table_name=TEXT)),
    "TableData": success_object(
        TableData=closed_object(
            {
                "columns": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Column name to type name (format_type), in ordinal order.",
                },
                "database_name": TEXT,
                "folder_name": TEXT,
                "table_name": TEXT,
            }
        )
    ),
    "Succeeded": one_element_array(success_object()),
    "Logs": one_element_array(
        success_object(
            logs={
                "type": "string",
                "description": "Newline-separated JSON objects, oldest first, each with timestamp, level, event, "
                "pid and instance; with workers > 1, the entries of every worker of the host, merged.",
            }
        )
    ),
    "QueryResult": {
        "description": "Rows as objects keyed by column name in column order; a repeated name becomes name_2, name_3.",
        **one_element_array(
            success_object(
                columns={"type": "array", "items": closed_object({"name": TEXT, "type": TEXT})},
                data={"type": "array", "items": {"type": "object"}},
                row_count=COUNT,
                truncated={"type": "boolean", "description": "True when the row limit cut the result."},
            )
        ),
    },
    "UserTokenMinted": one_element_array(
        success_object(
            user_token={
                "type": "string",
                "minLength": 43,
                "pattern": "^[A-Za-z0-9_-]+$",
                "description": "The new token (256 random bits, URL-safe); shown only this once.",
            }
        )
    ),
    "GrantRevoked": one_element_array(
        success_object(revoked={"type": "boolean", "description": "False when there was no such grant."})
    ),
    "TokenGrants": one_element_array(
        success_object(
            tables={
                "type": "array",
                "items": closed_object({"local_table_name": TEXT, "database": TEXT, "folder": TEXT, "table": TEXT}),
                "description": "Sorted by local table name.",
            }
        )
    ),
    "DatabaseUnregistered": one_element_array(
        success_object(local_name=TEXT, removed_tables=COUNT, removed_grants=COUNT)
    ),
    "DatabaseRefreshed": one_element_array(
        success_object(local_name=TEXT, added=NAME_LIST, removed=NAME_LIST, unchanged=COUNT)
    ),
    "Alive": success_object(alive={"const": True}),
    "Index": success_object(
        name={"const": "dbgateway"},
        version={"type": "string"},
        links=closed_object(
            {
                "openapi": {"const": "/openapi.json"},
                "healthz": {"const": "/healthz"},
                "readyz": {"const": "/readyz"},
                "metrics": {"const": "/metrics"},
            }
        ),
        docs=closed_object({"api": {"type": "string"}, "operations": {"type": "string"}}),
    ),
    "Reachability": {
        "type": "object",
        "additionalProperties": {"enum": ["reachable", "unreachable"]},
        "description": "Local database name to reachable / unreachable; no host, port, user or reason. "
        "Only answered with the admin token.",
    },
    "ReachabilityCounts": closed_object(
        {"reachable": COUNT, "unreachable": COUNT},
    ),
    "Ready": {
        "type": "object",
        "required": ["status", "ready", "registry"],
        "properties": {
            "status": ref("schemas", "SuccessStatus"),
            "ready": {"const": True},
            "registry": {
                "enum": ["loaded", "unavailable", "unwritable"],
                "description": "loaded: in step and writable; unavailable: the registry database cannot be reached "
                "(reads are served from the state held, changes answer 503); unwritable: the last change could not "
                "be stored (507) and none has been since.",
            },
            "database_counts": ref("schemas", "ReachabilityCounts"),
            "databases": ref("schemas", "Reachability"),
        },
        "additionalProperties": False,
    },
    "NotReady": closed_object(
        {
            "status": {"const": "error"},
            "error": {"const": "database_unavailable"},
            "message": {"type": "string", "minLength": 1},
            "database_counts": ref("schemas", "ReachabilityCounts"),
            "databases": ref("schemas", "Reachability"),
        },
        optional=("databases",),
    ),
    "OpenAPIDocument": {
        "type": "object",
        "required": ["openapi", "info", "paths"],
        "description": "This document.",
    },
}

TEXT_OR_NUMBER = {"type": ["string", "integer"]}


def _body_object(fields: dict[str, Schema]) -> Schema:
    return {"type": "object", "properties": fields}


BODIES: dict[str, Schema] = {
    "DatabaseFields": _body_object(
        {
            **{
                name: {**TEXT_OR_NUMBER, "description": f"Same as the query parameter {name}."}
                for name in ("local_database_name", "ip", "database", "username", "password")
            },
            "port": {
                "anyOf": [{"type": "integer", "minimum": 1, "maximum": 65535}, {"type": "string", "pattern": "^[0-9]+$"}],
                "description": "Database port, 1-65535, as a number or a string of digits.",
            },
            "base_type": {"type": "string", "enum": ["postgres"], "description": "Same as the query parameter."},
        }
    ),
    "RenameTable": _body_object(
        {
            "table": {
                "type": "object",
                "description": "The table: local_table_name, or database + folder + table (the full path wins).",
                "properties": {name: TEXT_OR_NUMBER for name in ("local_table_name", "database", "folder", "table")},
            },
            "new_local_table_name": {**TEXT_OR_NUMBER, "description": "The new local name (required here or in the query)."},
        }
    ),
    "QueryFields": _body_object(
        {
            "local_database_name": {**TEXT_OR_NUMBER, "description": "Database the query runs in."},
            "query": {"type": "string", "description": "One read-only SELECT; every table schema-qualified and granted."},
            "format": {
                "type": "string",
                "enum": RESULT_FORMATS,
                "description": "Result format; wins over the Accept header.",
            },
        }
    ),
}

SECURITY_SCHEMES: dict[str, Schema] = {
    "admin_token": {
        "type": "apiKey",
        "in": "header",
        "name": "admin_token",
        "description": "The administrator's token (from configuration). Also accepted as Admin-Token.",
    },
    "Admin-Token": {
        "type": "apiKey",
        "in": "header",
        "name": "Admin-Token",
        "description": "The admin_token header spelled for proxies that drop underscores (nginx by default).",
    },
    "user_token": {
        "type": "apiKey",
        "in": "header",
        "name": "user_token",
        "description": "A user token an administrator granted tables to. Also accepted as User-Token.",
    },
    "User-Token": {
        "type": "apiKey",
        "in": "header",
        "name": "User-Token",
        "description": "The user_token header spelled for proxies that drop underscores.",
    },
}


def _query(name: str, schema: Schema, description: str, *, required: bool = False) -> Schema:
    return {"name": name, "in": "query", "required": required, "schema": schema, "description": description}


NAME = {"type": "string", "minLength": 1, "maxLength": 200}

PARAMETERS: dict[str, Schema] = {
    "local_database_name": _query("local_database_name", NAME, "Local name of a registered database."),
    "local_database_name_required": _query(
        "local_database_name", NAME, "Local name of a registered database.", required=True
    ),
    "local_database_name_filter": _query(
        "local_database_name", TEXT, "Only names in this database; an unknown name gives an empty list."
    ),
    "local_table_name": _query("local_table_name", TEXT, "Local name of a table (the full path wins when given too)."),
    "database": _query("database", TEXT, "Full path: local name of the table's database."),
    "folder": _query("folder", TEXT, "Full path: the folder (schema) holding the table."),
    "table": _query("table", TEXT, "Full path: the table's name in its folder."),
    "new_local_table_name": _query("new_local_table_name", NAME, "The new local name (the body may give it)."),
    "new_grantee": _query(
        "user_token",
        {"type": "string", "minLength": 16, "maxLength": 1024},
        "The user token to grant the table to: 16 (the setting min_user_token_length) to 1024 printable "
        "characters, no surrounding spaces.",
        required=True,
    ),
    "grantee": _query(
        "user_token",
        {"type": "string", "minLength": 1, "maxLength": 1024},
        "The user token the grant is for (1-1024 printable characters, no surrounding spaces; tokens granted "
        "before min_user_token_length was raised are still found).",
        required=True,
    ),
    "ip": _query("ip", TEXT, "Database host name or address, without port."),
    "port": _query("port", {"type": "integer", "minimum": 1, "maximum": 65535}, "Database port."),
    "server_database": _query("database", TEXT, "Database name on its server."),
    "username": _query("username", TEXT, "Database account the gateway reads through."),
    "password": _query("password", TEXT, "That account's password (may be empty); never answered or logged."),
    "base_type": _query("base_type", {"type": "string", "enum": ["postgres"]}, "Driver; postgres is installed."),
    "level": _query(
        "level",
        {"type": "string", "enum": ["debug", "degug", "info", "warning", "error"]},
        "Lowest level returned, any case (degug: the specification's spelling); absent means debug.",
    ),
    "limit": _query("limit", {"type": "integer", "minimum": 1}, "Only the newest N entries."),
    "event": _query(
        "event",
        {"type": "string", "pattern": "^[A-Za-z0-9_.\\-]{1,100}$"},
        "Only entries with this event name, e.g. audit (GetData and administrative changes) or request.",
    ),
    "query": _query(
        "query",
        {"type": "string", "minLength": 1},
        "One read-only SELECT, every table schema-qualified and granted; at most 100 KiB (max_query_bytes).",
    ),
    "format": _query(
        "format",
        {"type": "string", "enum": RESULT_FORMATS},
        "Result format: json (text/javascript), csv (text/csv) or ndjson (application/x-ndjson); wins over "
        "Accept. Without it, Accept chooses by q-value; an Accept naming none of them gets json.",
    ),
    "check_databases": _query(
        "databases",
        {"type": "string", "enum": ["1", "0", "true", "false", "yes", "no", "on", "off"]},
        "1 (true, yes, on; any case): also try each registered database, concurrently, 2 s each; the answer "
        "counts them, and names them only to the admin token.",
    ),
}


def error_response(description: str, codes: list[str]) -> Schema:
    """A response carrying the error body with one of ``codes``."""
    return {
        "description": f"{description} (error: {', '.join(codes)})",
        "content": {
            JSON: {"schema": {"allOf": [ref("schemas", "Error"), {"properties": {"error": {"enum": codes}}}]}}
        },
    }


def json_response(description: str, schema_name: str, example: Any = None) -> Schema:
    media: Schema = {"schema": ref("schemas", schema_name)}
    if example is not None:
        media["example"] = example
    return {"description": description, "content": {JSON: media}}


STATUS_MEANINGS = {
    400: "Bad request; the message names the parameter",
    401: "No user token",
    403: "Access denied",
    404: "Not found",
    409: "Already exists",
    413: "Too large",
    422: "A result row is larger than the gateway reads (max_row_bytes, or a fetch's share of its memory budget)",
    429: "The token already runs as many queries on that database as one token may; waited acquire_timeout for a turn",
    500: "The gateway failed unexpectedly; details are in its log only",
    502: "The database could not be reached or refused the credentials",
    503: "No database connection could be had, or (registry_unavailable) the registry database cannot be reached",
    504: "The query ran past the statement time limit",
    507: "The registry could not be stored (disk full); nothing was changed",
}


def error_responses(codes_by_status: dict[int, list[str]]) -> dict[str, Schema]:
    """Error response objects for each status; 500 internal_error is added to every operation."""
    merged = {**codes_by_status, 500: ["internal_error"]}
    return {str(status): error_response(STATUS_MEANINGS[status], codes) for status, codes in sorted(merged.items())}
