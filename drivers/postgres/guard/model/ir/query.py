"""The analysed tree's query levels (FROM items and their columns, targets, the ``Query``) and the expressions
that point into them: a column reference (``Var``) and a sub-select (``SubLink``, ``SubSelectColumn``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from drivers.postgres.guard.model.ir.expressions import Expr, SortItem, Window, walk
from drivers.postgres.guard.model.types import RelationInfo


class Var(Expr):
    """A column of a range table entry (``column`` 0: the whole row; negative: a system column)."""

    __slots__ = ("entry", "column", "levels_up", "name")

    def __init__(self, type_oid: int, typmod: int, entry: RangeEntry, column: int, levels_up: int, name: str,
                 location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.entry = entry
        self.column = column
        self.levels_up = levels_up
        self.name = name


class SubLink(Expr):
    """A sub-select in an expression: ``exists``, ``expr`` (scalar), ``array``, ``any``, ``all``, ``rowcompare``.

    ``test`` is the comparison of the left operand with the sub-select's columns (``SubSelectColumn``)."""

    __slots__ = ("kind", "test", "query")

    def __init__(self, type_oid: int, kind: str, query: Query, test: Expr | None = None, typmod: int = -1,
                 location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.kind = kind
        self.query = query
        self.test = test

    def children(self) -> Iterator[Expr]:
        if self.test is not None:
            yield self.test


class SubSelectColumn(Expr):
    """A sub-select's output column inside its SubLink's comparison (PostgreSQL's ``PARAM_SUBLINK``)."""

    __slots__ = ("query", "column")

    def __init__(self, type_oid: int, typmod: int, query: Query, column: int) -> None:
        super().__init__(type_oid, typmod)
        self.query = query
        self.column = column


class ColumnSlot:
    """One column of a range table entry: its name and type, and what produces it."""

    __slots__ = ("name", "type", "typmod", "expr")

    def __init__(self, name: str, type_oid: int, typmod: int = -1, expr: Expr | None = None) -> None:
        self.name = name
        self.type = type_oid
        self.typmod = typmod
        self.expr = expr
        """For a sub-select, VALUES, function or join column: the expression that yields it."""


class RangeEntry:
    """One FROM item (``RangeTblEntry``): a relation, sub-select, CTE reference, function, VALUES or join."""

    def __init__(self, kind: str, name: str, columns: list[ColumnSlot]) -> None:
        self.kind = kind
        """``relation``, ``subquery``, ``cte``, ``function``, ``values`` or ``join``."""
        self.name = name
        """The name it is referred to by (its alias, or the relation's, function's or CTE's name)."""
        self.columns = columns
        self.relation: RelationInfo | None = None
        self.has_alias = False
        self.inherited = False
        self.location = -1
        self.query: Query | None = None
        self.functions: list[Expr] = []
        self.ordinality = False
        self.lateral = False
        self.join_kind = ""
        self.join_sides: tuple[RangeEntry, RangeEntry] | None = None
        self.join_condition: Expr | None = None
        self.row_type = 0
        """The type of the whole row: the relation's row type, or ``record``."""


class Target:
    """One select-list entry (``TargetEntry``); ``junk`` ones exist only for ORDER BY or GROUP BY."""

    __slots__ = ("name", "expr", "junk")

    def __init__(self, name: str, expr: Expr, junk: bool = False) -> None:
        self.name = name
        self.expr = expr
        self.junk = junk


class Query:
    """One analysed SELECT (or VALUES, or set operation) and everything it reads."""

    def __init__(self) -> None:
        self.ctes: list[RangeEntry] = []
        """The CTEs of its WITH (kind ``cte``, each with its ``query``)."""
        self.entries: list[RangeEntry] = []
        """Every FROM item, joins and their inputs included."""
        self.from_items: list[RangeEntry] = []
        """The top-level FROM items."""
        self.targets: list[Target] = []
        self.where: Expr | None = None
        self.having: Expr | None = None
        self.group: list[Expr] = []
        self.grouping_sets = 1
        """How many grouping sets GROUP BY expands to (``expand_grouping_sets``): 1 without GROUPING SETS."""
        self.materialized = ""
        """For a CTE's query: ``always`` (``MATERIALIZED``, or recursive), ``never`` (``NOT MATERIALIZED``), or
        empty (PostgreSQL inlines it when it is read once)."""
        self.sort: list[SortItem] = []
        self.distinct = False
        self.distinct_on: list[Expr] = []
        self.limit: Expr | None = None
        self.offset: Expr | None = None
        self.windows: list[Window] = []
        self.setop: tuple[str, bool, Query, Query] | None = None
        """(UNION/INTERSECT/EXCEPT, ALL, left, right) for a set operation."""
        self.values: list[list[Expr]] | None = None
        """The rows of a VALUES list."""
        self.has_aggregates = False
        self.has_window_functions = False
        self.recursive = False
        self.recursive_cte = False
        self.where_raw: dict[str, Any] | None = None
        """The WHERE clause as pglast's raw tree has it (``grants/rewrite.py`` copies its conditions)."""
        """This query is a recursive CTE's (its UNION keeps every distinct row in a hash table)."""

    @property
    def columns(self) -> list[tuple[str, int, int]]:
        """The output columns: (name, type, typmod)."""
        return [(t.name, t.expr.type, t.expr.typmod) for t in self.targets if not t.junk]

    def expressions(self) -> Iterator[Expr]:
        """Every top-level expression of this level (not of its sub-queries or FROM items' queries)."""
        for target in self.targets:
            yield target.expr
        for expr in (self.where, self.having, self.limit, self.offset):
            if expr is not None:
                yield expr
        yield from self.group
        yield from (item.expr for item in self.sort)
        yield from self.distinct_on
        for window in self.windows:
            yield from window.expressions()
        for entry in self.entries:
            yield from entry.functions
            if entry.join_condition is not None:
                yield entry.join_condition
        for row in self.values or ():
            yield from row


def subqueries(query: Query) -> Iterator[Query]:
    """Every query nested in ``query`` (CTEs, FROM sub-selects, set operation branches, sub-links), and itself."""
    stack: list[Query] = [query]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(entry.query for entry in current.ctes if entry.query is not None)
        stack.extend(entry.query for entry in current.entries if entry.query is not None)
        if current.setop is not None:
            stack.extend(current.setop[2:])
        for top in current.expressions():
            for expr in walk(top):
                if isinstance(expr, SubLink):
                    stack.append(expr.query)
