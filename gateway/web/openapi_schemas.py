"""Pieces of JSON Schema the operations' declarations are written with, and the schemas every operation shares.

A ``Component`` is a schema with a name: wherever a declaration uses one, the
OpenAPI document holds it once under ``components/schemas`` and refers to it
(``gateway.web.openapi_document``). Every answer schema is closed
(``additionalProperties: false``), so the test suite and schemathesis hold the
gateway to exactly what it declares.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from gateway import errors

Schema = dict[str, Any]

JSON = "application/json"
GETDATA_MEDIA_TYPE = "text/javascript"
CSV_MEDIA_TYPE = "text/csv"
NDJSON_MEDIA_TYPE = "application/x-ndjson"
METRICS_MEDIA_TYPE = "text/plain"
HTML = "text/html"


@attrs.frozen
class Component:
    """A named schema: written once under ``components/schemas``, referred to wherever it is used."""

    name: str
    """Its key under ``components/schemas``."""
    schema: Any
    """The schema itself; it may hold other ``Component``s. Or a function of the ``DocumentContext`` building it
    (a schema that depends on the installed drivers)."""


def ref(kind: str, name: str) -> Schema:
    return {"$ref": f"#/components/{kind}/{name}"}


def closed_object(properties: dict[str, Any], *, optional: tuple[str, ...] = ()) -> Schema:
    """An object with exactly these properties, all required but the ``optional`` ones."""
    return {
        "type": "object",
        "required": [name for name in properties if name not in optional],
        "properties": properties,
        "additionalProperties": False,
    }


def one_element_array(item: Any) -> Schema:
    """The specification's habit: a JSON array holding one object."""
    return {"type": "array", "minItems": 1, "maxItems": 1, "items": item}


SUCCESS_STATUS = Component("SuccessStatus", {"const": "success"})


def success_object(*, optional: tuple[str, ...] = (), **properties: Any) -> Schema:
    return closed_object({"status": SUCCESS_STATUS, **properties}, optional=optional)


TEXT: Schema = {"type": "string"}
NAME_LIST: Schema = {"type": "array", "items": {"type": "string"}}
COUNT: Schema = {"type": "integer", "minimum": 0}
TEXT_OR_NUMBER: Schema = {"type": ["string", "integer"]}


def any_case(*words: str, padded: bool = False) -> Schema:
    """Text that is one of ``words`` in any case (a pattern: JSON Schema has no case-insensitive enum).

    ``padded``: spaces around it are allowed, and so is nothing at all.
    """
    spelled = "|".join(
        "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word) for word in words
    )
    pattern = f"^\\s*(?:{spelled})?\\s*$" if padded else f"^(?:{spelled})$"
    return {"type": "string", "pattern": pattern}


def error_codes() -> list[str]:
    """Every machine code an exception class of ``gateway.errors`` answers with, in declaration order."""
    found: list[str] = []
    pending: list[type[errors.GatewayError]] = [errors.GatewayError]
    while pending:
        cls = pending.pop(0)
        if cls is not errors.Conflict and cls.code not in found:  # Conflict is a base class, never raised
            found.append(cls.code)
        pending.extend(cls.__subclasses__())
    return found


ERROR_CODE = Component(
    "ErrorCode",
    {
        "type": "string",
        "enum": error_codes(),
        "description": "Stable snake_case machine code; each operation lists the codes it can answer per status.",
    },
)

ERROR = Component(
    "Error",
    {
        "description": "Every answer other than success: always JSON, never HTML, never a stack trace.",
        **closed_object(
            {
                "status": {"const": "error"},
                "error": ERROR_CODE,
                "message": {"type": "string", "minLength": 1, "description": "One sentence a person can act on."},
            }
        ),
    },
)
