"""Holding every answer the test suite receives to ``gateway/openapi.json``.

``conftest.make_gateway`` hands out ``ContractCheckedClient``s: each response
is checked against the schema the document gives for its (path, method,
status, media type), and what breaks the document is reported when the test
ends. Unknown paths and methods (404 ``not_found``, 405) are checked against
the generic error body.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import orjson
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOCUMENT_URI = "urn:dbgateway:openapi"
MAX_CHECKED_BODY_BYTES = 1024 * 1024
"""Larger (or streamed, chunked) answers are not read by the check, so a test still sees them as sent."""
JSON_MEDIA_TYPES = {"application/json", "text/javascript"}


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The document as the installed package carries it."""
    return orjson.loads((resources.files("gateway") / "openapi.json").read_bytes())


def canonical_path(path: str) -> str:
    """The documented spelling of a served path: every path is also served with a trailing slash."""
    return path[:-1] if len(path) > 1 and path.endswith("/") else path


class ResponseContract:
    """Which schema an answer must satisfy, and whether it does."""

    def __init__(self, document: dict[str, Any]) -> None:
        self._paths: dict[str, dict[str, Any]] = document["paths"]
        registry = Registry().with_resource(DOCUMENT_URI, Resource.from_contents(document, DRAFT202012))
        self._registry = registry
        self._generic_error = self._validator({"$ref": f"{DOCUMENT_URI}#/components/schemas/Error"})

    def _validator(self, schema: dict[str, Any]) -> Draft202012Validator:
        return Draft202012Validator(schema, registry=self._registry)

    def problems(self, method: str, path: str, status: int, media_type: str, body: bytes) -> list[str]:
        """What in this answer breaks the document; empty when nothing does."""
        where = f"{method} {path} -> {status}"
        operation = self._paths.get(canonical_path(path), {}).get(method.lower())
        if operation is None:
            # Not an operation: the router's 404 / 405, still in the contract's error shape.
            return self._schema_problems(where, self._generic_error, media_type, body, {"application/json"})
        template = canonical_path(path).replace("~", "~0").replace("/", "~1")
        response = operation["responses"].get(str(status))
        if response is None:
            return [f"{where}: status {status} is not documented for this operation; body: {body[:300]!r}"]
        content = response.get("content", {})
        if media_type not in content:
            return [f"{where}: content type {media_type!r} is not documented (documented: {sorted(content)})"]
        if media_type not in JSON_MEDIA_TYPES:
            return []
        media = media_type.replace("/", "~1")
        pointer = f"{DOCUMENT_URI}#/paths/{template}/{method.lower()}/responses/{status}/content/{media}/schema"
        return self._schema_problems(where, self._validator({"$ref": pointer}), media_type, body, JSON_MEDIA_TYPES)

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


@functools.cache
def response_contract() -> ResponseContract:
    return ResponseContract(openapi_document())


class ContractCheckedClient(TestClient):
    """A TestClient that checks every answer against the OpenAPI document and remembers what broke it."""

    def __init__(self, *args: Any, contract: ResponseContract | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.contract = contract
        self.contract_problems: list[str] = []

    async def _request(self, method: str, path: Any, **kwargs: Any) -> ClientResponse:
        response = await super()._request(method, path, **kwargs)
        if self.contract is not None and method.upper() != "HEAD":
            await self._check(response)
        return response

    async def _check(self, response: ClientResponse) -> None:
        length = response.headers.get("Content-Length")
        if length is None or not length.isdigit() or int(length) > MAX_CHECKED_BODY_BYTES:
            return  # streamed or large: reading it here would change what the test sees
        # read() keeps the body, so the test's own .json() / .text() / .read() still get it.
        body = await response.read()
        assert self.contract is not None
        self.contract_problems.extend(
            self.contract.problems(response.method, response.url.path, response.status, response.content_type, body)
        )
