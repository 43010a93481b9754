"""Statements sent on an aiopg connection and awaited without a task each: the query runner's round trip.

aiopg's ``Cursor.execute`` waits through ``Connection._poll``, which closes the
connection when the task awaiting it is cancelled or its time-out passes. The
gateway must instead cancel the statement on the server and keep the
connection, so each statement used to run in a task of its own that the
runner waited on: a task, an ``asyncio.wait`` and aiopg's ``wait_for`` per
statement, about a tenth of a point lookup's CPU (docs/performance.md).

Here the runner holds aiopg's waiter itself. ``send`` registers a waiter on
the connection exactly as ``Cursor.execute`` does (``_create_waiter``), starts
the statement on the psycopg2 cursor, and lets aiopg's reader callback
(``_ready``, registered on the socket for the connection's life) drive it:
that callback completes the waiter when the result is in, or fails it with the
database's error (a server-side cancel arrives as ``QueryCanceledError``, not
as aiopg's ``CancelledError``). ``gateway.contract.waiting.wait_until`` waits for the
waiter or a deadline without ever cancelling it, so a request that is cancelled
leaves the statement in flight for the runner to cancel on the server. ``forget`` clears
the connection's waiter once its outcome is read, so aiopg's own calls (the
closing COMMIT) can run on it again.

These are names aiopg does not document (``_create_waiter``, ``_ready``,
``_weakref``, ``_waiter``); pyproject.toml pins aiopg to 1.4.x, its last
release, and every query of the test suite goes through here.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiopg


def send(connection: aiopg.Connection, cursor: Any, statement: str) -> asyncio.Future[None]:
    """Start ``statement`` on ``cursor`` (a psycopg2 cursor of ``connection``); the future completes with it.

    Raises at once what psycopg2 raises before sending: ``ValueError`` for a
    NUL character in the text, ``psycopg2.Error`` for a closed connection, and
    ``RuntimeError`` if the connection already has a statement in flight.
    """
    waiter: asyncio.Future[None] = connection._create_waiter("statements.send")  # noqa: SLF001
    try:
        cursor.execute(statement)
    except BaseException:
        connection._waiter = None  # noqa: SLF001 - nothing was sent: the connection is free again
        raise
    connection._ready(connection._weakref)  # noqa: SLF001 - aiopg's own first poll, as Cursor.execute does
    return waiter


def forget(connection: aiopg.Connection, waiter: asyncio.Future[None]) -> None:
    """Clear ``waiter`` from ``connection`` once its statement is over (or the connection was closed)."""
    if connection._waiter is waiter:  # noqa: SLF001
        connection._waiter = None  # noqa: SLF001
