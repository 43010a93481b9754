"""What GetData answers, as the OpenAPI document declares it: media types, headers, the JSON result's schema."""

from __future__ import annotations

from gateway.web.openapi_schemas import (
    COUNT,
    CSV_MEDIA_TYPE,
    GETDATA_MEDIA_TYPE,
    JSON,
    NDJSON_MEDIA_TYPE,
    TEXT,
    Component,
    Schema,
    closed_object,
    one_element_array,
    success_object,
)
from gateway.web.operations import Answer

ROW_COUNT_HEADER = "Dbgateway-Row-Count"
"""Rows in an answer sent whole (not on a streamed answer)."""
TRUNCATED_HEADER = "Dbgateway-Truncated"
"""``true`` or ``false`` on an answer sent whole: whether the row limit cut the result."""
CONTINUATION_HEADER = "X-Continuation"
"""On an answer sent whole that the row limit cut and whose rest is held: the token of the next rows."""
ROW_LIMIT_HEADER = "Dbgateway-Row-Limit"
"""On every answer: the row limit, so a reader of a streamed CSV can tell a result that may be cut."""

GETDATA_HEADERS: dict[str, Schema] = {
    ROW_LIMIT_HEADER: {
        "description": "The gateway's row limit (row_limit); a longer result is cut and marked truncated.",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    },
    ROW_COUNT_HEADER: {
        "description": "Rows in the answer; only on an answer sent whole (with Content-Length), not on a streamed one.",
        "schema": {"type": "integer", "minimum": 0},
    },
    TRUNCATED_HEADER: {
        "description": "true when the row limit cut the result; only on an answer sent whole, as Dbgateway-Row-Count "
        "(always false on CSV, which is never sent truncated).",
        "schema": {"type": "string", "enum": ["true", "false"]},
    },
    CONTINUATION_HEADER: {
        "description": "Only on a JSON or NDJSON answer sent whole that the row limit cut, when the gateway holds "
        "the rest of the result: the continuation token (the body's next) that fetches the next rows as GetData's "
        "continuation input.",
        "schema": {"type": "string"},
    },
}

QUERY_RESULT = Component(
    "QueryResult",
    {
        "description": "Rows as objects keyed by column name in column order; a repeated name becomes name_2, name_3.",
        **one_element_array(
            success_object(
                optional=("next",),
                columns={"type": "array", "items": closed_object({"name": TEXT, "type": TEXT})},
                data={"type": "array", "items": {"type": "object"}},
                row_count=COUNT,
                truncated={"type": "boolean", "description": "True when the row limit cut the result."},
                next={
                    "type": "string",
                    "description": "Only when the row limit cut the result and the gateway holds its rest: the "
                    "continuation token that fetches the next rows (GetData's continuation input, with the same "
                    "query); from the same snapshot, each page once, until it expires.",
                },
            )
        ),
    },
)

GETDATA_ANSWER = Answer(
    "The result",
    {
        # JSON too: generated clients parse only what is declared as JSON (they send Accept: application/json).
        JSON: QUERY_RESULT,
        GETDATA_MEDIA_TYPE: QUERY_RESULT,
        CSV_MEDIA_TYPE: {
            "type": "string",
            "description": "RFC 4180: a header row of column names, then one record per row, CRLF line ends. Values "
            "as the text of their JSON encoding (JSON documents and arrays as JSON text, booleans true/false); NULL is "
            'an empty field, an empty string is "". Never truncated: a result past the row limit is refused (422) '
            "or, once streaming, cut off.",
        },
        NDJSON_MEDIA_TYPE: {
            "type": "string",
            "description": "One JSON object per row, keyed by column name, one per line; then a last line "
            '{"row_count": N, "truncated": false}; when the row limit cut the result and the gateway holds its '
            'rest, that line also has "next", the continuation token of the next rows.',
        },
    },
    headers=GETDATA_HEADERS,
    streamed=True,
)

