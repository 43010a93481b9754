"""How PostgreSQL failures during a query become the gateway's errors.

A statement's psycopg2 error is the query's fault (``QueryFailed``, with the
database's own primary message), the time limit's (``QueryTimeout``), or the
connection's (``DatabaseUnavailable``). aiopg also logs every statement
cancelled on the server; ``CanceledStatementLogFilter`` drops that noise.
"""

from __future__ import annotations

import logging
import re

import aiopg
import psycopg2
import psycopg2.extensions as pg_ext

from drivers.postgres.connections.acquire import first_line
from drivers.postgres.connections.bound import BoundStatementError
from gateway.contract.driver_protocol import PoolLimits
from gateway.errors import DatabaseUnavailable, GatewayError, QueryFailed, QueryTimeout

_UNAVAILABLE_SQLSTATE_PREFIXES = ("08", "53", "57P", "58")
"""Connection exception, insufficient resources, operator intervention, system error: not the query's fault."""


class CanceledStatementLogFilter(logging.Filter):
    """Drops the error record aiopg has asyncio log for every statement cancelled on the server.

    Install once on the ``asyncio`` logger; the runner already answers such a
    statement with ``QueryTimeout`` or ends the cancelled request, so the record
    is noise with a traceback at error level.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, pg_ext.QueryCanceledError)


MAX_MESSAGE_BYTES = 1024
"""The most UTF-8 bytes of a database message passed on: an echoed literal must not make a huge error body."""


def database_message(exc: psycopg2.Error) -> str:
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None)
    return cut_message(primary or first_line(exc))


def cut_message(message: str) -> str:
    """``message`` cut to ``MAX_MESSAGE_BYTES`` of UTF-8 at a character boundary, marked when cut."""
    encoded = message.encode("utf-8", "replace")
    if len(encoded) <= MAX_MESSAGE_BYTES:
        return message
    return encoded[:MAX_MESSAGE_BYTES].decode("utf-8", "ignore") + " ... (cut)"


def timeout_error(limits: PoolLimits) -> QueryTimeout:
    return QueryTimeout(
        f"query ran longer than {limits.statement_timeout:g} s, the statement time limit, and was cancelled; "
        "narrow it down (filters, LIMIT) or ask the operator for a longer limit"
    )


def database_error(exc: psycopg2.Error, connection: aiopg.Connection, limits: PoolLimits) -> GatewayError:
    """The gateway error for a psycopg2 error raised by a statement of the query."""
    if isinstance(exc, pg_ext.QueryCanceledError):
        return timeout_error(limits)
    pgcode = exc.pgcode or ""
    if not pgcode or connection.closed or pgcode.startswith(_UNAVAILABLE_SQLSTATE_PREFIXES):
        return DatabaseUnavailable(
            f"the database connection failed while running the query: {database_message(exc)}"
        )
    return QueryFailed(f"the database refused the query: {database_message(exc)}")


_PARAMETER_CONTEXT = re.compile(r"\bparameter \$(\d+)")
"""How the server's error context names the ``$n`` whose value failed at Bind (``unnamed portal parameter $1``)."""


def bound_error(exc: BoundStatementError, connection: aiopg.Connection, limits: PoolLimits) -> GatewayError:
    """The gateway error for a failed pipeline of ``connections.bound``: a value its ``$n``'s type refuses is
    the client's to fix, and the answer names the parameter (the value is the client's own: it may show)."""
    if exc.sqlstate == "57014":
        return timeout_error(limits)
    if not exc.sqlstate or connection.closed or exc.sqlstate.startswith(_UNAVAILABLE_SQLSTATE_PREFIXES):
        return DatabaseUnavailable(f"the database connection failed while running the query: {cut_message(exc.message)}")
    named = _PARAMETER_CONTEXT.search(exc.context)
    if named is not None:
        return QueryFailed(f"parameter ${named.group(1)} was refused by the database: {cut_message(exc.message)}")
    return QueryFailed(f"the database refused the query: {cut_message(exc.message)}")
