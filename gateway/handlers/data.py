"""GetData (GET and POST /GetData): a token holder's read-only SQL over the tables granted to it.

The driver checks the SQL against the token's grants and runs it; this handler
streams the rows. A result that fits in ``SMALL_RESULT_BYTES`` is sent as one
body with a length; a larger one is sent chunked while it is still being
fetched, so memory stays bounded whatever the result size.
"""

from __future__ import annotations

import orjson
from aiohttp import web

from gateway.auth import hash_user_token, require_user_token
from gateway.errors import AccessDenied, GatewayError, PayloadTooLarge
from gateway.inputs import read_inputs
from gateway.keys import CONFIG, LOGGER, POOLS, REGISTRY
from gateway.responses import GETDATA_CONTENT_TYPE

SMALL_RESULT_BYTES = 256 * 1024


async def get_data(request: web.Request) -> web.StreamResponse:
    app = request.app
    token = require_user_token(request)
    config = app[CONFIG]
    inputs = await read_inputs(request, body_allowed=True, max_body_bytes=config.max_body_bytes)
    database_name = inputs.require("local_database_name")
    query = inputs.require("query")
    if len(query.encode()) > config.max_query_bytes:
        raise PayloadTooLarge(f"the query text is larger than {config.max_query_bytes} bytes")
    state = app[REGISTRY].state
    database = state.database(database_name)
    granted = state.granted_refs(hash_user_token(state.token_salt, token), database_name)
    if not granted:
        raise AccessDenied(f"access denied: this token has no table granted in database {database_name!r}")
    pool = app[POOLS].get(database)
    checked = await pool.check_query(query, granted)
    async with pool.run_query(checked) as result:
        head = b'[{"status":"success","columns":' + orjson.dumps(
            [{"name": c.name, "type": c.type_name} for c in result.columns]
        ) + b',"data":['
        batches = result.json_batches()
        buffered: list[bytes] = []
        size = 0
        async for chunk in batches:
            buffered.append(chunk)
            size += len(chunk)
            if size > SMALL_RESULT_BYTES:
                return await _stream(request, head, buffered, batches, result)
        body = head + b",".join(buffered) + _tail(result)
        return web.Response(body=body, content_type=GETDATA_CONTENT_TYPE, charset="utf-8")


def _tail(result: object) -> bytes:
    return b'],"row_count":%d,"truncated":%s}]' % (
        result.row_count,  # type: ignore[attr-defined]
        b"true" if result.truncated else b"false",  # type: ignore[attr-defined]
    )


async def _stream(request: web.Request, head: bytes, buffered: list[bytes], batches, result) -> web.StreamResponse:  # type: ignore[no-untyped-def]
    response = web.StreamResponse(headers={"Content-Type": f"{GETDATA_CONTENT_TYPE}; charset=utf-8"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(head + b",".join(buffered))
    try:
        async for chunk in batches:
            await response.write(b"," + chunk)
    except GatewayError as error:
        # The status line is gone already: the only honest signal left is a body that does not end.
        request.app[LOGGER].error("getdata_failed_while_streaming", error=error.code, message=error.message)
        if request.transport is not None:
            request.transport.close()
        return response
    await response.write(_tail(result))
    await response.write_eof()
    return response
