"""Cancelling a running statement on the server without ever blocking the process.

psycopg2's ``connection.cancel()`` is libpq's ``PQcancel``: it opens a new
connection to the server, sends the cancel request and waits for the server to
close that connection, blocking, with the GIL held (moving it to a thread does
not help). On a network path that went silent while the TCP connections stay
open, that wait lasts until the path comes back, and the whole worker froze
with it (issue 20).

``start_cancel`` asks instead through libpq 17's non-blocking cancel
(``PQcancelCreate``, ``PQcancelStart``, ``PQcancelPoll``): the event loop
watches the cancel connection's socket, and the attempt is given up, its
socket closed, at a deadline. With an older libpq, ``PQcancel`` runs in a
daemon thread of its own, called through ctypes, which releases the GIL: the
event loop goes on and stops waiting at the deadline, and the thread ends
whenever the server answers or the connection attempt fails. Both call the
libpq psycopg2 itself uses (its ``pgconn_ptr`` is meant for ctypes), found
through psycopg2's own extension module.

Two other ways were weighed. Sending PostgreSQL's CancelRequest on an asyncio
connection needs the backend's secret key, which psycopg2 does not expose
(``connection.info`` has the pid only). ``pg_cancel_backend(pid)`` over a
connection of its own costs an authenticated backend per cancel and fails when
the role or the server has no connection left, where a cancel request needs
none.

The cancel key is read from the connection when the attempt starts, so the
caller may close the connection meanwhile. A cancel the server has not
acknowledged may still reach it later: the query runner never hands such a
connection to another request (``query_runner.StreamingQuery._abandon``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import threading
from typing import Any

import psycopg2._psycopg

from gateway.contract.background import keep_running
from gateway.contract.waiting import wait_until

_libpq = ctypes.CDLL(psycopg2._psycopg.__file__)  # dlsym through the extension finds the libpq it links
_libpq.PQgetCancel.restype = ctypes.c_void_p
_libpq.PQgetCancel.argtypes = [ctypes.c_void_p]
_libpq.PQcancel.restype = ctypes.c_int
_libpq.PQcancel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
_libpq.PQfreeCancel.restype = None
_libpq.PQfreeCancel.argtypes = [ctypes.c_void_p]

NONBLOCKING_CANCEL = hasattr(_libpq, "PQcancelCreate")
"""Whether the libpq psycopg2 uses has the non-blocking cancel (libpq 17 and later)."""

if NONBLOCKING_CANCEL:
    _libpq.PQcancelCreate.restype = ctypes.c_void_p
    _libpq.PQcancelCreate.argtypes = [ctypes.c_void_p]
    for _name in ("PQcancelStart", "PQcancelPoll", "PQcancelSocket"):
        getattr(_libpq, _name).restype = ctypes.c_int
        getattr(_libpq, _name).argtypes = [ctypes.c_void_p]
    _libpq.PQcancelErrorMessage.restype = ctypes.c_char_p
    _libpq.PQcancelErrorMessage.argtypes = [ctypes.c_void_p]
    _libpq.PQcancelFinish.restype = None
    _libpq.PQcancelFinish.argtypes = [ctypes.c_void_p]

# PostgresPollingStatusType, from libpq-fe.h
_POLLING_FAILED, _POLLING_READING, _POLLING_WRITING, _POLLING_OK = 0, 1, 2, 3

NO_ANSWER = "the database did not acknowledge the cancel request in time"


def start_cancel(raw: Any, deadline: float, *, nonblocking: bool = NONBLOCKING_CANCEL) -> asyncio.Future[str | None]:
    """Ask the server to cancel what runs on ``raw`` (a psycopg2 connection); never blocks.

    The future ends by the event loop's ``deadline`` at the latest: ``None`` once
    the server took the request, else why not (for the log). ``nonblocking``
    chooses the way (the default: libpq 17's non-blocking cancel when there is
    one); the thread is there for older libpq versions.
    """
    if raw.closed:
        return _settled("the connection is closed")
    if nonblocking:
        return _cancel_nonblocking(raw.pgconn_ptr, deadline)
    return _cancel_in_thread(raw.pgconn_ptr, deadline)


def _settled(outcome: str | None) -> asyncio.Future[str | None]:
    future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    future.set_result(outcome)
    return future


def _cancel_nonblocking(pgconn: int, deadline: float) -> asyncio.Future[str | None]:
    cancel = _libpq.PQcancelCreate(pgconn)  # copies the key and the server's address: no I/O
    if not cancel:
        return _settled("out of memory")
    if not _libpq.PQcancelStart(cancel):  # a non-blocking connect
        failure = _cancel_error(cancel)
        _libpq.PQcancelFinish(cancel)
        return _settled(failure)
    return keep_running(_finish_nonblocking(cancel, deadline))


async def _finish_nonblocking(cancel: int, deadline: float) -> str | None:
    """Poll the started cancel connection whenever its socket is ready, until it is done or ``deadline``."""
    loop = asyncio.get_running_loop()
    try:
        status = _POLLING_WRITING  # what PQcancelStart amounts to (libpq's documentation)
        while status in (_POLLING_READING, _POLLING_WRITING):
            descriptor = _libpq.PQcancelSocket(cancel)
            if descriptor < 0:
                return _cancel_error(cancel)
            if not await _socket_ready(loop, descriptor, writing=status == _POLLING_WRITING, deadline=deadline):
                return NO_ANSWER
            status = _libpq.PQcancelPoll(cancel)
        return None if status == _POLLING_OK else _cancel_error(cancel)
    finally:
        _libpq.PQcancelFinish(cancel)  # closes its socket, which the loop no longer watches


async def _socket_ready(loop: asyncio.AbstractEventLoop, descriptor: int, *, writing: bool, deadline: float) -> bool:
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    if writing:
        loop.add_writer(descriptor, wake)
    else:
        loop.add_reader(descriptor, wake)
    try:
        return await wait_until(ready, deadline)
    finally:
        if writing:
            loop.remove_writer(descriptor)
        else:
            loop.remove_reader(descriptor)


def _cancel_error(cancel: int) -> str:
    message = _libpq.PQcancelErrorMessage(cancel) or b""
    return message.decode(errors="replace").strip() or "the cancel request failed"


def _cancel_in_thread(pgconn: int, deadline: float) -> asyncio.Future[str | None]:
    loop = asyncio.get_running_loop()
    cancel = _libpq.PQgetCancel(pgconn)  # copies the key and the server's address: no I/O
    if not cancel:
        return _settled("out of memory")
    done: asyncio.Future[str | None] = loop.create_future()

    def settle(outcome: str | None) -> None:
        if not done.done():
            done.set_result(outcome)

    def run() -> None:
        message = ctypes.create_string_buffer(256)
        try:
            # A ctypes call releases the GIL: the event loop runs on however long this waits.
            acknowledged = _libpq.PQcancel(cancel, message, len(message))
        finally:
            _libpq.PQfreeCancel(cancel)
        outcome = None if acknowledged else message.value.decode(errors="replace").strip() or "the cancel failed"
        with contextlib.suppress(RuntimeError):  # the event loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=run, name="postgres-cancel", daemon=True).start()
    return keep_running(_until(done, deadline))


async def _until(done: asyncio.Future[str | None], deadline: float) -> str | None:
    if await wait_until(done, deadline):
        return done.result()
    return NO_ANSWER
