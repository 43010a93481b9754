"""Write ``gateway/openapi.json``, the OpenAPI 3.1 description of every operation the gateway serves.

Run ``.venv/bin/python scripts/build_openapi.py`` after changing an operation; ``--check``
exits 1 when the committed file differs from what this script builds (the test
suite checks the same). The file, not this script, is what the gateway serves.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway import __version__
from openapi_components import (
    ADMIN_SECURITY,
    BODIES,
    EITHER_SECURITY,
    CSV_MEDIA_TYPE,
    GETDATA_MEDIA_TYPE,
    HTML,
    JSON,
    METRICS_MEDIA_TYPE,
    NDJSON_MEDIA_TYPE,
    NO_SECURITY,
    PARAMETERS,
    SCHEMAS,
    SECURITY_SCHEMES,
    USER_SECURITY,
    error_responses,
    json_response,
    ref,
)

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT_PATH = ROOT / "gateway" / "openapi.json"

INPUT_400 = ["bad_request", "ambiguous_request"]
# Every operation that changes the registry: its database is out of reach (503), or it cannot be stored (507).
REGISTRY_WRITE = {503: ["registry_unavailable"], 507: ["registry_unwritable"]}
DENIED = ["access_denied"]
TABLE_BY_QUERY = ["local_table_name", "database", "folder", "table"]

DESCRIPTION = """\
An HTTP gateway in front of relational databases: an administrator registers databases, names their tables \
and grants user tokens access to tables; a token holder describes tables, lists them and runs read-only SQL.

Conventions:

