"""What a GetData statement may do on SQLite: read granted tables, nothing else (``check_statement``).

Two checks, both on SQLite's own compiler rather than on the text:

1. an authorizer (``GrantsAuthorizer``) that SQLite consults for every table,
   column and action while compiling: reading granted relations is allowed,
   everything else denied (writes, PRAGMA, ATTACH, temporary objects...);
2. the compiled program (``EXPLAIN``, which runs nothing): every table whose
   b-tree it opens must be granted. The authorizer alone misses a table joined
   ``USING`` or ``NATURAL`` whose columns the query never names.

A granted view is read only when the tables it reads are granted too: the
program shows which tables a statement opens, not through which view.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from typing import Any

import attrs

from gateway.contract.driver_protocol import TableRef
from gateway.errors import QueryFailed, QueryRejected, RefusalReason

FOLDER = "main"
"""The one folder: SQLite's name for the file's own schema (ATTACH, which would add others, is denied)."""

_NAMES_SQL = "SELECT lower(name) FROM sqlite_master WHERE type IN ('table', 'view')"
_PAGES_SQL = "SELECT rootpage, tbl_name FROM sqlite_master WHERE rootpage > 0"
_OPENING_OPCODES = {"OpenRead", "ReopenIdx", "OpenWrite"}
_ALWAYS_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}


@attrs.frozen
class SQLiteQuery:
    """A query ``check_query`` compiled under the token's grants (the gateway's ``CheckedQuery``)."""

    sql: str
    """The text as sent; it runs unchanged."""
    granted: frozenset[TableRef]
    """The token's grants, for the authorizer of the connection that runs it."""
    relations: frozenset[TableRef]
    """Every table or view the statement reads itself (not those a granted view reads for it)."""
    fingerprint: str
    """Of the text without constants, comments and layout (``fingerprint``)."""


class GrantsAuthorizer:
    """SQLite's authorizer callback: reading granted relations is all a statement may do."""

    def __init__(self, granted: frozenset[TableRef], names_in_file: frozenset[str]) -> None:
        # SQLite matches names case-insensitively (ASCII): FROM ITEMS reads the table the catalog calls items.
        self.granted = {table.lower(): (folder, table) for folder, table in granted if folder == FOLDER}
        self.names_in_file = names_in_file
        """Lower-cased names of the file's tables and views."""
        self.read: set[TableRef] = set()
        """Granted relations the statement reads itself (the audit's ``relations``)."""
        self.refusal: QueryRejected | None = None
        """Why the last denial denied, for a message better than SQLite's "not authorized"."""

    def __call__(
        self, action: int, first: str | None, second: str | None, database: str | None, via: str | None
    ) -> int:
        if action in _ALWAYS_ALLOWED:
            return sqlite3.SQLITE_OK
        if action != sqlite3.SQLITE_READ or first is None:
            # Writes, PRAGMA, ATTACH, transactions, schema changes, temporary objects: none of them is a read.
            self.refusal = QueryRejected(
                "only one SELECT reading granted tables is allowed", reason=RefusalReason.STATEMENT
            )
            return sqlite3.SQLITE_DENY
        if via is not None and via.lower() not in self.granted:
            self.refusal = not_granted(via)  # the view as the query names it, never a table behind it
            return sqlite3.SQLITE_DENY
        # A relation read for its row count only (count(*)) comes without database or column, and so
        # does a WITH query's or a subquery's name: those read no table, but a name in the file does.
        if database is None and not second and first.lower() not in self.names_in_file:
            return sqlite3.SQLITE_OK
        relation = self.granted.get(first.lower()) if database in (None, FOLDER) else None
        if relation is None:
            # Kept simple: a granted view is read only when the tables it reads are granted too.
            self.refusal = not_granted(first) if via is None else QueryRejected(
                f'view "{via}" reads a table not granted to this token', reason=RefusalReason.NOT_GRANTED
            )
            return sqlite3.SQLITE_DENY
        if via is None:
            self.read.add(relation)
        return sqlite3.SQLITE_OK


def opened_tables(program: list[Any], table_of_page: dict[int, str]) -> set[str]:
    """Every table whose b-tree (or an index of it) the compiled program opens, from EXPLAIN's rows."""
    return {
        table_of_page.get(page, "sqlite_master") if database == 0 else f"temp.{page}"
        for _, opcode, _, page, database, *_ in program
        if opcode in _OPENING_OPCODES
    }


def names_in_file(connection: sqlite3.Connection) -> frozenset[str]:
    return frozenset(name for (name,) in connection.execute(_NAMES_SQL))


def not_granted(table: str) -> QueryRejected:
    # Worded the same for a table that does not exist: a token holder learns no table name.
    return QueryRejected(f'table "{table}" is not granted to this token', reason=RefusalReason.NOT_GRANTED)


_SKIPPED = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?(?:\*/|$)|\b\d+(?:\.\d*)?(?:e[-+]?\d+)?\b", re.S | re.I)


def fingerprint(sql: str) -> str:
    """The same for texts that differ only in string and number constants, comments, spacing and case."""
    normalised = _SKIPPED.sub(lambda m: " " if m.group().startswith(("-", "/")) else "?", sql)
    return hashlib.sha256(" ".join(normalised.lower().split()).encode()).hexdigest()[:16]


def compile_error(error: Exception, authorizer: GrantsAuthorizer) -> Exception:
    """What to answer for a statement SQLite would not compile."""
    message = str(error)
    if authorizer.refusal is not None:
        return authorizer.refusal
    if message.startswith("no such table: "):
        return not_granted(message.removeprefix("no such table: ").removeprefix(f"{FOLDER}."))
    if isinstance(error, sqlite3.ProgrammingError) and "one statement" in message:
        return QueryRejected("only one statement is allowed", reason=RefusalReason.STATEMENT)
    if isinstance(error, ValueError) or "syntax error" in message or "incomplete input" in message:
        return QueryRejected(f"the query does not parse: {message}", reason=RefusalReason.SYNTAX)
    return QueryFailed(f"the database refused the query: {message[:1024]}")


def check_statement(connection: sqlite3.Connection, sql: str, granted: frozenset[TableRef]) -> SQLiteQuery:
    """Compile ``sql`` on ``connection`` (a fresh one: the authorizer stays set) and refuse what is not allowed."""
    authorizer = GrantsAuthorizer(granted, names_in_file(connection))
    table_of_page = dict(connection.execute(_PAGES_SQL).fetchall())
    connection.set_authorizer(authorizer)
    try:
        # Compiled (and authorized) in full, but not run: EXPLAIN lists the program instead.
        program = connection.execute("EXPLAIN " + sql).fetchall()
    except (sqlite3.Error, ValueError) as error:  # ValueError: a NUL in the text
        raise compile_error(error, authorizer) from None
    opened = opened_tables(program, table_of_page)
    for table in sorted(opened):
        if table.lower() not in authorizer.granted:
            raise not_granted(table)
    authorizer.read.update(authorizer.granted[table.lower()] for table in opened)
    return SQLiteQuery(sql, granted, frozenset(authorizer.read), fingerprint(sql))
