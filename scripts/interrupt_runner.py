"""The database side of scripts/interrupt_audit.py: a scratch database and statements timed to their end.

Each statement runs on a connection of its own, opened with ``statement_timeout``
in its startup packet, and is waited for with libpq's asynchronous interface so
that a call which never returns can be abandoned: the socket is closed, the
backend's pid remembered, and the caller moves on. PostgreSQL notices a closed
client only when it next checks for interrupts, so an abandoned backend goes on
running; ``ScratchDatabase.drain`` waits for those to end before the database is
dropped.
"""

from __future__ import annotations

import enum
import secrets
import select
import time
from collections.abc import Iterable
from typing import Any

import attrs
import psycopg2
import psycopg2.extensions

APPLICATION_NAME = "dbgateway-interrupt-audit"


class Outcome(enum.Enum):
    """How one timed statement ended."""

    COMPLETED = "completed"
    """It returned its result."""
    CANCELLED = "cancelled"
    """The statement limit stopped it (SQLSTATE 57014)."""
    ERROR = "error"
    """Another error: a size limit of PostgreSQL, or a broken probe."""
    ABANDONED = "abandoned"
    """No answer within the client's own bound; the connection was closed and the backend left running."""


@attrs.frozen
class Run:
    """One statement, timed from sending it to its answer."""

    seconds: float
    """Wall time until the answer (or until it was abandoned)."""
    outcome: Outcome
    """How it ended."""
    backend_pid: int
    """The server process that ran it."""
    sqlstate: str | None = None
    """The error's SQLSTATE, for CANCELLED and ERROR."""
    message: str | None = None
    """The error's first line, for ERROR."""
    value: Any = None
    """The first column of the first row, for COMPLETED."""

    def as_json(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "outcome": self.outcome.value,
            "sqlstate": self.sqlstate,
            "message": self.message,
        }


class Abandoned(Exception):
    """The statement did not answer before the client's deadline."""


def wait_for(connection: psycopg2.extensions.connection, deadline: float) -> None:
    """Drive an asynchronous connection until its current operation is done, or raise Abandoned at deadline."""
    while True:
        state = connection.poll()
        if state == psycopg2.extensions.POLL_OK:
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Abandoned
        if state == psycopg2.extensions.POLL_READ:
            select.select([connection.fileno()], [], [], remaining)
        elif state == psycopg2.extensions.POLL_WRITE:
            select.select([], [connection.fileno()], [], remaining)
        else:  # pragma: no cover - libpq has no other states
            raise psycopg2.OperationalError(f"unexpected poll state {state}")


def first_line(error: psycopg2.Error) -> str:
    text = (error.pgerror or str(error)).strip()
    return text.splitlines()[0] if text else type(error).__name__


@attrs.define
class ScratchDatabase:
    """A database created for the audit on the server at ``dsn``, and the backends the audit abandoned in it."""

    dsn: str
    """The server (any database the account may connect to; the scratch database is created beside it)."""
    name: str = attrs.field(factory=lambda: f"dbgw_audit_{secrets.token_hex(6)}")
    """The scratch database's name."""
    abandoned: list[int] = attrs.field(factory=list)
    """Pids of backends whose statements were abandoned."""

    def admin_sql(self, sql: str, parameters: Any = None, database: str | None = None) -> list[tuple[Any, ...]]:
        """Run SQL on a short autocommit connection (to ``database``, else the DSN's own)."""
        options = psycopg2.extensions.parse_dsn(self.dsn)
        if database is not None:
            options["dbname"] = database
        connection = psycopg2.connect(**options, application_name=APPLICATION_NAME)
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, parameters)
                return cursor.fetchall() if cursor.description else []
        finally:
            connection.close()

    def create(self) -> None:
        self.admin_sql(f'CREATE DATABASE "{self.name}"')

    def timed(self, sql: str, limit_seconds: float, max_seconds: float) -> Run:
        """Run ``sql`` in the scratch database under ``statement_timeout``; abandon it after max_seconds."""
        options = psycopg2.extensions.parse_dsn(self.dsn)
        options["dbname"] = self.name
        connection = psycopg2.connect(
            **options,
            async_=True,
            application_name=APPLICATION_NAME,
            options=f"-c statement_timeout={round(limit_seconds * 1000)}",
        )
        try:
            wait_for(connection, time.monotonic() + 10)
            pid = connection.get_backend_pid()
            cursor = connection.cursor()
            started = time.monotonic()
            cursor.execute(sql)
            try:
                wait_for(connection, started + max_seconds)
            except Abandoned:
                self.abandoned.append(pid)
                return Run(time.monotonic() - started, Outcome.ABANDONED, pid)
            except KeyboardInterrupt:
                self.abandoned.append(pid)
                raise
            except psycopg2.extensions.QueryCanceledError as error:
                return Run(time.monotonic() - started, Outcome.CANCELLED, pid, error.pgcode)
            except psycopg2.Error as error:
                return Run(time.monotonic() - started, Outcome.ERROR, pid, error.pgcode, first_line(error))
            seconds = time.monotonic() - started
            first = cursor.fetchone()
            return Run(seconds, Outcome.COMPLETED, pid, value=first[0] if first else None)
        finally:
            connection.close()

    def still_running(self, pids: Iterable[int]) -> list[int]:
        wanted = list(pids)
        if not wanted:
            return []
        rows = self.admin_sql("SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)", (wanted,))
        return sorted(row[0] for row in rows)

    def drain(self, max_wait: float) -> list[int]:
        """Wait (up to max_wait seconds) for abandoned backends to end; return those still running."""
        deadline = time.monotonic() + max_wait
        running = self.still_running(self.abandoned)
        while running and time.monotonic() < deadline:
            time.sleep(0.5)
            running = self.still_running(running)
        return running

    def drop(self) -> None:
        """Drop the scratch database; FORCE ends its remaining sessions (if they heed the signal within 5 s)."""
        self.admin_sql(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


@attrs.frozen
class CatalogEntry:
    """What pg_catalog says about one probed function."""

    signature: str
    """regprocedure text, as the server prints it."""
    name: str
    """proname."""
    implementation: str
    """prosrc: the C function (or SQL body) behind it."""
    operators: tuple[str, ...]
    """Operators implemented by it, as ``left op right``."""


CATALOG_SQL = """
SELECT p.oid::regprocedure::text, p.proname::text, p.prosrc,
       coalesce(array_agg(format('%%s %%s %%s', format_type(o.oprleft, NULL), o.oprname, format_type(o.oprright, NULL))
                          ORDER BY o.oprname) FILTER (WHERE o.oid IS NOT NULL), '{}')
FROM pg_proc p LEFT JOIN pg_operator o ON o.oprcode = p.oid
WHERE p.oid = %s::regprocedure
GROUP BY p.oid, p.proname, p.prosrc
"""


def catalog_entry(database: ScratchDatabase, signature: str) -> CatalogEntry:
    """The catalog's description of ``signature`` (raises psycopg2.Error when no such function exists)."""
    [(printed, name, implementation, operators)] = database.admin_sql(CATALOG_SQL, (signature,), database.name)
    return CatalogEntry(printed, name, implementation, tuple(operators))
