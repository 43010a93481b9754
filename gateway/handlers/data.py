"""GetData (GET and POST /GetData): a token holder's read-only SQL over the tables granted to it.

The driver checks the SQL against the token's grants and runs it; this handler
streams the rows. A result that fits in ``SMALL_RESULT_BYTES`` is sent as one
body with a length; a larger one is sent chunked while it is still being
fetched, so memory stays bounded whatever the result size. The same holds for
each result format (``gateway.result_formats``: JSON, CSV, NDJSON), which the
``format`` input or the ``Accept`` header chooses. An answer sent whole also
carries its row count and whether it was truncated as headers (CSV has no
other place for them); a streamed one cannot, its status line went first.

A token runs at most ``token_query_limit`` queries on one database at once
(``gateway.token_queries``); the driver's log lines of a query carry the
token's fingerprint, so an operator can tell whose query a warning is about.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager

import attrs
from aiohttp import HttpVersion11, web

from gateway import errors
from gateway.auth import hash_user_token
from gateway.driver_protocol import QueryResult
from gateway.errors import AccessDenied, GatewayError, PayloadTooLarge
from gateway.keys import CONFIG, LOGGER, POOLS, REGISTRY, TOKEN_QUERIES
from gateway.metrics import GetDataTally, observe_getdata
from gateway.named_inputs import local_database_name
from gateway.getdata_answers import GETDATA_ANSWER, ROW_COUNT_HEADER, ROW_LIMIT_HEADER, TRUNCATED_HEADER
from gateway.operations import (
    ACCESS_DENIED,
    BAD_INPUT,
    DATABASE_UNAVAILABLE,
    PAYLOAD_TOO_LARGE,
    TOKEN_REQUIRED,
    USER_TOKEN,
    Access,
    Operation,
    Served,
    error_answer,
)
from gateway.parameters import parameter, required_text
from gateway.responses import getdata_media_type
from gateway.result_formats import FORMATS, JSON, ResultFormat, choose_format
from gateway.result_rows import EncodedRows

SMALL_RESULT_BYTES = 256 * 1024
WRITE_PIECE_BYTES = 1024 * 1024
"""A large chunk of rows is written this much at a time, so the transport never buffers a whole large row."""


GETDATA_TALLY = web.RequestKey("getdata_tally", GetDataTally)
"""The request's tally (``observe_getdata``), which the handler fills."""

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


def _observed(serve: Served) -> Served:
    """GetData's metrics and audit entry around everything, the token check and the inputs included."""

    @observe_getdata
    async def observed(request: web.Request, tally: GetDataTally) -> web.StreamResponse:
        request[GETDATA_TALLY] = tally
        return await serve(request)

    return observed


async def get_data(request: web.Request, inputs: QueryInputs) -> web.StreamResponse:
    app = request.app
    tally = request[GETDATA_TALLY]
    token = request[USER_TOKEN]
    config = app[CONFIG]
    database_name = inputs.local_database_name
    query = inputs.query
    result_format = choose_format(inputs.format, request.headers.get("Accept"))
    if len(query.encode()) > config.max_query_bytes:
        raise PayloadTooLarge(f"the query text is larger than {config.max_query_bytes} bytes")
    tally.query = query
    state = app[REGISTRY].state
    database = state.databases.get(database_name)
    if database is not None:
        tally.database = database_name  # metric labels name registered databases only
    token_hash = hash_user_token(state.token_salt, token)
    granted = state.granted_refs(token_hash, database_name)
    # The same answer whether or not the database exists: a token holder learns no registered name.
    if database is None or not granted:
        raise AccessDenied(f"access denied: this token has no table granted in database {database_name!r}")
    pool = app[POOLS].get(database)
    checked = await pool.check_query(query, granted)
    tally.checked = checked
    # The access-log middleware bound the token's fingerprint: the driver's log lines of the query carry it.
    async with app[TOKEN_QUERIES].turn(token_hash, database_name):
        return await _answer(request, pool.run_query(checked), tally, result_format)


async def _answer(
    request: web.Request,
    running: AbstractAsyncContextManager[QueryResult],
    tally: GetDataTally,
    result_format: ResultFormat,
) -> web.StreamResponse:
    """The rows of the query ``running`` runs: one body if small, else streamed while they are fetched."""
    async with running as result:
        rows = EncodedRows(result, request.app[CONFIG].row_limit, result_format.encoding)
        head = result_format.head(rows.columns)
        batches = rows.chunks()
        try:
            return await _answer_rows(request, head, batches, rows, tally, result_format)
        finally:
            await batches.aclose()  # inside the context: the driver's batches end before its connection goes back


async def _answer_rows(
    request: web.Request,
    head: bytes,
    batches: AsyncIterator[bytes],
    rows: EncodedRows,
    tally: GetDataTally,
    result_format: ResultFormat,
) -> web.StreamResponse:
    """One body if the rows are small, else ``_stream``."""
    buffered: list[bytes] = []
    size = 0
    async for chunk in batches:
        buffered.append(chunk)
        size += len(chunk)
        if size > SMALL_RESULT_BYTES:
            del chunk  # _stream owns it now (in buffered) and lets go of it once written
            return await _stream(request, head, buffered, batches, rows, tally, result_format)
    body = (
        head
        + result_format.separator.join(buffered)
        + result_format.tail(rows.row_count, rows.truncated)
    )
    tally.sent(rows.row_count, len(body))
    headers = _headers(request, result_format)
    headers[ROW_COUNT_HEADER] = str(rows.row_count)
    headers[TRUNCATED_HEADER] = "true" if rows.truncated else "false"
    return web.Response(body=body, headers=headers)


