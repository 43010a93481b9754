"""Writing a GetData answer's body: sent whole with a length when small, else streamed while it is fetched.

A result that fits in ``SMALL_RESULT_BYTES`` is sent as one body with a
``Content-Length`` and the row-count headers; a larger one is sent chunked
while it is still being fetched, so memory stays bounded whatever the result
size. Once the status line is out, an error can only be told by a body that
does not end as its format says: the connection is closed before the end.

A client must be able to tell such a cut answer from a whole one, whatever the
protocol and format. With HTTP/1.1 the chunked body then lacks its last chunk.
HTTP/1.0 has no chunks (the body ends when the connection closes): JSON and
NDJSON bodies show their own end (the closing bracket, the ``row_count``
line), a CSV body does not, so a CSV answer too large to send whole is refused
with 426 ``upgrade_required`` there. Likewise ``truncated``: JSON and NDJSON
say it in the body, CSV cannot, so a CSV result past ``row_limit`` is refused
(422 ``result_too_large``), or, when the limit is reached after the answer
began streaming, cut off before the rows of the batch that passed it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

from aiohttp import HttpVersion11, web

from gateway.contract.driver_protocol import QueryResult
from gateway.errors import GatewayError, ResultTooLarge, UpgradeRequired
from gateway.observability.getdata_tally import GetDataTally
from gateway.results.result_formats import ResultFormat
from gateway.results.result_rows import EncodedRows
from gateway.web.getdata_answers import CONTINUATION_HEADER, ROW_COUNT_HEADER, ROW_LIMIT_HEADER, TRUNCATED_HEADER
from gateway.web.keys import CONFIG, LOGGER

SMALL_RESULT_BYTES = 256 * 1024
WRITE_PIECE_BYTES = 1024 * 1024
"""A large chunk of rows is written this much at a time, so the transport never buffers a whole large row."""

Holding = Callable[[QueryResult], "str | None"]
"""Called inside the driver's context once the row limit cut the result (JSON, NDJSON): holds the rest of the
result and returns the continuation token of the next rows, or None (``gateway.web.getdata_pages``)."""


async def answer(
    request: web.Request,
    running: AbstractAsyncContextManager[QueryResult],
    tally: GetDataTally,
    result_format: ResultFormat,
    holding: Holding | None = None,
) -> web.StreamResponse:
    """The rows of the query ``running`` runs: one body if small, else streamed while they are fetched."""
    async with running as result:
        rows = EncodedRows(result, request.app[CONFIG].row_limit, result_format.encoding)
        head = result_format.head(rows.columns)
        batches = rows.chunks()

        def next_token() -> str | None:
            if holding is None or not rows.truncated or not result_format.ends_with_counts:
                return None
            return holding(result)

        try:
            return await _answer_rows(request, head, batches, rows, tally, result_format, next_token)
        finally:
            await batches.aclose()  # inside the context: the driver's batches end before its connection goes back


async def _answer_rows(
    request: web.Request,
    head: bytes,
    batches: AsyncIterator[bytes],
    rows: EncodedRows,
    tally: GetDataTally,
    result_format: ResultFormat,
    next_token: Callable[[], str | None],
) -> web.StreamResponse:
    """One body if the rows are small, else ``_stream``."""
    buffered: list[bytes] = []
    size = 0
    async for chunk in batches:
        buffered.append(chunk)
        size += len(chunk)
        if size > SMALL_RESULT_BYTES:
            del chunk  # _stream owns it now (in buffered) and lets go of it once written
            _check_uncounted(request, rows, result_format)
            if not result_format.ends_with_counts and request.version < HttpVersion11:
                raise _needs_http_1_1(result_format)
            return await _stream(request, head, buffered, batches, rows, tally, result_format, next_token)
    _check_uncounted(request, rows, result_format)
    token = next_token()
    body = (
        head
        + result_format.separator.join(buffered)
        + result_format.tail(rows.row_count, rows.truncated, token)
    )
    tally.sent(rows.row_count, len(body))
    headers = _headers(request, result_format)
    headers[ROW_COUNT_HEADER] = str(rows.row_count)
    headers[TRUNCATED_HEADER] = "true" if rows.truncated else "false"
    if token is not None:
        headers[CONTINUATION_HEADER] = token
    return web.Response(body=body, headers=headers)


def _check_uncounted(request: web.Request, rows: EncodedRows, result_format: ResultFormat) -> None:
    """Refuse rows the row limit cut in a format that has no place to say so (CSV): they would look whole.

    Refusing, rather than a trailer line, keeps CSV the plain RFC 4180 table every reader takes; rows that
    are wanted up to the limit can be asked for with LIMIT, and NDJSON and JSON say ``truncated``.
    """
    if rows.truncated and not result_format.ends_with_counts:
        row_limit = request.app[CONFIG].row_limit
        raise ResultTooLarge(
            f"the result has more rows than row_limit ({row_limit}) allows, and a {result_format.name.upper()} "
            f"answer has no place to say it was cut: add LIMIT {row_limit} to the query for its first rows, or "
            "ask for format=ndjson or json, which mark a truncated answer"
        )


def _needs_http_1_1(result_format: ResultFormat) -> UpgradeRequired:
    """426 for a streamed answer over HTTP/1.0 in a format whose body cannot show that it was cut (CSV)."""
    name = result_format.name.upper()
    return UpgradeRequired(
        f"this {name} answer is over {SMALL_RESULT_BYTES // 1024} KiB, so it would be streamed, and over HTTP/1.0 "
        f"a streamed {name} body ends by closing the connection, which looks the same when the answer was cut: "
        "send the request with HTTP/1.1 (behind nginx: proxy_http_version 1.1), or ask for format=ndjson or json, "
        "whose bodies show their own end"
    )


def _headers(request: web.Request, result_format: ResultFormat) -> dict[str, str]:
    # JSON goes as text/javascript (the specification's) unless Accept prefers application/json, which
    # generated clients ask for: the same bytes either way (choose_format decided it, JSON_AS_APPLICATION_JSON).
    return {
        "Content-Type": f"{result_format.content_type}; charset=utf-8",
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
    next_token: Callable[[], str | None],
) -> web.StreamResponse:
    """Send what was buffered, then every further batch as it is fetched, chunked."""
    response = web.StreamResponse(headers=_headers(request, result_format))
    if request.version >= HttpVersion11:
        response.enable_chunked_encoding()
    # else HTTP/1.0 (nginx's default upstream protocol) has no chunks: the body ends when the connection closes,
    # which only a format whose body shows its own end may do (JSON's closing bracket, NDJSON's count line).
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
            # Before the rows of the batch that passed the limit go out: the body ends short of them.
            _check_uncounted(request, result, result_format)
            await _send_chunk(response, chunk, stall_limit, separator)
            tally.sent(result.row_count, len(chunk) + len(separator))
            del chunk  # not held while the next one is fetched: it may be a 60 MB row
        _check_uncounted(request, result, result_format)  # the limit fell at the end of a batch
        tail = result_format.tail(result.row_count, result.truncated, next_token())
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


