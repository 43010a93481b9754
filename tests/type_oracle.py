"""What PostgreSQL says a SELECT returns, from parse analysis alone: names, type OIDs and typmods, or the error.

The oracle never evaluates a statement, nor plans it: each statement becomes ``CREATE TEMP VIEW`` inside a
transaction that is rolled back at once, and the view's columns are read from ``pg_attribute``. A view is
parse-analysed (functions and operators resolved, unknown literals typed, ``*`` expanded) and stored, never
planned or run, so ``1/0`` or ``nextval(...)`` in a statement is typed, not computed. An unknown-type
literal in the select list becomes ``text`` in a view exactly as in a top-level SELECT (PostgreSQL >= 10).

Three things a SELECT may do that a view refuses: a column of a pseudo-type (``ROW(1, 2)`` is ``record``,
``pg_sleep(0)`` is ``void``), two columns of one name, and a column of no determinate collation
(``note_c || note_posix``). For those the oracle analyses
``WITH type_oracle_cte AS (<statement>) SELECT FROM type_oracle_cte`` as a view instead and reads the CTE's
column names, types and typmods from the view's stored query tree (``pg_rewrite.ev_action``); a CTE's
query is analysed as a top-level SELECT is (unknown literals become text there too), and
``test_guard_types.py`` checks that both ways agree on every statement a view takes.

Run it directly to see the server's answer for a statement over the fixture schema::

    .venv-test/bin/python tests/type_oracle.py "SELECT c_int2 + 1 FROM tf.t"
    .venv-test/bin/python tests/type_oracle.py --report       # the whole comparison (type_harness.py --help)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import pglast
import psycopg2
import psycopg2.extensions

VIEW = "pg_temp.type_oracle_probe"
CTE = "type_oracle_cte"
STATEMENT_TIMEOUT = "5s"
"""A safety net only: parse analysis of a generated statement takes well under a millisecond."""

FALLBACK_SQLSTATES = frozenset({"42P16", "42701", "42P22"})
"""A view's own refusals: a column of a pseudo-type (42P16), a column name used twice (42701), a text
column whose collation is indeterminate (42P22: two conflicting implicit collations)."""

Kind = Literal["typed", "error", "unsupported", "crash"]


@dataclass(frozen=True)
class Column:
    """One result column: its name, type OID and typmod (-1: none)."""

    name: str
    type: int
    typmod: int


@dataclass(frozen=True)
class Answer:
    """What one side (the server or a model) says of one statement."""

    kind: Kind
    columns: tuple[Column, ...] = ()
    """The result columns, when ``kind`` is ``typed``."""
    message: str = ""
    """The error (``error``), what is not supported (``unsupported``) or the exception (``crash``)."""
    sqlstate: str = ""
    """The server's SQLSTATE of an error; empty for a model's answer."""
    via: str = ""
    """How the server's answer was had: ``view`` or ``cte``; empty for a model's answer."""

    @classmethod
    def typed(cls, columns: Iterable[tuple[str, int, int]], via: str = "") -> Answer:
        return cls("typed", tuple(Column(name, type_, typmod) for name, type_, typmod in columns), via=via)

    @classmethod
    def error(cls, message: str, sqlstate: str = "", via: str = "") -> Answer:
        return cls("error", message=message, sqlstate=sqlstate, via=via)


class TypeOracle:
    """Asks one database (which holds the fixture schema) for the result columns of statements."""

    def __init__(self, connection: psycopg2.extensions.connection) -> None:
        if not connection.autocommit:
            raise ValueError("the oracle runs its own BEGIN and ROLLBACK: give it an autocommit connection")
        self.connection = connection
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = %s", (STATEMENT_TIMEOUT,))

    def describe_all(self, statements: Iterable[str]) -> list[Answer]:
        """The server's answer for each statement, in order (two round trips each)."""
        return [self.describe(statement) for statement in statements]

    def describe(self, statement: str) -> Answer:
        """The server's answer for one SELECT statement: its columns, or the error parse analysis raises."""
        check_one_select(statement)
        answer = self._view(statement)
        if answer.kind == "error" and answer.sqlstate in FALLBACK_SQLSTATES:
            return self.describe_as_cte(statement)
        return answer

    def describe_as_cte(self, statement: str) -> Answer:
        """The answer read from the stored query tree of ``WITH cte AS (statement) SELECT FROM cte``."""
        check_one_select(statement)
        wrapped = f"WITH {CTE} AS (\n{statement}\n) SELECT FROM {CTE}"
        found = self._run(
            f"CREATE TEMP VIEW {VIEW} AS {wrapped}\n;"
            f"SELECT ev_action FROM pg_catalog.pg_rewrite WHERE ev_class = '{VIEW}'::pg_catalog.regclass",
            via="cte",
        )
        if isinstance(found, Answer):
            return found
        return Answer.typed(cte_columns(found[0][0]), via="cte")

    def _view(self, statement: str) -> Answer:
        found = self._run(
            f"CREATE TEMP VIEW {VIEW} AS {statement}\n;"
            "SELECT attname, atttypid, atttypmod FROM pg_catalog.pg_attribute"
            f" WHERE attrelid = '{VIEW}'::pg_catalog.regclass AND attnum > 0 ORDER BY attnum",
            via="view",
        )
        if isinstance(found, Answer):
            return found
        return Answer.typed(((str(name), int(oid), int(typmod)) for name, oid, typmod in found), via="view")

    def _run(self, sql: str, via: str) -> list[tuple[object, ...]] | Answer:
        """Run ``sql`` in a transaction that is always rolled back; its last result's rows, or the error."""
        with self.connection.cursor() as cursor:
            try:
                cursor.execute("BEGIN;" + sql)
                return cursor.fetchall()
            except psycopg2.Error as error:
                if error.pgcode is None:
                    raise
                return Answer.error(error.diag.message_primary or str(error), error.pgcode, via=via)
            finally:
                cursor.execute("ROLLBACK")


