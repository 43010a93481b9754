"""The type model's entry point: one SELECT text in, the analysed query out (types only, no safety policy).

``analyze(sql, catalog)`` parses the text with pglast (PostgreSQL's own
parser) and runs the analyser, which resolves every name and types every
expression as PostgreSQL's parse analysis would against the same catalog.
It raises ``AnalysisError`` where PostgreSQL would raise an error, and
``Unsupported`` for what the model does not follow. The safety checks
(``checks.py``) read the analysed query; the differential test
(``tests/test_guard_types.py``) compares its output types with the server's.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import attrs
import orjson
from pglast import parser

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.calls import Calls
from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.clauses import Clauses
from drivers.postgres.guard.model.coerce import Coercing
from drivers.postgres.guard.model.coercion import Coercions
from drivers.postgres.guard.model.columns import Columns
from drivers.postgres.guard.model.expressions import Expressions, unwrap
from drivers.postgres.guard.model.from_clause import FromClause
from drivers.postgres.guard.model.ir import Query
from drivers.postgres.guard.model.operators import Operators
from drivers.postgres.guard.model.resolution import Resolver
from drivers.postgres.guard.model.scope import ParseState
from drivers.postgres.guard.model.selects import Selects
from drivers.postgres.guard.model.types import UNKNOWN

MAX_NESTING = 1000
"""Deepest expression nesting the analyser follows (it recurses; PostgreSQL's own limit is its stack)."""

# Each level of SQL nesting takes a few Python frames of the analyser.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 8 * MAX_NESTING + 1000))


@attrs.frozen
class OutputColumn:
    """One result column: its name, type OID and typmod, as the server's RowDescription would give them."""

    name: str
    type: int
    typmod: int


@attrs.frozen
class Analysis:
    """One analysed SELECT."""

    query: Query
    """The analysed query."""
    columns: tuple[OutputColumn, ...]
    """The result columns."""


class Analyzer(Selects, Clauses, FromClause, Calls, Operators, Columns, Expressions, Coercing):
    """PostgreSQL's parse analysis for one SELECT, over one catalog."""

    def __init__(self, catalog: Catalog, coercions: Coercions | None = None,
                 parameters: Sequence[str | None] = ()) -> None:
        self.catalog = catalog
        self.coercions = coercions or Coercions(catalog)
        self.resolver = Resolver(catalog, self.coercions)
        self.value_locations: set[int] = set()
        """Byte locations of numeric constants whose value the analysis read (``ORDER BY 2``: a position)."""
        self.parameter_values = tuple(parameters)
        self.parameter_types = []

    def analyze_statement(self, statement: dict) -> Query:
        """Analyse one raw SelectStmt body; every ``$n`` must end with a deduced type (``check_variable_parameters``),
        and every value sent must be one the query uses."""
        query = self.statement(statement, ParseState())
        for number, type_oid in enumerate(self.parameter_types, start=1):
            if type_oid == UNKNOWN:
                raise AnalysisError(f"could not determine data type of parameter ${number}")
        if len(self.parameter_values) > len(self.parameter_types):
            raise AnalysisError(f"{len(self.parameter_values)} parameters were sent, but the query uses "
                                f"{len(self.parameter_types)}")
        return query


def parse_select(sql: str) -> dict:
    """The raw tree of the one SELECT ``sql`` holds, or ``AnalysisError``/``Unsupported``."""
    try:
        tree = orjson.loads(parser.parse_sql_json(sql))
    except parser.ParseError as error:
        raise AnalysisError(str(error.args[0]) if error.args else "syntax error") from None
    except orjson.JSONDecodeError:
        raise Unsupported("the query is nested too deeply to be checked") from None
    statements = tree.get("stmts", [])
    if len(statements) != 1:
        raise Unsupported("exactly one statement is expected")
    kind, body = unwrap(statements[0]["stmt"])
    if kind != "SelectStmt":
        raise Unsupported(f"{kind} is not a SELECT")
    return body  # type: ignore[no-any-return]


def analyze(sql: str, catalog: Catalog, analyzer: Analyzer | None = None) -> Analysis:
    """Resolve and type one SELECT as PostgreSQL would; raise where PostgreSQL would raise."""
    body = parse_select(sql)
    try:
        query = (analyzer or Analyzer(catalog)).analyze_statement(body)
    except RecursionError:
        raise Unsupported("the query is nested too deeply to be checked") from None
    columns = tuple(OutputColumn(name, type_oid, typmod) for name, type_oid, typmod in query.columns)
    return Analysis(query, columns)
