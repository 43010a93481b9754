"""The OpenAPI 3.1 document of a running gateway, built from the operations' declarations.

Built once when the app is created (``gateway.web.app``) and served by
``GET /openapi.json``: its limits are the gateway's settings, ``base_type``
lists the drivers installed, ``/metrics`` needs a token only when
``metrics_require_admin`` says so. Named schemas (``Component``) and the shared
error answers (``ErrorAnswer``) are written once, under ``components``, and
referred to by ``$ref``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import orjson
from aiohttp import web

from gateway import __version__
from gateway.web.openapi_schemas import ERROR, JSON, Component, Schema, ref
from gateway.web.operations import (
    INTERNAL_ERROR,
    REGISTRY_STALE,
    Access,
    Answer,
    ErrorAnswer,
    Operation,
    stale_limit_applies,
)
from gateway.web.parameters import DocumentContext, Source, body_schema, documented_parameters, resolve

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
with an `Allow` header. Bodies over {max_body_bytes} bytes (`max_body_bytes`) answer 413 `payload_too_large`.
- No answer ever carries a database password or a whole token.
"""

ADMIN_SECURITY: list[dict[str, list[str]]] = [{"admin_token": []}, {"Admin-Token": []}]
USER_SECURITY: list[dict[str, list[str]]] = [{"user_token": []}, {"User-Token": []}]
SECURITY: dict[Access, list[dict[str, list[str]]]] = {
    Access.PUBLIC: [],
    Access.ADMIN: ADMIN_SECURITY,
    Access.USER: USER_SECURITY,
    Access.ADMIN_OR_USER: ADMIN_SECURITY + USER_SECURITY,
    Access.PUBLIC_OR_ADMIN: [{}, *ADMIN_SECURITY],
}

GENERATED_CLIENTS = (
    " A generated client sends it where this scheme says; openapi-python-client, which does not read API-key "
    "schemes, needs it said: AuthenticatedClient(base_url=..., token=..., auth_header_name=\"{name}\", prefix=\"\")."
)

SECURITY_SCHEMES: dict[str, Schema] = {
    "admin_token": {
        "type": "apiKey",
        "in": "header",
        "name": "admin_token",
        "description": "The administrator's token (from configuration). Also accepted as Admin-Token."
        + GENERATED_CLIENTS.format(name="admin_token"),
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
        "description": "A user token an administrator granted tables to. Also accepted as User-Token."
        + GENERATED_CLIENTS.format(name="user_token"),
    },
    "User-Token": {
        "type": "apiKey",
        "in": "header",
        "name": "User-Token",
        "description": "The user_token header spelled for proxies that drop underscores.",
    },
}


