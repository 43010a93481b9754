"""``SQLitePool``: one SQLite file, each query on a fresh read-only connection in a worker thread.

The file is opened with ``mode=ro``, so SQLite itself refuses every write.
``check_query`` compiles the statement under the token's grants (``grants.py``)
before any work (and refuses parameter values: this example binds none); ``execute`` sets the same authorizer again on the connection
that runs it.

Slots, the acquire time limit, the statement timer, cancel and fetching are
``gateway.contract.threaded_pool.ThreadedPool``'s: sqlite3 blocks, so every call
runs in the pool's worker threads, and the timer and a cancelled request both
call ``Connection.interrupt()``, the one sqlite3 call meant for another thread.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

from dbgateway_sqlite.grants import FOLDER, GrantsAuthorizer, SQLiteQuery, check_statement, names_in_file
from gateway.contract.driver_protocol import CatalogTable, ColumnInfo, PoolLimits, Row, TableKind, TableRef
from gateway.contract.threaded_pool import ThreadedPool
from gateway.errors import DatabaseUnavailable, QueryRejected, RefusalReason

_CATALOG_SQL = (
    "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite~_%' ESCAPE '~'"
)
_KINDS = {"table": TableKind.TABLE, "view": TableKind.VIEW}


class SQLitePool(ThreadedPool[sqlite3.Connection, SQLiteQuery]):
    """Implements ``gateway.contract.driver_protocol.DatabasePool`` for one SQLite file."""

    database_errors = (sqlite3.Error,)

    def __init__(
        self, path: Path, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger, directory: Path | None
    ) -> None:
        super().__init__(limits, logger)
        self._path = path
        self._directory = directory

    def connect(self) -> sqlite3.Connection:
        if self._directory is None:
            raise DatabaseUnavailable(
                "the sqlite driver serves no file until [drivers.sqlite] directory names the folder it may read"
            )
        if not self._path.is_absolute():
            raise DatabaseUnavailable(f"the SQLite file must be given as an absolute path, not {str(self._path)!r}")
        # Resolved at every open, links and ".." followed: a link made inside the folder later cannot lead out.
        resolved = self._path.resolve()
        if not resolved.is_relative_to(self._directory):
            raise DatabaseUnavailable(f"the SQLite file must be inside {str(self._directory)!r} ([drivers.sqlite] directory)")
        # isolation_level=None: no implicit BEGIN, so no transaction outlives a statement.
        return sqlite3.connect(
            resolved.as_uri() + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )

    def interrupt(self, connection: sqlite3.Connection) -> None:
        connection.interrupt()

    def unavailable(self, error: BaseException) -> DatabaseUnavailable:
        return DatabaseUnavailable(f"cannot read the SQLite file {str(self._path)!r}: {error}")

    async def _read(self, sql: str, *parameters: Any) -> list[Any]:
        """Rows of one statement of the driver's own (no authorizer), on a connection of its own."""
        return await self.on_connection(lambda connection: connection.execute(sql, parameters).fetchall())

    async def check(self) -> None:
        await self._read("SELECT count(*) FROM sqlite_master")  # fails on a file that is not SQLite's

    async def read_catalog(self) -> list[CatalogTable]:
        return [CatalogTable(FOLDER, name, _KINDS[kind]) for name, kind in await self._read(_CATALOG_SQL)]

    async def describe_table(self, folder: str, table: str) -> list[ColumnInfo] | None:
        if folder != FOLDER:
            return None
        columns = await self._read("SELECT name, type FROM pragma_table_info(?)", table)
        return [ColumnInfo(name, type_name) for name, type_name in columns] or None

    async def check_query(
        self, sql: str, granted: frozenset[TableRef], *, parameters: Sequence[str | None] = ()
    ) -> SQLiteQuery:
        if parameters:
            # SQLite could bind them, but its parameters ($1 is a *named* one there) do not count as PostgreSQL's:
            # an example driver refuses them plainly rather than bind values to the wrong places.
            raise QueryRejected(
                "this database's driver (sqlite) takes no parameter values (params / param): write the values "
                "into the query", reason=RefusalReason.CONSTRUCT,
            )
        # A statement's own errors are answered by check_statement; on_connection's are reading the schema's.
        return await self.on_connection(lambda connection: check_statement(connection, sql, granted))

    def execute(self, connection: sqlite3.Connection, checked: SQLiteQuery) -> SQLiteStatement:
        # Again: the check ran on another connection.
        connection.set_authorizer(GrantsAuthorizer(checked.granted, names_in_file(connection)))
        return SQLiteStatement(connection.execute(checked.sql))


class SQLiteStatement:
    """A running statement's cursor (the base's ``Statement``): rows as ``Row`` values, columns typed by the first."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor
        self._classes: list[str] | None = None

    def fetch(self, size: int) -> list[Row]:
        rows = self._cursor.fetchmany(size)
        if self._classes is None:
            # SQLite has no result types; the first row's storage classes are the honest answer ("" without rows).
            self._classes = [_storage_class(value) for value in rows[0]] if rows else []
        return [_row(row) for row in rows]  # converted in the worker, off the event loop

    @property
    def columns(self) -> list[ColumnInfo]:
        description = self._cursor.description or ()
        classes = self._classes or [""] * len(description)
        # The database's own names, repeats and all: the gateway makes them unique.
        return [ColumnInfo(column[0], type_name) for column, type_name in zip(description, classes)]


def _row(row: Sequence[Any]) -> list[Any]:
    return [_json_value(value) for value in row]


def _json_value(value: Any) -> Any:
    """One SQLite value (NULL, INTEGER, REAL, TEXT or BLOB) as a value ``driver_protocol.Row`` allows."""
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no infinities; PostgreSQL's driver spells them like this too. (SQLite stores NaN as NULL.)
        return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, bytes):
        return "\\x" + value.hex()  # as PostgreSQL prints bytea
    return value


def _storage_class(value: Any) -> str:
    return {int: "integer", float: "real", str: "text", bytes: "blob"}.get(type(value), "null")
