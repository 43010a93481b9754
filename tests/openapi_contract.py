"""Holding every request the test suite sends, and every answer it receives, to the gateway's OpenAPI document.

``conftest.make_gateway`` hands out ``ContractCheckedClient``s, each checking
against the document of the app it talks to (``contract_of``: the one that app
serves at GET /openapi.json, built from its config and drivers). For each
answer: its status, media type, documented headers, and its body against the
schema the document gives for (path, method, status, media type). A request
that got a 2xx must have sent only declared query parameters with valid
values, and a body the operation declares (other body fields are ignored, as the gateway does). A streamed answer (no
Content-Length, or larger than ``MAX_CHECKED_BODY_BYTES``) is checked at once
for status, media type and headers (only an answer declared ``x-streamed`` may
come without a Content-Length); its JSON body is checked when the test
reads it whole, if it is not larger than the cap. What breaks the document is
reported when the test ends. Unknown paths and methods (404 ``not_found``, 405)
are checked against the generic error body.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import orjson
import structlog
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from gateway.databases.driver_loader import DriverCatalog
from gateway.settings.config import GatewayConfig
from gateway.web.openapi_document import OPENAPI_DOCUMENT, build_document
from gateway.web.operations import handler_operations
from gateway.web.parameters import DocumentContext

DOCUMENT_URI = "urn:dbgateway:openapi"
MAX_CHECKED_BODY_BYTES = 1024 * 1024
"""Larger answers are not read by the check, so a test still sees them as sent (a streamed one: when it reads it)."""
JSON_MEDIA_TYPES = {"application/json", "text/javascript"}


@functools.cache
def default_document() -> dict[str, Any]:
    """The document of a gateway with the default settings and the installed drivers.

    The installed ones, as the gateway under test loads them: ``make test`` installs
    the example driver (examples/sqlite-driver) beside postgres, and its
    ``base_type`` and connection field are in the document too.
    """
    drivers = DriverCatalog.from_entry_points({}, structlog.get_logger())
    return build_document(handler_operations(), DocumentContext(GatewayConfig(), drivers))


def contract_of(app: web.Application) -> ResponseContract:
    """The contract of the app under test: the document it serves."""
    return ResponseContract(app[OPENAPI_DOCUMENT].document)


def canonical_path(path: str) -> str:
    """The documented spelling of a served path: every path is also served with a trailing slash."""
    return path[:-1] if len(path) > 1 and path.endswith("/") else path


def outside_the_document(path: str) -> bool:
    """The console's page and assets: served for people, deliberately not in the document (docs/console.md)."""
    return path in ("/console", "/console/") or path.startswith("/console/assets/")


class ResponseContract:
    """Which schema a request or an answer must satisfy, and whether it does."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self._paths: dict[str, dict[str, Any]] = document["paths"]
        self._registry = Registry().with_resource(DOCUMENT_URI, Resource.from_contents(document, DRAFT202012))
        self._generic_error = self._validator({"$ref": f"{DOCUMENT_URI}#/components/schemas/Error"})

    def _validator(self, schema: dict[str, Any]) -> Draft202012Validator:
        return Draft202012Validator(schema, registry=self._registry)

    def _resolved(self, value: dict[str, Any]) -> dict[str, Any]:
        """An object of the document with its ``$ref`` followed."""
        while "$ref" in value:
            node: Any = self.document
            for part in value["$ref"].removeprefix("#/").split("/"):
                node = node[part]
            value = node
        return value

    def operation(self, method: str, path: str) -> dict[str, Any] | None:
        return self._paths.get(canonical_path(path), {}).get(method.lower())

    def response(self, method: str, path: str, status: int) -> dict[str, Any] | None:
        operation = self.operation(method, path)
        found = None if operation is None else operation["responses"].get(str(status))
        return None if found is None else self._resolved(found)

    def head_problems(
        self, method: str, path: str, status: int, media_type: str, headers: Mapping[str, str]
    ) -> list[str]:
        """Status, media type and headers of an answer; empty when the document allows them."""
        where = f"{method} {path} -> {status}"
        if self.operation(method, path) is None:
            return [] if media_type == "application/json" else [f"{where}: content type {media_type!r}, expected JSON"]
        response = self.response(method, path, status)
        if response is None:
            return [f"{where}: status {status} is not documented for this operation"]
        content = response.get("content", {})
        if media_type not in content:
            return [f"{where}: content type {media_type!r} is not documented (documented: {sorted(content)})"]
        problems = []
        if "Content-Length" not in headers and not response.get("x-streamed"):
            problems.append(f"{where}: sent without a Content-Length, but the answer is not declared streamed")
        for name, header in response.get("headers", {}).items():
            value = headers.get(name)
            if value is None:
                if header.get("required"):
                    problems.append(f"{where}: header {name} is missing")
                continue
            problems.extend(f"{where}: header {name}: {p}" for p in self._value_problems(header["schema"], value))
        return problems

    def problems(self, method: str, path: str, status: int, media_type: str, body: bytes) -> list[str]:
        """What in this answer's media type and body breaks the document; empty when nothing does."""
        where = f"{method} {path} -> {status}"
        if self.operation(method, path) is None:
            # Not an operation: the router's 404 / 405, still in the contract's error shape.
            return self._schema_problems(where, self._generic_error, media_type, body, {"application/json"})
        response = self.response(method, path, status)
        if response is None:
            return [f"{where}: status {status} is not documented for this operation; body: {body[:300]!r}"]
        content = response.get("content", {})
        if media_type not in content:
            return [f"{where}: content type {media_type!r} is not documented (documented: {sorted(content)})"]
        if media_type not in JSON_MEDIA_TYPES:
            return []
        validator = self._validator(_absolute(content[media_type]["schema"]))
        return self._schema_problems(where, validator, media_type, body, JSON_MEDIA_TYPES)

    def request_problems(self, method: str, path: str, query: Mapping[str, list[str]], body: Any) -> list[str]:
        """What in a request breaks the operation's declared parameters and body; empty when nothing does.

        ``query`` holds every value of each name: a parameter declared as an exploded array takes them all."""
        operation = self.operation(method, path)
        if operation is None:
            return []
        where = f"{method} {path} (request)"
        declared = {p["name"]: p for p in (self._resolved(p) for p in operation.get("parameters", []))}
        problems = []
        for name, values in query.items():
            if name not in declared:
                problems.append(f"{where}: query parameter {name!r} is not declared (declared: {sorted(declared)})")
                continue
            parameter = declared[name]
            if parameter.get("explode") and self._resolved(parameter["schema"]).get("type") == "array":
                validator = self._validator(_absolute(parameter["schema"]))
                problems.extend(f"{where}: {name}={values!r}: {e.message}" for e in validator.iter_errors(values))
                continue
            for value in values:
                problems.extend(f"{where}: {name}={value!r}: {p}" for p in self._value_problems(parameter["schema"], value))
        if body is not None:
            request_body = operation.get("requestBody")
            if request_body is None:
                return [*problems, f"{where}: a body was sent to an operation that takes none"]
            schema = request_body["content"]["application/json"]["schema"]
            validator = self._validator(_absolute(schema))
            problems.extend(f"{where}: body: {error.message}" for error in validator.iter_errors(body))
        return problems

    def _value_problems(self, schema: dict[str, Any], text: str) -> list[str]:
        """A query or header value (text) against its schema; an integer schema takes its digits."""
        value: Any = text
        if self._resolved(schema).get("type") == "integer":
            try:
                value = int(text)
            except ValueError:
                return [f"{text!r} is not an integer"]
        return [error.message for error in self._validator(_absolute(schema)).iter_errors(value)]

    def _schema_problems(
        self, where: str, validator: Draft202012Validator, media_type: str, body: bytes, allowed: set[str]
    ) -> list[str]:
        if media_type not in allowed:
            return [f"{where}: content type {media_type!r}, expected one of {sorted(allowed)}"]
        try:
            instance = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            return [f"{where}: the body is not JSON ({error}): {body[:300]!r}"]
        return [
            f"{where}: {error.message} at {'/'.join(map(str, error.absolute_path)) or 'the top'}; body: {body[:300]!r}"
            for error in validator.iter_errors(instance)
        ]