def check_one_select(statement: str) -> None:
    """Refuse anything but one SELECT (or VALUES) statement: the oracle splices it into its own SQL."""
    try:
        parsed = pglast.parse_sql(statement)
    except pglast.parser.ParseError as error:
        raise ValueError(f"the oracle takes one SELECT statement; this one does not parse ({error}): {statement!r}")
    if len(parsed) != 1 or type(parsed[0].stmt).__name__ != "SelectStmt":
        raise ValueError(f"the oracle takes one SELECT statement, not: {statement!r}")


_TOKEN = re.compile(r"[(){}]|(?:\\.|[^\s(){}\\])+")


def cte_columns(node_tree: str) -> list[tuple[str, int, int]]:
    """The outermost CTE's column names, types and typmods in a view's ``ev_action`` (a node tree's text).

    The outer CTE's ``:ctecolnames`` comes after its whole query, nested CTEs included, and the outer
    query (``SELECT FROM cte``) has no CTE of its own, so the last ``:ctecolnames`` is the one wanted.
    """
    tokens = _TOKEN.findall(node_tree)
    start = len(tokens) - 1 - tokens[::-1].index(":ctecolnames")
    fields: dict[str, list[str]] = {}
    position = start
    for field in (":ctecolnames", ":ctecoltypes", ":ctecoltypmods"):
        if tokens[position] != field:
            raise ValueError(f"unexpected node tree near {field}: {tokens[position:position + 4]}")
        values, position = _list_after(tokens, position + 1)
        fields[field] = values
    names = [_unescape(name) for name in fields[":ctecolnames"]]
    types = [int(value) for value in fields[":ctecoltypes"] if value != "o"]
    typmods = [int(value) for value in fields[":ctecoltypmods"] if value != "i"]
    if not len(names) == len(types) == len(typmods):
        raise ValueError(f"the CTE's names, types and typmods differ in number: {fields}")
    return list(zip(names, types, typmods, strict=True))


def _list_after(tokens: Sequence[str], position: int) -> tuple[list[str], int]:
    """The items of the list that starts at ``position`` (``<>`` is the empty list), and where it ends."""
    if tokens[position] == "<>":
        return [], position + 1
    end = tokens.index(")", position)
    return list(tokens[position + 1 : end]), end + 1


def _unescape(token: str) -> str:
    """A String node's text: its quotes taken off and outToken's backslashes undone."""
    inner = token[1:-1] if len(token) >= 2 and token[0] == token[-1] == '"' else token
    return re.sub(r"\\(.)", r"\1", inner)


def main(argv: Sequence[str]) -> int:
    """``type_oracle.py SQL...``: the server's answers over a scratch fixture database; ``--report``: the harness."""
    import type_harness  # imported here: it imports this module

    if not argv or argv[0] in {"-h", "--help"}:
        print(__doc__)
        return 0
    if argv[0] == "--report":
        return type_harness.main(list(argv[1:]))
    from type_comparison import show

    with type_harness.fixture_database() as database:
        connection = type_harness.connect(database)
        try:
            oracle = TypeOracle(connection)
            names = type_harness.TypeNames(connection)
            for statement in argv:
                print(f"{statement}\n  {show(oracle.describe(statement), names)}")
        finally:
            connection.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
