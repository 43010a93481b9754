"""With ``workers`` > 1: a continuation whose result another worker holds is answered by that worker.

The kernel hands each connection to any worker (``SO_REUSEPORT``), but a held
result lives in the process that opened it, and a token names that process
(``gateway.databases.continuations``). Each worker therefore also serves the app
on a Unix socket ``<pid>.http.sock`` in the workers' private runtime folder
(``gateway.process.workers`` binds it, beside the log socket of
``gateway.observability.log_sharing``). A worker that receives a continuation
whose token holds (its MAC checked first: only a real token is forwarded) but
names a sibling sends the request there, method, headers and body as they
came, and streams the sibling's answer back as it arrives: status, headers and
body, a cut body cut again. A sibling that is gone answers as an unknown token.
Both workers log and audit the request; the sibling's entry has the rows.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
from aiohttp import HttpVersion11, web

from gateway.databases.continuations import UNKNOWN
from gateway.errors import ContinuationGone
from gateway.web.keys import CONFIG, LOG_SIBLINGS, LOGGER, REQUEST_CONTEXT

HTTP_SOCKET_SUFFIX = ".http.sock"
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade", "te", "trailer",
     "proxy-connection", "date", "server"}
)


def http_socket_path(folder: Path, pid: int) -> Path:
    return folder / f"{pid}{HTTP_SOCKET_SUFFIX}"


def serve_forwarded(app: web.Application, folder: Path) -> socket.socket:
    """Bind the worker's private socket (mode 0600 inside the 0700 folder), to be served beside the port, and
    remove it when ``app`` stops (before the log socket's clean-up, which removes the folder when last out)."""
    bound = _bind_http_socket(folder, os.getpid())

    async def remove_socket(_: web.Application) -> AsyncIterator[None]:
        yield
        http_socket_path(folder, os.getpid()).unlink(missing_ok=True)

    app.cleanup_ctx.append(remove_socket)
    return bound


def _bind_http_socket(folder: Path, pid: int) -> socket.socket:
    path = http_socket_path(folder, pid)
    path.unlink(missing_ok=True)
    bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound.bind(str(path))
    path.chmod(0o600)
    bound.listen(128)
    bound.setblocking(False)
    return bound


async def forward(request: web.Request, pid: int) -> web.StreamResponse:
    """The answer of the sibling ``pid`` to this request, streamed back; 410 when there is no such sibling."""
    siblings = request.app.get(LOG_SIBLINGS)
    path = http_socket_path(siblings.folder, pid) if siblings is not None else None
    if path is None or not path.exists():
        raise ContinuationGone(UNKNOWN)
    config = request.app[CONFIG]
    body = await request.read()
    headers = {name: value for name, value in request.headers.items() if name.lower() not in _HOP_BY_HOP}
    headers["X-Request-Id"] = request[REQUEST_CONTEXT].request_id  # both workers' log lines of the request carry one id
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=config.statement_timeout + 5)
    request.app[LOGGER].info("continuation_forwarded", worker_pid=pid)
    connector = aiohttp.UnixConnector(path=str(path))
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False) as session:
        try:
            upstream = await session.request(
                request.method, "http://worker" + request.path_qs, headers=headers, data=body or None
            )
        except aiohttp.ClientError:
            raise ContinuationGone(UNKNOWN) from None  # the sibling is gone, and its results with it
        async with upstream:
            response = web.StreamResponse(
                status=upstream.status,
                headers={
                    name: value
                    for name, value in upstream.headers.items()
                    if name.lower() not in _HOP_BY_HOP and name.lower() != "x-request-id"  # this worker sets it
                },
            )
            if upstream.content_length is not None:
                response.content_length = upstream.content_length
            elif request.version >= HttpVersion11:
                response.enable_chunked_encoding()
            await response.prepare(request)
            try:
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
            except aiohttp.ClientError:
                # The sibling cut its answer (an error after its status line): cut this one too.
                if request.transport is not None:
                    request.transport.close()
                return response
            await response.write_eof()
            return response
