"""Statements whose ``$1``..``$n`` values travel apart from their text, bound by the server (issue 23).

psycopg2, under aiopg, has no protocol-level parameters: ``cursor.execute(sql,
values)`` splices quoted values into the text on the client. The values of a
GetData query must never be part of its text, so the query runner opens the
query's cursor through libpq itself, on the ``PGconn`` psycopg2 exposes
(``pgconn_ptr``, meant for ctypes; ``cancel.py`` calls libpq the same way):
``PQsendQueryParams`` sends ``DECLARE ... CURSOR FOR <query>`` with the values
in the Bind message, in text format, their types left to the server (OID 0),
which types each ``$n`` from its place as the guard did. The FETCHes then go
through psycopg2 as for every query, so rows are cast as always.

``send`` sends its statements in one pipeline (libpq 14 and later: ``BEGIN``,
the row cap, the ``DECLARE``, one Sync; one round trip) and returns a future
that completes when the Sync's answer is read, or fails with
``BoundStatementError`` carrying the first error's SQLSTATE, message and
context (a value the type of its ``$n`` refuses says ``unnamed portal
parameter $n`` there). The event loop watches the socket meanwhile: aiopg's
own reader, registered on it for the connection's life, would let psycopg2
read the results, so it steps aside until the Sync's answer is in. The future
is awaited like a ``statements.send`` waiter: a cancel on the server ends the
pipeline with an error, and a connection closed under it leaves it pending
(the runner stops waiting at the deadline and the callbacks touch libpq no
more once psycopg2 closed the connection).
"""

from __future__ import annotations

import asyncio
import ctypes
from collections.abc import Sequence

import aiopg
import psycopg2._psycopg
import psycopg2.extensions as pg_ext

_libpq = ctypes.CDLL(psycopg2._psycopg.__file__)  # dlsym through the extension finds the libpq it links

PIPELINES = hasattr(_libpq, "PQenterPipelineMode")
"""Whether the libpq psycopg2 uses has pipeline mode (libpq 14 and later)."""

for _name in ("PQconsumeInput", "PQisBusy", "PQflush", "PQenterPipelineMode", "PQexitPipelineMode",
              "PQpipelineSync"):
    if hasattr(_libpq, _name):
        getattr(_libpq, _name).restype = ctypes.c_int
        getattr(_libpq, _name).argtypes = [ctypes.c_void_p]
_libpq.PQsendQueryParams.restype = ctypes.c_int
_libpq.PQsendQueryParams.argtypes = [
    ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
]
_libpq.PQgetResult.restype = ctypes.c_void_p
_libpq.PQgetResult.argtypes = [ctypes.c_void_p]
_libpq.PQresultStatus.restype = ctypes.c_int
_libpq.PQresultStatus.argtypes = [ctypes.c_void_p]
_libpq.PQresultErrorField.restype = ctypes.c_char_p
_libpq.PQresultErrorField.argtypes = [ctypes.c_void_p, ctypes.c_int]
_libpq.PQclear.restype = None
_libpq.PQclear.argtypes = [ctypes.c_void_p]
_libpq.PQerrorMessage.restype = ctypes.c_char_p
_libpq.PQerrorMessage.argtypes = [ctypes.c_void_p]

# ExecStatusType and the error fields, from libpq-fe.h and postgres_ext.h
_FATAL_ERROR, _PIPELINE_SYNC = 7, 10
_SQLSTATE, _PRIMARY, _CONTEXT = ord("C"), ord("M"), ord("W")


class BoundStatementError(Exception):
    """A statement of the pipeline failed (or the connection did): the server's SQLSTATE, message, context."""

    def __init__(self, sqlstate: str, message: str, context: str = "") -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        """Empty when the connection, not a statement, failed."""
        self.message = message
        self.context = context


Statement = tuple[str, Sequence[str | None]]
"""A statement's text and the values of its ``$1``..``$n`` (None: NULL)."""


def send(connection: aiopg.Connection, statements: Sequence[Statement]) -> asyncio.Future[None]:
    """Send ``statements`` in one pipeline on ``connection`` (idle, nothing in flight); see the module.

    Raises at once ``BoundStatementError`` when nothing could be sent (a closed connection, no pipeline mode)
    and ``ValueError`` for a NUL character in a text or a value (libpq reads them as C strings).
    """
    raw = connection.raw
    if raw.closed:
        raise BoundStatementError("", "the connection is closed")
    if not PIPELINES:
        raise BoundStatementError("", "query parameters need libpq 14 or later under psycopg2")
    encoding = pg_ext.encodings.get(raw.encoding, "utf-8")
    encoded = [(_encoded(text, encoding), [None if v is None else _encoded(v, encoding) for v in values])
               for text, values in statements]
    pgconn = raw.pgconn_ptr
    if not _libpq.PQenterPipelineMode(pgconn):
        raise BoundStatementError("", _connection_error(pgconn))
    for text, values in encoded:
        array = (ctypes.c_char_p * max(1, len(values)))(*values)
        if not _libpq.PQsendQueryParams(pgconn, text, len(values), None, array, None, None, 0):
            raise _unusable(connection, _connection_error(pgconn))
    if not _libpq.PQpipelineSync(pgconn):
        raise _unusable(connection, _connection_error(pgconn))
    return _Exchange(connection).future


