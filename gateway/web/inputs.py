"""Reading request inputs: the query string, the optional JSON body, and table identification.

The contract's rule: inputs come from the query string; where an operation
also takes a JSON body, the body supplies what the query string does not give,
and the same field given differently by both is a 400 ``ambiguous_request``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import orjson
from aiohttp import web

from gateway.errors import AmbiguousRequest, BadRequest, PayloadTooLarge
from gateway.registry import RegistryState, TableAddress, TableRecord

PATH_FIELDS = ("database", "folder", "table")

REPEATED_INPUTS = frozenset({"param"})
"""Query-string inputs given once per value, in order (GetData's ``param``: the values of $1, $2, ...)."""


@attrs.frozen
class RequestInputs:
    """One request's named inputs, from the query string and, where allowed, the body."""

    query: Mapping[str, str]
    """Query-string parameters (each given once)."""
    body: Mapping[str, Any]
    """The JSON body's fields; empty when there is no body."""
    repeated: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    """The ``REPEATED_INPUTS`` given in the query string: every value, in the order given."""

    def get(self, name: str) -> str | None:
        """The field's text from either source; None when absent; 400 when they disagree."""
        from_query = self.query.get(name)
        from_body = _as_text(name, self.body.get(name))
        if from_query is not None and from_body is not None and from_query != from_body:
            raise AmbiguousRequest(
                f"parameter {name!r} is given differently in the query string and the body; give it once"
            )
        return from_query if from_query is not None else from_body

    def require(self, name: str) -> str:
        value = self.get(name)
        if value is None or value == "":
            raise BadRequest(f"parameter {name!r} is required")
        return value


async def read_inputs(request: web.Request, *, body_allowed: bool, max_body_bytes: int) -> RequestInputs:
    """Collect inputs; the body is read only for operations that accept one."""
    query: dict[str, str] = {}
    repeated: dict[str, tuple[str, ...]] = {}
    for name in request.query:
        values = request.query.getall(name)
        if name in REPEATED_INPUTS:
            repeated[name] = tuple(values)
            continue
        if len(set(values)) > 1:
            raise AmbiguousRequest(f"parameter {name!r} is given more than once with different values")
        query[name] = values[0]
    body: Mapping[str, Any] = {}
    if body_allowed and request.body_exists:
        body = await _read_json_object(request, max_body_bytes)
    return RequestInputs(query=query, body=body, repeated=repeated)


async def _read_json_object(request: web.Request, max_body_bytes: int) -> Mapping[str, Any]:
    if request.content_length is not None and request.content_length > max_body_bytes:
        raise PayloadTooLarge(f"the request body is larger than {max_body_bytes} bytes")
    try:
        content = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise PayloadTooLarge(f"the request body is larger than {max_body_bytes} bytes") from None
    if not content.strip():
        return {}
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError as error:
        raise BadRequest(f"the request body is not valid JSON: {error}") from None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    return body


def _as_text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise BadRequest(f"field {name!r} of the body must be a string")
    return str(value)


def table_identification(source: RequestInputs | Mapping[str, Any]) -> TableAddress | str | None:
    """The full path if all of database, folder and table are given, else local_table_name, else None.

    The specification's rule: when both forms are given, the full path wins.
    """
    if isinstance(source, RequestInputs):
        fields = {name: source.get(name) for name in (*PATH_FIELDS, "local_table_name")}
    else:
        fields = {name: _as_text(name, source.get(name)) for name in (*PATH_FIELDS, "local_table_name")}
    path = [fields[name] for name in PATH_FIELDS]
    if all(path):
        return TableAddress(*path)  # type: ignore[arg-type]
    if fields["local_table_name"]:
        return fields["local_table_name"]
    if any(path):
        missing = ", ".join(name for name, value in zip(PATH_FIELDS, path) if not value)
        raise BadRequest(f"a full table path needs database, folder and table; missing: {missing}")
    return None


def find_table(state: RegistryState, identification: TableAddress | str | None) -> TableRecord:
    if identification is None:
        raise BadRequest("identify the table with local_table_name, or with database, folder and table")
    if isinstance(identification, TableAddress):
        return state.table_by_address(identification)
    return state.table_by_local_name(identification)
