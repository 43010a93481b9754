"""GetData (GET and POST /GetData): a token holder's read-only SQL over the tables granted to it.

The driver checks the SQL against the token's grants and runs it;
``gateway.web.getdata_body`` writes the rows, whole or streamed, in the result
format (``gateway.results.result_formats``: JSON, CSV, NDJSON) that the ``format``
input or the ``Accept`` header chooses.

A token runs at most ``token_query_limit`` queries on one database at once
(``gateway.databases.token_queries``); the driver's log lines of a query carry the
token's fingerprint, so an operator can tell whose query a warning is about.
"""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from gateway import errors
from gateway.contract.driver_protocol import NarrowedGrant
from gateway.errors import AccessDenied, PayloadTooLarge, QueryRejected, RefusalReason
from gateway.registry import utc_now
from gateway.results.result_formats import FORMATS, choose_format
from gateway.web.getdata_answers import GETDATA_ANSWER
from gateway.web.getdata_pages import first_page, next_page
from gateway.web.grant_limits import enforces_narrowing
from gateway.web.keys import CONFIG, POOLS, REQUEST_CONTEXT, TOKEN_QUERIES
from gateway.web.named_inputs import local_database_name
from gateway.web.operations import (
    ACCESS_DENIED,
    BAD_INPUT,
    DATABASE_UNAVAILABLE,
    PAYLOAD_TOO_LARGE,
    TOKEN_REQUIRED,
    Access,
    Operation,
    error_answer,
)
from gateway.web.parameters import optional_text, parameter, parameter_group, required_text
from gateway.web.query_values import documented, read_values

FORMAT_NAMES = [candidate.name for candidate in FORMATS]


@attrs.frozen(kw_only=True)
class QueryInputs:
    """GetData's inputs."""

    local_database_name: str = local_database_name()
    """The database the query runs in."""
    query: str = parameter(
        "One read-only SELECT, every table schema-qualified and granted; at most max_query_bytes bytes.",
        schema=lambda context: {"type": "string", "minLength": 1, "maxLength": context.config.max_query_bytes},
        body_schema={"type": "string", "description": "One read-only SELECT; every table schema-qualified and granted."},
        reader=required_text,
        required=True,
    )
    """The SQL text (its size is checked after the format)."""
    format: str | None = parameter(
        "Result format: json (text/javascript), csv (text/csv) or ndjson (application/x-ndjson); wins over "
        "Accept. Without it, Accept chooses by q-value; an Accept naming none of them gets json. A client "
        "generated from this document reads this operation's answer as JSON: it asks /GetData/csv or "
        "/GetData/ndjson for the other formats.",
        schema={"type": "string", "enum": FORMAT_NAMES},
        body_schema={"type": "string", "enum": FORMAT_NAMES, "description": "Result format; wins over the Accept header."},
    )
    """The ``format`` input as given; ``choose_format`` reads it with the Accept header."""
    parameters: tuple[str | None, ...] = parameter_group(documented, read_values)
    """The values of the query's ``$1``..``$n`` (``params`` in the body, ``param`` in the query string)."""
    continuation: str | None = parameter(
        "The continuation token of an answer the row limit cut (its next, or X-Continuation): fetches the next "
        "row_limit rows of the same result, from the same snapshot, as json or ndjson. Send the same query with "
        "it. Each token fetches its page once, only with the user token that began the result, until "
        "continuation_expiry_seconds idle; then 410 continuation_gone.",
        schema={"type": "string", "maxLength": 200},
        body_schema={"type": "string", "maxLength": 200, "description": "A continuation token (next)."},
        reader=optional_text,
    )
    """The token of the page to read, or None for a query's first answer."""