def _headers(request: web.Request, result_format: ResultFormat) -> dict[str, str]:
    # JSON goes as text/javascript (the specification's) unless Accept prefers application/json, which
    # generated clients ask for: the same bytes either way.
    content_type = (
        getdata_media_type(request.headers.get("Accept")) if result_format is JSON else result_format.content_type
    )
    return {
        "Content-Type": f"{content_type}; charset=utf-8",
        "Vary": "Accept",  # the same URL answers another format for another Accept
        ROW_LIMIT_HEADER: str(request.app[CONFIG].row_limit),
    }


async def _stream(
    request: web.Request,
    head: bytes,
    buffered: list[bytes],
    batches: AsyncIterator[bytes],
    result: EncodedRows,
    tally: GetDataTally,
    result_format: ResultFormat,
) -> web.StreamResponse:
    """Send what was buffered, then every further batch as it is fetched, chunked."""
    response = web.StreamResponse(headers=_headers(request, result_format))
    if request.version >= HttpVersion11:
        response.enable_chunked_encoding()
    # else HTTP/1.0 (nginx's default upstream protocol) has no chunks: the body ends when the connection closes.
    await response.prepare(request)
    # A client that stops reading would hold the query's connection (a pool slot) for as long as it keeps
    # the socket open: every write gets client_stall_timeout, shorter than the statement time limit, so a
    # few slow readers cannot keep a database's pool from everyone else.
    stall_limit = request.app[CONFIG].client_stall_timeout
    separator = result_format.separator
    # The last chunk buffered may be large (one big row): it goes out on its own rather than copied into the first.
    last = buffered.pop()
    first = head + separator.join(buffered)
    try:
        await _send(response, first, stall_limit)
        tally.sent(result.row_count, len(first))
        lead = separator if buffered else b""
        await _send_chunk(response, last, stall_limit, lead)
        tally.sent(result.row_count, len(last) + len(lead))
        del last, buffered[:]
        async for chunk in batches:
            await _send_chunk(response, chunk, stall_limit, separator)
            tally.sent(result.row_count, len(chunk) + len(separator))
            del chunk  # not held while the next one is fetched: it may be a 60 MB row
        tail = result_format.tail(result.row_count, result.truncated)
        await _send(response, tail, stall_limit)
        tally.sent(result.row_count, len(tail))
        await _send(response, None, stall_limit)
    except GatewayError as error:
        tally.late_error = error
        # The status line is gone already: the only honest signal left is a body that does not end.
        request.app[LOGGER].error("getdata_failed_while_streaming", error=error.code, message=error.message)
        _cut_off(request)
    except _ClientStalled:
        tally.stalled = True
        request.app[LOGGER].warning("getdata_client_stalled", seconds=stall_limit)
        if request.transport is not None:
            request.transport.abort()  # close() would wait for the client to take the buffered rest
    return response


class _ClientStalled(Exception):
    """The client did not take a piece of the answer within ``client_stall_timeout``."""


async def _send(response: web.StreamResponse, data: bytes | memoryview | None, seconds: float) -> None:
    """Write ``data`` (``None``: end the body) within ``seconds``, else raise ``_ClientStalled``."""
    try:
        async with asyncio.timeout(seconds):
            await (response.write_eof() if data is None else response.write(data))
    except TimeoutError:
        raise _ClientStalled from None


async def _send_chunk(response: web.StreamResponse, chunk: bytes, seconds: float, lead: bytes) -> None:
    """Write one chunk of rows after ``lead`` (the separator, if it follows rows); a large one in pieces."""
    if len(chunk) <= SMALL_RESULT_BYTES:
        await _send(response, lead + chunk if lead else chunk, seconds)
        return
    if lead:
        await _send(response, lead, seconds)
    # In pieces: the transport would otherwise copy most of the chunk into its buffer (and asyncio's
    # writelines joins the chunked framing to it), holding a large row two more times.
    view = memoryview(chunk)
    for start in range(0, len(chunk), WRITE_PIECE_BYTES):
        await _send(response, view[start : start + WRITE_PIECE_BYTES], seconds)


def _cut_off(request: web.Request) -> None:
    if request.transport is not None:
        request.transport.close()


OPERATIONS = (
    Operation(
        "GetData",
        ("GET", "POST"),
        "/GetData",
        get_data,
        Access.USER,
        "Run one read-only SELECT over granted tables (POST: for queries too long for a URL)",
        description="Inputs from the query string or the JSON body. The result streams as "
        "`text/javascript; charset=utf-8` holding JSON (the specification's media type, the default), or as "
        "`application/json; charset=utf-8`, the same body, when the request's `Accept` prefers application/json, "
        "or as CSV (`text/csv`) or NDJSON (`application/x-ndjson`) when the `format` input or the Accept header "
        "asks; a result over the row limit is cut and marked truncated. "
        "An error found after the status line was sent cuts the body off (it does not end as its format says). "
        "A database that is not registered is 403 access_denied, worded as for one without a granted table. "
        "A token runs at most `token_query_limit` queries on one database at once; the next waits for a turn up to "
        "`acquire_timeout`, then answers 429 `too_many_queries`. A result row larger than `max_row_bytes` "
        "answers 422 `result_too_large` (a streamed answer is cut off instead).",
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
                "A result row is larger than the gateway reads (max_row_bytes, or a fetch's share of its memory budget)",
                errors.ResultTooLarge,
            ),
            error_answer(
                "TooManyQueries",
                "The token already runs as many queries on that database as one token may; waited acquire_timeout",
                errors.TooManyQueries,
            ),
            DATABASE_UNAVAILABLE,
            error_answer("QueryTimeout", "The query ran past the statement time limit", errors.QueryTimeout),
        ),
        around=_observed,
    ),
)