class _Builder:
    """Collects the named schemas and shared error answers while the paths are written."""

    def __init__(self, context: DocumentContext) -> None:
        self.context = context
        self.schemas: dict[str, Any] = {}
        self.responses: dict[str, Schema] = {}
        self.parameters: dict[str, Schema] = {}

    def parameter(self, entry: Schema, operation_id: str) -> Schema:
        """A reference to this parameter object, written once under its name.

        Another parameter of the same name is written as ``<name>.<operationId>`` of the first operation taking it.
        """
        key = entry["name"]
        if self.parameters.get(key, entry) != entry:
            same = [k for k, v in self.parameters.items() if v == entry and k.startswith(f"{key}.")]
            key = same[0] if same else f"{key}.{operation_id}"
        self.parameters[key] = entry
        return ref("parameters", key)

    def schema(self, value: Any) -> Any:
        """``value`` with every ``Component`` in it replaced by a reference (and written once)."""
        if isinstance(value, Component):
            if value.name not in self.schemas:
                self.schemas[value.name] = None  # claimed first: a component may (indirectly) hold itself
                body = value.schema(self.context) if callable(value.schema) else value.schema
                self.schemas[value.name] = self.schema(body)
            return ref("schemas", value.name)
        if isinstance(value, dict):
            return {key: self.schema(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.schema(item) for item in value]
        return value

    def error_response(self, answers: Sequence[ErrorAnswer]) -> Schema:
        """A reference to the shared response of these error answers (one status), written once."""
        name = "Or".join(answer.name for answer in answers)
        if name not in self.responses:
            codes = list(dict.fromkeys(code for answer in answers for code in answer.codes))
            self.responses[name] = {
                "description": f"{' / '.join(dict.fromkeys(a.description for a in answers))} (error: {', '.join(codes)})",
                # The shared Error schema, narrowed to these codes by a keyword beside the reference (JSON
                # Schema 2020-12 applies both): validators hold each status to its codes, and generators that
                # follow the reference make one Error class (issue 20: an inline allOf per operation and status
                # gave openapi-python-client 111 error classes).
                "content": {JSON: {"schema": {**self.schema(ERROR), "properties": {"error": {"enum": codes}}}}},
            }
        return ref("responses", name)

    def answer(self, answer: Answer) -> Schema:
        content: dict[str, Any] = {}
        for media_type, schema in answer.content.items():
            content[media_type] = {"schema": self.schema(schema)}
        if answer.example is not None:
            content[next(iter(content))]["example"] = answer.example
        entry: Schema = {"description": answer.description}
        if answer.headers:
            entry["headers"] = dict(answer.headers)
        entry["content"] = content
        if answer.streamed:
            entry["x-streamed"] = True
        return entry

    def operation(self, operation: Operation, operation_id: str, summary: str) -> Schema:
        entry: Schema = {"operationId": operation_id, "summary": summary}
        if operation.description:
            entry["description"] = operation.description
        entry["security"] = SECURITY[operation.access_for(self.context.config)]
        if operation.inputs is not None:
            parameters: list[Schema] = []
            body_fields: dict[str, Any] = {}
            for name, declared in documented_parameters(operation.inputs, self.context):
                if declared.source in (Source.QUERY, Source.QUERY_STRING):
                    parameter = {
                        "name": name,
                        "in": "query",
                        "required": declared.required and not operation.body,
                        "schema": self.schema(resolve(declared.schema, self.context)),
                        "description": declared.description,
                    }
                    if declared.repeated:
                        parameter |= {"style": "form", "explode": True}
                    parameters.append(self.parameter(parameter, operation_id))
                if operation.body and declared.source is not Source.QUERY_STRING:
                    body_fields.setdefault(name, self.schema(body_schema(declared, self.context)))  # the first wins
            if parameters:
                entry["parameters"] = parameters
            if operation.body:
                body = {"type": "object", "properties": body_fields}
                entry["requestBody"] = {"required": False, "content": {JSON: {"schema": body}}}
        responses: dict[str, Any] = {str(status): self.answer(a) for status, a in sorted(operation.answers.items())}
        by_status: dict[int, list[ErrorAnswer]] = {}
        # A registry in PostgreSQL with a staleness limit may make any operation that reads it answer 503.
        stale = (REGISTRY_STALE,) if operation.reads_registry and stale_limit_applies(self.context.config) else ()
        for error in (*operation.errors, *stale, INTERNAL_ERROR):
            by_status.setdefault(error.status, []).append(error)
        for status, answers in sorted(by_status.items()):
            responses[str(status)] = self.error_response(answers)
        entry["responses"] = responses
        return entry


def build_document(operations: Sequence[Operation], context: DocumentContext) -> dict[str, Any]:
    """The OpenAPI document of a gateway serving ``operations`` with ``context``'s settings and drivers."""
    builder = _Builder(context)
    builder.schema(ERROR)
    paths: dict[str, dict[str, Any]] = {}
    for operation in operations:
        for path in (operation.path, *operation.aliases):
            alias = path != operation.path
            for index, method in enumerate(operation.methods):
                operation_id = operation.operation_id + ("Alias" if alias else "")
                if index:
                    operation_id += method.title()
                summary = f"Alias of {operation.path}" if alias else operation.summary
                paths.setdefault(path, {})[method.lower()] = builder.operation(operation, operation_id, summary)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "dbgateway",
            "version": __version__,
            "description": DESCRIPTION.replace("{max_body_bytes}", str(context.config.max_body_bytes)),
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": "/", "description": "The gateway serving this document"}],
        "paths": paths,
        "components": {
            "schemas": builder.schemas,
            "responses": builder.responses,
            "parameters": builder.parameters,
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


@attrs.frozen
class ServedDocument:
    """The document of one running gateway, as built and as served."""

    document: dict[str, Any]
    """The document itself."""
    body: bytes
    """Its JSON, served by GET /openapi.json."""

    @classmethod
    def of(cls, operations: Sequence[Operation], context: DocumentContext) -> ServedDocument:
        document = build_document(operations, context)
        return cls(document, orjson.dumps(document, option=orjson.OPT_INDENT_2))


OPENAPI_DOCUMENT = web.AppKey("openapi_document", ServedDocument)
"""Where the app keeps its document."""