class ContractCheckedClient(TestClient):
    """A TestClient that checks every request and answer against the OpenAPI document and remembers what broke it.

    ``contract`` None: the document the app under test serves.
    """

    def __init__(self, *args: Any, contract: ResponseContract | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.contract = contract if contract is not None else contract_of(self.app)
        self.contract_problems: list[str] = []

    async def _request(self, method: str, path: Any, **kwargs: Any) -> ClientResponse:
        response = await super()._request(method, path, **kwargs)
        if self.contract is not None and method.upper() != "HEAD":
            await self._check(response, kwargs)
        return response

    async def _check(self, response: ClientResponse, sent: dict[str, Any]) -> None:
        contract = self.contract
        assert contract is not None
        method, path, status = response.method, response.url.path, response.status
        if outside_the_document(path) and status < 400:
            return  # the console's page and files; its errors are the contract's JSON, checked as any error
        if 200 <= status < 300:
            query = {name: response.url.query.getall(name) for name in response.url.query}
            self.contract_problems.extend(contract.request_problems(method, path, query, _sent_body(sent)))
        self.contract_problems.extend(contract.head_problems(method, path, status, response.content_type, response.headers))
        length = response.headers.get("Content-Length")
        if length is None or not length.isdigit() or int(length) > MAX_CHECKED_BODY_BYTES:
            self._check_when_read(response)  # streamed or large: reading it here would change what the test sees
            return
        # read() keeps the body, so the test's own .json() / .text() / .read() still get it.
        body = await response.read()
        self.contract_problems.extend(contract.problems(method, path, status, response.content_type, body))

    def _check_when_read(self, response: ClientResponse) -> None:
        """Check the body once the test reads it whole (json(), text() and read() all go through read())."""
        read = response.read
        contract = self.contract
        assert contract is not None

        async def read_and_check() -> bytes:
            body = await read()
            if len(body) <= MAX_CHECKED_BODY_BYTES:
                self.contract_problems.extend(
                    contract.problems(response.method, response.url.path, response.status, response.content_type, body)
                )
            response.read = read  # type: ignore[method-assign]  # checked once
            return body

        response.read = read_and_check  # type: ignore[method-assign]


def _sent_body(sent: dict[str, Any]) -> Any:
    """The JSON body a request carried, if it was one (``json=``, or ``data=`` holding JSON)."""
    if sent.get("json") is not None:
        return sent["json"]
    data = sent.get("data")
    if isinstance(data, bytes | str) and data.strip():
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
    return None


def _absolute(schema: Any) -> Any:
    """A schema of the document with its references made to point into the registered document."""
    if isinstance(schema, dict):
        return {
            key: (DOCUMENT_URI + value if key == "$ref" and value.startswith("#") else _absolute(value))
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_absolute(item) for item in schema]
    return schema