async def get_data(request: web.Request, inputs: QueryInputs) -> web.StreamResponse:
    app = request.app
    context = request[REQUEST_CONTEXT]  # GetData is audited: the context holds its tally
    tally = context.getdata
    assert tally is not None and context.user_token_hash is not None  # the access check passed: a user token
    config = app[CONFIG]
    database_name = inputs.local_database_name
    query = inputs.query
    result_format = choose_format(inputs.format, request.headers.get("Accept"))
    if len(query.encode()) > config.max_query_bytes:
        raise PayloadTooLarge(f"the query text is larger than {config.max_query_bytes} bytes")
    tally.query = query
    state = context.registry
    database = state.databases.get(database_name)
    if database is not None:
        tally.database = database_name  # metric labels name registered databases only
    token_hash = context.user_token_hash
    now = utc_now()  # grants expire by the clock at request time: every replica agrees, no timer needed
    narrowing = {ref: NarrowedGrant(columns=limits.columns, row_filter=limits.row_filter)
                 for ref, limits in state.narrowing(token_hash, database_name, now).items()}
    if inputs.continuation is not None:
        return await next_page(request, inputs.continuation, tally, result_format, (token_hash, database_name), query,
                               now, narrowing)
    granted = state.granted_refs(token_hash, database_name, now)
    # The same answer whether or not the database exists: a token holder learns no registered name.
    if database is None or not granted:
        if database is not None and state.expired_refs(token_hash, database_name, now):
            tally.refusal_reason = "grant expired"  # the operator's audit only; the answer is the usual 403
        raise AccessDenied(f"access denied: this token has no table granted in database {database_name!r}")
    pool = app[POOLS].get(database)
    # The values go to the driver apart from the text, and only when there are some: a driver that takes
    # none needs no change (gateway.contract.driver_protocol).
    values: dict[str, Any] = {"parameters": inputs.parameters} if inputs.parameters else {}
    if narrowing and not enforces_narrowing(pool):  # never read a narrowed grant as a whole one
        raise QueryRejected("this token's grants in this database are narrower than a table, and its driver "
                            "cannot enforce that")
    keywords = {**values, "narrowing": narrowing} if narrowing else values
    try:
        checked = await pool.check_query(query, granted, **keywords)
    except QueryRejected as rejected:
        if rejected.reason == RefusalReason.NOT_GRANTED and state.expired_refs(token_hash, database_name, now):
            tally.refusal_reason = "grant expired"
        raise
    tally.checked = checked
    # The request middleware bound the token's fingerprint: the driver's log lines of the query carry it.
    async with app[TOKEN_QUERIES].turn(token_hash, database_name):
        return await first_page(request, pool, checked, tally, result_format, (token_hash, database_name), query,
                                values, narrowing)


OPERATIONS = (
    Operation(
        "GetData",
        ("GET", "POST"),
        "/GetData",
        get_data,
        Access.USER,
        "Run one read-only SELECT over granted tables (POST: for queries too long for a URL)",
        description="Inputs from the query string or the JSON body. The query's `$1`, `$2`, ... take their values "
        "from `params` (POST body: a JSON array) or repeated `param` (query string), bound by the database, never "
        "spliced into the SQL. The result streams as "
        "`text/javascript; charset=utf-8` holding JSON (the specification's media type, the default), or as "
        "`application/json; charset=utf-8`, the same body, when the request's `Accept` prefers application/json, "
        "or as CSV (`text/csv`) or NDJSON (`application/x-ndjson`) when the `format` input or the Accept header "
        "asks; a result over the row limit is cut and marked truncated. "
        "An error found after the status line was sent cuts the body off (it does not end as its format says). "
        "CSV has no place to say truncated: a CSV result past the row limit answers 422 result_too_large (or, "
        "once streaming, is cut off), and a CSV answer too large to send whole needs HTTP/1.1 (426 over "
        "HTTP/1.0, whose streamed body would look whole when cut). "
        "A database that is not registered is 403 access_denied, worded as for one without a granted table. "
        "A token runs at most `token_query_limit` queries on one database at once; the next waits for a turn up to "
        "`acquire_timeout`, then answers 429 `too_many_queries`. A result row larger than `max_row_bytes` "
        "answers 422 `result_too_large` (a streamed answer is cut off instead). "
        "A JSON or NDJSON answer the row limit cut carries a continuation token (`next`; `X-Continuation` when "
        "sent whole) while the gateway holds the rest of the result: GetData with `continuation` and the same "
        "query reads the next page from the same snapshot; a token fetches its page once, with its user token "
        "only, while the token still has the query's tables granted (else 403), until it expires (410).",
        inputs=QueryInputs,
        body=True,
        answers={200: GETDATA_ANSWER},
        errors=(
            BAD_INPUT,
            error_answer("QueryRefused", "The query was refused", errors.QueryRejected, errors.QueryFailed),
            TOKEN_REQUIRED,
            ACCESS_DENIED,
            PAYLOAD_TOO_LARGE,
            error_answer(
                "ResultTooLarge",
                "A result row is larger than the gateway reads (max_row_bytes, or a fetch's share of its memory "
                "budget), or a CSV result has more rows than the row limit (CSV cannot mark an answer truncated)",
                errors.ResultTooLarge,
            ),
            error_answer(
                "UpgradeRequired",
                "A CSV answer too large to send whole is streamed, which needs HTTP/1.1 (the answer carries "
                "Upgrade: HTTP/1.1); over HTTP/1.0 a cut CSV stream would look whole",
                errors.UpgradeRequired,
            ),
            error_answer(
                "TooManyQueries",
                "The token already runs as many queries on that database as one token may; waited acquire_timeout",
                errors.TooManyQueries,
            ),
            DATABASE_UNAVAILABLE,
            error_answer("QueryTimeout", "The query ran past the statement time limit", errors.QueryTimeout),
            error_answer(
                "ContinuationGone",
                "The continuation token's result is not open: unknown (or another token's), its page read already, "
                "expired, closed to make room for another query of the token, or closed at shutdown",
                errors.ContinuationGone,
            ),
        ),
        audited=True,
    ),
)