def _unusable(connection: aiopg.Connection, failure: str) -> BoundStatementError:
    """A pipeline that failed half-way leaves libpq in a state psycopg2 does not know: the connection is closed
    (the runner answers the closed connection's failure as the database's unavailability)."""
    connection.close()
    return BoundStatementError("", failure)


def _encoded(text: str, encoding: str) -> bytes:
    if "\x00" in text:
        raise ValueError("A string literal cannot contain NUL (0x00) characters.")
    return text.encode(encoding)


def _connection_error(pgconn: int) -> str:
    message = _libpq.PQerrorMessage(pgconn) or b""
    return message.decode(errors="replace").strip() or "libpq refused the statement"


class _Exchange:
    """Flushes the pipeline and reads its results on the event loop, aiopg's reader set aside meanwhile."""

    def __init__(self, connection: aiopg.Connection) -> None:
        self._connection = connection
        self._loop = asyncio.get_running_loop()
        self.future: asyncio.Future[None] = self._loop.create_future()
        self._descriptor = connection.raw.fileno()
        self._error: BoundStatementError | None = None
        self._writing = False
        self._loop.remove_reader(self._descriptor)  # aiopg's _ready: psycopg2 would take our results
        self._loop.add_reader(self._descriptor, self._readable)
        self._flush()

    def _flush(self) -> None:
        if self._connection.raw.closed:
            return self._abandoned()
        pending = _libpq.PQflush(self._connection.raw.pgconn_ptr)
        if pending < 0:
            return self._finish(BoundStatementError("", _connection_error(self._connection.raw.pgconn_ptr)))
        if pending and not self._writing:
            self._loop.add_writer(self._descriptor, self._flush)
            self._writing = True
        elif not pending and self._writing:
            self._loop.remove_writer(self._descriptor)
            self._writing = False
        return None

    def _readable(self) -> None:
        raw = self._connection.raw
        if raw.closed:  # psycopg2 freed the PGconn: never touch it again
            return self._abandoned()
        pgconn = raw.pgconn_ptr
        if not _libpq.PQconsumeInput(pgconn):
            return self._finish(BoundStatementError("", _connection_error(pgconn)))
        if self._writing:
            self._flush()  # libpq may need to write before the server can answer more
        empty_in_a_row = 0
        while not _libpq.PQisBusy(pgconn):
            result = _libpq.PQgetResult(pgconn)
            if not result:  # the end of one statement's results
                empty_in_a_row += 1
                if empty_in_a_row > 1:  # nothing more will come: the Sync's answer was lost
                    return self._finish(BoundStatementError("", "the pipeline ended without its Sync"))
                continue
            empty_in_a_row = 0
            status = _libpq.PQresultStatus(result)
            if status == _FATAL_ERROR and self._error is None:
                self._error = BoundStatementError(*(_field(result, code) for code in (_SQLSTATE, _PRIMARY, _CONTEXT)))
            _libpq.PQclear(result)
            if status == _PIPELINE_SYNC:
                _libpq.PQexitPipelineMode(pgconn)
                return self._finish(self._error)
        return None

    def _finish(self, error: BoundStatementError | None) -> None:
        self._stop_watching()
        if not self._connection.closed:
            connection = self._connection
            self._loop.add_reader(self._descriptor, connection._ready, connection._weakref)  # noqa: SLF001
        if not self.future.done():
            if error is None:
                self.future.set_result(None)
            else:
                self.future.set_exception(error)

    def _abandoned(self) -> None:
        """The connection was closed under the exchange: aiopg's close removed the reader (the loop keeps one
        per descriptor); the writer is ours alone. The future stays pending: the runner stops at its deadline."""
        if self._writing:
            self._loop.remove_writer(self._descriptor)
            self._writing = False

    def _stop_watching(self) -> None:
        self._loop.remove_reader(self._descriptor)
        if self._writing:
            self._loop.remove_writer(self._descriptor)
            self._writing = False


def _field(result: int, code: int) -> str:
    value = _libpq.PQresultErrorField(result, code)
    return value.decode("utf-8", errors="replace") if value else ""
