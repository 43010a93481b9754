"""GetData's CSV and NDJSON answers at paths of their own: GET and POST ``/GetData/csv`` and ``/GetData/ndjson``.

``/GetData`` answers all three result formats (the ``format`` input, or the
Accept header), so its 200 is declared with all three media types. A client
generated from the document parses a 200 by the first media type its generator
knows, JSON, whatever the request asked for: ``format=csv`` through a client
that openapi-python-client generated failed with a JSONDecodeError (issue 20).
OpenAPI gives one operation per path and method, so each format that is not
JSON is served again here as an operation of its own, whose 200 is that format
alone: a generated client returns its text. The answer is the one
``/GetData?format=csv`` (or ``ndjson``) gives, byte for byte: the same handler,
with the format fixed, and the same metrics and audit entry.
"""

from __future__ import annotations

import attrs
from aiohttp import web

from gateway.web.getdata_answers import GETDATA_ANSWER
from gateway.web.handlers.data import OPERATIONS as GETDATA_OPERATIONS
from gateway.web.handlers.data import QueryInputs, get_data
from gateway.web.named_inputs import local_database_name
from gateway.web.openapi_schemas import CSV_MEDIA_TYPE, NDJSON_MEDIA_TYPE
from gateway.web.operations import Access, Answer, Handler, Operation

(GETDATA,) = GETDATA_OPERATIONS


@attrs.frozen(kw_only=True)
class FixedFormatInputs:
    """GetData's inputs but the format, which the path decides."""

    local_database_name: str = local_database_name()
    """The database the query runs in."""
    query: str = attrs.field(metadata=attrs.fields(QueryInputs).query.metadata)
    """The SQL text, declared as GetData declares it."""
    parameters: tuple[str | None, ...] = attrs.field(metadata=attrs.fields(QueryInputs).parameters.metadata)
    """The values of its ``$1``..``$n``, declared as GetData declares them."""
    continuation: str | None = attrs.field(metadata=attrs.fields(QueryInputs).continuation.metadata, default=None)
    """A continuation token, declared as GetData declares it (``/GetData/csv`` refuses one: 400)."""


def _in_format(name: str) -> Handler:
    async def answer_in_format(request: web.Request, inputs: FixedFormatInputs) -> web.StreamResponse:
        fixed = QueryInputs(
            local_database_name=inputs.local_database_name,
            query=inputs.query,
            format=name,
            parameters=inputs.parameters,
            continuation=inputs.continuation,
        )
        return await get_data(request, fixed)

    return answer_in_format


def _operation(name: str, media_type: str, label: str) -> Operation:
    return Operation(
        f"GetData{name.title()}",
        ("GET", "POST"),
        f"/GetData/{name}",
        _in_format(name),
        Access.USER,
        f"GetData answering {label} (POST: for queries too long for a URL)",
        description=f"The same as GetData with format={name}, for clients generated from this document, which "
        f"read a 200 by its declared media type: this one is {media_type} only. Inputs, errors, limits, "
        "streaming, truncation and audit are GetData's.",
        inputs=FixedFormatInputs,
        body=True,
        answers={200: Answer(f"The result as {label}", {media_type: GETDATA_ANSWER.content[media_type]},
                             headers=GETDATA_ANSWER.headers, streamed=True)},
        errors=GETDATA.errors,
        audited=GETDATA.audited,
    )


OPERATIONS = (
    _operation("csv", CSV_MEDIA_TYPE, "CSV"),
    _operation("ndjson", NDJSON_MEDIA_TYPE, "NDJSON"),
)
