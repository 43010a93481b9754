"""A row filter, checked when it is granted and written the one way the rewrite embeds it.

The administrator writes a boolean SQL expression over the granted relation's own columns
(``tenant_id = 42 AND NOT archived``). It is read by PostgreSQL's parser as the WHERE of
``SELECT 1 FROM ONLY schema.relation WHERE <filter>``, and refused unless that statement is exactly
that: one SELECT of that relation and that condition (so no ``) UNION SELECT ...`` can ride along). Its
column references lose their qualifiers (``t.tenant_id``, ``s.t.tenant_id``: the rewrite reads the relation
under the query's own alias), and it is written back by pglast's deparser. The statement then goes through
the whole guard: every function allowed, every type plain, every name a column of that relation; a
filter may not run a sub-select or a volatile function (its rows would change from one query to the next).
"""

from __future__ import annotations

from typing import Any

from pglast import ast, parse_sql, visitors
from pglast.parser import ParseError
from pglast.stream import RawStream

from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.sql_guard import check_query
from drivers.postgres.guard.structure.names import display_name
from gateway.errors import GatewayError


class RowFilterRefused(Exception):
    """The filter cannot be granted; ``message`` says why, for the administrator."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _Columns(visitors.Visitor):  # type: ignore[misc]
    """Strips the relation's own qualifiers from column references; notes any other qualifier or sub-select."""

    def __init__(self, schema: str, relation: str) -> None:
        super().__init__()
        self.allowed = ((relation,), (schema, relation))
        self.foreign: list[str] = []
        self.sub_select = False

    def visit_ColumnRef(self, ancestors: Any, node: ast.ColumnRef) -> Any:
        fields = node.fields or ()
        qualifier = tuple(getattr(field, "sval", "*") for field in fields[:-1])
        if qualifier and qualifier not in self.allowed:
            self.foreign.append(".".join(qualifier))
            return None
        return ast.ColumnRef(fields=(fields[-1],), location=node.location) if qualifier else None

    def visit_SubLink(self, ancestors: Any, node: ast.SubLink) -> None:
        self.sub_select = True


def normalized_filter(schema: str, relation: str, text: str, policy: GuardPolicy) -> str:
    """The filter as the rewrite embeds it; raises ``RowFilterRefused`` saying what to change."""
    target = f"{_quoted(schema)}.{_quoted(relation)}"
    try:
        statements = parse_sql(f"SELECT 1 FROM ONLY {target} WHERE {text}")
    except ParseError as error:
        raise RowFilterRefused(f"the row filter does not parse: {error}") from None
    statement = statements[0].stmt if len(statements) == 1 else None
    shape = [key for key in getattr(statement, "__slots__", ()) if getattr(statement, key, None) not in (None, (), 0)]
    if not isinstance(statement, ast.SelectStmt) or sorted(shape) != ["fromClause", "targetList", "whereClause"]:
        raise RowFilterRefused("the row filter must be one boolean expression over the table's columns")
    columns = _Columns(schema, relation)
    columns(statement)
    if columns.foreign:
        raise RowFilterRefused(f"the row filter may name columns of {display_name(schema, relation)} only, "
                               f"not of {columns.foreign[0]}")
    if columns.sub_select:
        raise RowFilterRefused("the row filter may not hold a sub-select")
    assert statement.whereClause is not None  # the shape above
    normalized = RawStream()(statement.whereClause)
    try:
        parsed = check_query(f"SELECT 1 FROM ONLY {target} WHERE ({normalized})", frozenset({(schema, relation)}),
                             policy)
    except GatewayError as error:
        raise RowFilterRefused(f"the row filter is refused: {error.message}") from None
    volatile = sorted(name for name in parsed.functions if any(
        function.volatility == "v" for function in policy.catalog.functions_by_name.get(name, ())))
    if volatile:
        raise RowFilterRefused(f"the row filter may not call {volatile[0]}(): its rows would change from one query "
                               "to the next")
    return str(normalized)