- Every path but `/` is also served with a trailing slash (`/Logs` and `/Logs/`). `/Database/List` and `/Table/List` \
are aliases of `/Database/list` and `/Table/list` (the specification spells both) and are listed too.
- Tokens travel in the headers `admin_token` and `user_token`; `Admin-Token` and `User-Token` are accepted too \
(nginx drops header names with underscores by default). An empty header counts as absent.
- Inputs come from the query string. Operations with a request body (AddDatabase, ChangeLocalTableName, \
GetData, PATCH /Database) read the JSON object body for whatever the query string does not give; a field given \
differently by both, or a query parameter repeated with different values, is 400 `ambiguous_request`.
- Success is status 200 with `"status": "success"`. Every other answer is JSON \
`{"status": "error", "error": "<code>", "message": "<sentence>"}` with the codes each operation lists. \
An unknown path answers 404 `not_found`; a known path with another method 405 `method_not_allowed` \
with an `Allow` header. Bodies over `max_body_bytes` (1 MiB) answer 413 `payload_too_large`.
- No answer ever carries a database password or a whole token.
"""


def operation(
    operation_id: str,
    summary: str,
    *,
    security: list[dict[str, list[str]]],
    success: dict[str, Any],
    errors: dict[int, list[str]],
    parameters: Sequence[str] = (),
    body: str | None = None,
    description: str | None = None,
    extra_responses: dict[str, Any] | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"operationId": operation_id, "summary": summary}
    if description:
        entry["description"] = description
    entry["security"] = security
    if parameters:
        entry["parameters"] = [ref("parameters", name) for name in parameters]
    if body is not None:
        entry["requestBody"] = {"required": False, "content": {JSON: {"schema": ref("schemas", body)}}}
    entry["responses"] = {"200": success, **(extra_responses or {}), **error_responses(errors)}
    return entry


def database_operations() -> dict[str, dict[str, Any]]:
    database_fields = ["local_database_name", "ip", "port", "server_database", "username", "password", "base_type"]
    return {
        "put": operation(
            "AddDatabase",
            "Register a database (connects and reads its catalog first)",
            description="Every parameter is required, from the query string or the body, except password "
            "(may be empty). Each table, view, materialized view, foreign and partitioned table outside the system "
            "schemas gets the local name <local_database_name>_<folder>_<table> (_2, _3 ... on a collision).",
            security=ADMIN_SECURITY,
            parameters=database_fields,
            body="DatabaseFields",
            success=json_response("Registered", "DatabaseAdded", [{"status": "success", "local_name": "shop"}]),
            errors={
                **REGISTRY_WRITE,
                400: [*INPUT_400, "unsupported_base_type"],
                403: DENIED,
                409: ["database_exists"],
                413: ["payload_too_large"],
                502: ["database_unavailable"],
            },
        ),
        "get": operation(
            "GetDatabaseData",
            "A registered database's connection data, without its password",
            security=ADMIN_SECURITY,
            parameters=["local_database_name_required"],
            success=json_response("The connection data", "DatabaseData"),
            errors={400: INPUT_400, 403: DENIED, 404: ["database_not_found"]},
        ),
        "post": operation(
            "RefreshDatabase",
            "Re-read a database's catalog: add new tables, remove dropped ones (and their grants)",
            description="Renamed local names and grants on kept tables stay. Nothing changes when the database "
            "cannot be reached.",
            security=ADMIN_SECURITY,
            parameters=["local_database_name_required"],
            success=json_response("What changed", "DatabaseRefreshed"),
            errors={
                **REGISTRY_WRITE,
                400: INPUT_400,
                403: DENIED,
                404: ["database_not_found"],
                502: ["database_unavailable"],
            },
        ),
        "patch": operation(
            "UpdateDatabase",
            "Change a database's connection data (e.g. a rotated password), verified by connecting first",
            description="local_database_name is required; give at least one of ip, port, database, username, "
            "password. base_type cannot change. Nothing is saved when the new data cannot connect.",
            security=ADMIN_SECURITY,
            parameters=database_fields,
            body="DatabaseFields",
            success=json_response("The new connection data", "DatabaseData"),
            errors={
                **REGISTRY_WRITE,
                400: INPUT_400,
                403: DENIED,
                404: ["database_not_found"],
                413: ["payload_too_large"],
                502: ["database_unavailable"],
            },
        ),
        "delete": operation(
            "UnregisterDatabase",
            "Unregister a database: its tables and every grant on them go, its pool closes",
            security=ADMIN_SECURITY,
            parameters=["local_database_name_required"],
            success=json_response("Unregistered", "DatabaseUnregistered"),
            errors={**REGISTRY_WRITE, 400: INPUT_400, 403: DENIED, 404: ["database_not_found"]},
        ),
    }


def list_operation(operation_id: str, summary: str, description: str) -> dict[str, Any]:
    return {
        "get": operation(
            operation_id,
            summary,
            description=description,
            security=EITHER_SECURITY,
            parameters=["local_database_name_filter"],
            success=json_response("The names", "NameList", {"status": "success", "List": ["orders"]}),
            errors={400: INPUT_400, 401: ["token_required"], 403: DENIED},
        )
    }


def table_operations() -> dict[str, dict[str, Any]]:
    return {
        "post": operation(
            "ChangeLocalTableName",
            "Give a table a new local name; its grants follow it",
            description="The table is identified in the body's `table` object or the query string; the body wins, "
            "and within one identification the full path wins over local_table_name.",
            security=ADMIN_SECURITY,
            parameters=[*TABLE_BY_QUERY, "new_local_table_name"],
            body="RenameTable",
            success=json_response("Renamed", "TableRenamed"),
            errors={
                **REGISTRY_WRITE,
                400: INPUT_400,
                403: DENIED,
                404: ["table_not_found"],
                409: ["table_exists"],
                413: ["payload_too_large"],
            },
        ),
        "get": operation(
            "GetTableData",
            "A granted table's columns and type names, read live",
            description="A table that is not registered is 403 access_denied, worded as for one not granted (no "
            "existence oracle); 404 table_not_found is a granted table dropped from its database since.",
            security=USER_SECURITY,
            parameters=TABLE_BY_QUERY,
            success=json_response("The description", "TableData"),
            errors={
                400: INPUT_400,
                401: ["token_required"],
                403: DENIED,
                404: ["table_not_found"],
                503: ["database_unavailable"],
            },
        ),
    }


def grant_operations() -> dict[str, dict[str, Any]]:
    return {
        "post": operation(
            "GrantTableAccess",
            "Let a user token read a table (granting twice is a success)",
            security=ADMIN_SECURITY,
            parameters=["new_grantee", *TABLE_BY_QUERY],
            success=json_response("Granted", "Succeeded", [{"status": "success"}]),
            errors={**REGISTRY_WRITE, 400: INPUT_400, 403: DENIED, 404: ["table_not_found"]},
        ),
        "delete": operation(
            "RevokeTableAccess",
            "Take a grant back; the same parameters as the grant",
            security=ADMIN_SECURITY,
            parameters=["grantee", *TABLE_BY_QUERY],
            success=json_response("Revoked, or there was no such grant", "GrantRevoked"),
            errors={**REGISTRY_WRITE, 400: INPUT_400, 403: DENIED, 404: ["table_not_found"]},
        ),
        "get": operation(
            "ListTokenGrants",
            "The tables granted to a user token",
            security=ADMIN_SECURITY,
            parameters=["grantee"],
            success=json_response("The grants", "TokenGrants"),
            errors={400: INPUT_400, 403: DENIED},
        ),
    }


GETDATA_HEADERS = {
    "Dbgateway-Row-Limit": {
        "description": "The gateway's row limit (row_limit); a longer result is cut and marked truncated.",
        "schema": {"type": "integer", "minimum": 1},
    },
    "Dbgateway-Row-Count": {
        "description": "Rows in the answer; only on an answer sent whole (with Content-Length), not on a streamed one.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "Dbgateway-Truncated": {
        "description": "true when the row limit cut the result; only on an answer sent whole, as Dbgateway-Row-Count.",
        "schema": {"type": "string", "enum": ["true", "false"]},
    },
}


def get_data_operation(method: str) -> dict[str, Any]:
    return operation(
        "GetData" if method == "get" else "GetDataPost",
        "Run one read-only SELECT over granted tables" + (" (for queries too long for a URL)" if method == "post" else ""),
        description="Inputs from the query string or the JSON body. The result streams as "
        "`text/javascript; charset=utf-8` holding JSON (the specification's media type, the default), or as "
        "`application/json; charset=utf-8`, the same body, when the request's `Accept` prefers application/json, "
        "or as CSV (`text/csv`) or NDJSON (`application/x-ndjson`) when the `format` input or the Accept header "
        "asks; a result over the row limit is cut and marked truncated. "
        "An error found after the status line was sent cuts the body off (it does not end as its format says). "
        "A database that is not registered is 403 access_denied, worded as for one without a granted table. "
        "A token runs at most `token_query_limit` queries on one database at once; the next waits for a turn up to "
        "`acquire_timeout`, then answers 429 `too_many_queries`. A result row larger than `max_row_bytes` "
        "(64 MiB by default) answers 422 `result_too_large` (a streamed answer is cut off instead).",
        security=USER_SECURITY,
        parameters=["local_database_name", "query", "format"],
        body="QueryFields",
        success={
            "description": "The result",
            "headers": GETDATA_HEADERS,
            # JSON too: generated clients parse only what is declared as JSON (they send Accept: application/json).
            "content": {
                JSON: {"schema": ref("schemas", "QueryResult")},
                GETDATA_MEDIA_TYPE: {"schema": ref("schemas", "QueryResult")},
                CSV_MEDIA_TYPE: {
                    "schema": {
                        "type": "string",
                        "description": "RFC 4180: a header row of column names, then one record per row, CRLF "
                        "line ends. Values as the text of their JSON encoding (json, jsonb and arrays as JSON "
                        'text, booleans true/false); NULL is an empty field, an empty string is "".',
                    }
                },
                NDJSON_MEDIA_TYPE: {
                    "schema": {
                        "type": "string",
                        "description": "One JSON object per row, keyed by column name, one per line; then a last "
                        'line {"row_count": N, "truncated": false}.',
                    }
                },
            },
        },
        errors={
            400: [*INPUT_400, "query_rejected", "query_failed"],
            401: ["token_required"],
            403: DENIED,
            413: ["payload_too_large"],
            422: ["result_too_large"],
            429: ["too_many_queries"],
            503: ["database_unavailable"],
            504: ["query_timeout"],
        },
    )


def service_paths() -> dict[str, dict[str, Any]]:
    """Health, readiness, metrics and this document: no token needed (metrics: see metrics_require_admin)."""
    index_success = json_response("What this server is and where to go next", "Index")
    index_success["content"][HTML] = {"schema": {"type": "string"}}
    return {
        "/": {
            "get": operation(
                "Index",
                "The gateway's name, version and service paths; a small HTML page when Accept names text/html",
                description="No token needed. JSON by default; an Accept naming text/html (and not application/json) "
                "gets a self-contained HTML page with the same links.",
                security=NO_SECURITY,
                success=index_success,
                errors={},
            )
        },
        "/healthz": {
            "get": operation(
                "Healthz",
                "The process is alive",
                security=NO_SECURITY,
                success=json_response("Alive", "Alive", {"status": "success", "alive": True}),
                errors={},
            )
        },
        "/readyz": {
            "get": operation(
                "Readyz",
                "The registry is loaded (with databases=1: every registered database answers)",
                description="No token needed. 200 while the gateway serves reads; the registry field says whether "
                "changes are saved now (loaded) or answer 503 registry_unavailable (unavailable) or 507 "
                "registry_unwritable (unwritable). With databases=1 the answer counts the databases; with the admin "
                "token it also names them (a wrong admin token is 403).",
                security=[{}, *ADMIN_SECURITY],
                parameters=["check_databases"],
                success=json_response("Ready", "Ready"),
                extra_responses={
                    "503": json_response("A registered database does not answer (error: database_unavailable)", "NotReady")
                },
                errors={400: INPUT_400, 403: DENIED},
            )
        },
        "/metrics": {
            "get": operation(
                "Metrics",
                "Prometheus metrics (text exposition format)",
                description="Needs the admin token unless the setting metrics_require_admin is false (it is true by "
                "default: the labels name the registered databases).",
                security=[*ADMIN_SECURITY, {}],
                success={"description": "The metrics", "content": {METRICS_MEDIA_TYPE: {"schema": {"type": "string"}}}},
                errors={403: DENIED},
            )
        },
        "/openapi.json": {
            "get": operation(
                "OpenAPI",
                "This document",
                security=NO_SECURITY,
                success=json_response("The OpenAPI 3.1 document", "OpenAPIDocument"),
                errors={},
            )
        },
    }


def build_document() -> dict[str, Any]:
    list_database = (
        "ListDatabase / ListTable",
        "With a valid admin token: every registered database; with only a user token: its granted tables",
        "Headers decide the operation: a valid admin_token (with or without user_token) lists databases, a wrong "
        "one is 403; only a user_token lists the tables granted to it; neither is 401.",
    )
    list_table = (
        "ListTable",
        "Local table names: every one for the admin token, the granted ones for a user token",
        "The old service's ListTable path; sorted names.",
    )
    paths: dict[str, Any] = {
        "/Database": database_operations(),
        "/Database/list": list_operation("ListDatabaseOrTable", *list_database[1:]),
        "/Database/List": list_operation("ListDatabaseOrTableAlias", "Alias of /Database/list", list_database[2]),
        "/Table": table_operations(),
        "/Table/list": list_operation("ListTable", *list_table[1:]),
        "/Table/List": list_operation("ListTableAlias", "Alias of /Table/list", list_table[2]),
        "/GrantTableAccess": grant_operations(),
        "/UserToken": {
            "put": operation(
                "MintUserToken",
                "Mint a new random user token; the registry keeps only its hash",
                security=ADMIN_SECURITY,
                success=json_response("The token, shown once", "UserTokenMinted"),
                errors={**REGISTRY_WRITE, 403: DENIED},
            )
        },
        "/Logs": {
            "get": operation(
                "Logs",
                "The newest server log entries at a level and above (optionally of one event)",
                security=ADMIN_SECURITY,
                parameters=["level", "limit", "event"],
                success=json_response("The entries", "Logs"),
                errors={400: INPUT_400, 403: DENIED},
            )
        },
        "/GetData": {"get": get_data_operation("get"), "post": get_data_operation("post")},
        **service_paths(),
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "dbgateway",
            "version": __version__,
            "description": DESCRIPTION,
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": "/", "description": "The gateway serving this document"}],
        "paths": paths,
        "components": {
            "schemas": {**SCHEMAS, **BODIES},
            "parameters": PARAMETERS,
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if gateway/openapi.json is not up to date")
    arguments = parser.parse_args()
    text = render(build_document())
    if arguments.check:
        if DOCUMENT_PATH.read_text(encoding="utf-8") != text:
            print(f"{DOCUMENT_PATH} is out of date: run .venv/bin/python scripts/build_openapi.py", file=sys.stderr)
            return 1
        return 0
    DOCUMENT_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {DOCUMENT_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
