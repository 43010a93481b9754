"""Which conditions of a query may run before a narrowed relation's row filter, and which must run after it.

A condition evaluated on a row the filter removes can tell about that row: ``1/(balance - 42) > 0`` fails
on a hidden row whose balance is 42, a cast of a hidden text fails on its value, a costly function takes
time that depends on it. PostgreSQL answers the same problem for security-barrier views and row-level
security: a condition runs before the barrier only if every function in it is leakproof
(``pg_proc.proleakproof``: it reveals nothing about its arguments but its result, and never raises an
error that depends on them). The rewrite (``rewrite.py``) keeps every condition where the user wrote it,
after a fence the planner does not cross, and copies into the fenced sub-select only the WHERE conditions
that are leakproof and read that relation alone, so that the sub-select's indexes serve them: a point
lookup by primary key stays an index scan.

A condition qualifies (``leakproof``) when it holds only columns of that one relation, constants, AND, OR
and NOT, NULL tests, CASE, row and array constructors, and calls, operators and casts whose functions are
all leakproof. A relation on the nullable side of an outer join gets no copies: a condition there filters
the join's result, not the relation's rows (``inner_relations``).
"""

from __future__ import annotations

from drivers.postgres.guard.model.ir import (
    Array,
    ArrayOp,
    BoolOp,
    Call,
    Case,
    CaseTest,
    Cast,
    Collate,
    Const,
    Expr,
    OpCall,
    Query,
    RangeEntry,
    Row,
    RowCompare,
    Test,
    ValueFunction,
    Var,
    walk,
)
from drivers.postgres.guard.model.types import FunctionInfo

_SAFE_NODES = (BoolOp, Case, CaseTest, Const, Collate, Array, Row, Test, ValueFunction)
"""Nodes that run no function of their own on the data."""


def _leakproof_function(function: FunctionInfo | None) -> bool:
    return function is not None and function.leakproof and not function.returns_set and function.volatility != "v"


def leakproof(expr: Expr, entry: RangeEntry) -> bool:
    """True when ``expr`` reads columns of ``entry`` only (at least one) and may run on any of its rows."""
    reads_entry = False
    for node in walk(expr):
        if isinstance(node, Var):
            if node.entry is not entry or node.levels_up != 0 or node.column <= 0:
                return False
            reads_entry = True
        elif isinstance(node, (Call, OpCall, ArrayOp)):
            if isinstance(node, Call) and node.kind != "function":
                return False
            if not _leakproof_function(node.function):
                return False
        elif isinstance(node, RowCompare):
            if not all(_leakproof_function(function) for function in node.functions):
                return False
        elif isinstance(node, Cast):
            if node.path == "function":
                if not _leakproof_function(node.function):
                    return False
            elif node.path != "relabel":
                return False  # an I/O conversion, a domain check or an element-wise cast can fail on a value
            if node.length_function is not None and not _leakproof_function(node.length_function):
                return False
        elif isinstance(node, Array) and node.multidims:
            return False  # sub-arrays of unequal lengths fail ("matching dimensions"): an error from the values
        elif not isinstance(node, _SAFE_NODES):
            return False
    return reads_entry


def estimated_blind(expr: Expr, entry: RangeEntry) -> bool:
    """True when the planner's estimate of ``expr`` cannot depend on the values in ``entry``'s rows.

    A condition copied into a fence whose table has a row filter is estimated from the table's statistics,
    which describe the hidden rows too: ``name = 'zebra'`` would be estimated from how often hidden rows hold
    'zebra', and the plan chosen from that tells it. Only ``column = value`` (or ``= ANY``) on a column that
    alone is a unique index's key is estimated without them: PostgreSQL's ``var_eq_const`` takes one row per
    value there before it looks at any statistics. A point lookup by primary key is one.
    """
    relation = entry.relation
    if relation is None or relation.kind == "p":
        # A partitioned table is read with its partitions, estimated from the tree's statistics, never an index
        # of its own (every other table is read as ONLY: ``guard/inheritance.py``).
        return False
    unique = relation.unique_columns
    if isinstance(expr, ArrayOp) and expr.use_or and expr.operator.name == "=" and len(expr.args) == 2:
        column, values = expr.args  # column = ANY (values)
        return _unique_column(column, entry, unique) and not _reads_a_column(values)
    if not (isinstance(expr, OpCall) and expr.form == "op" and expr.operator.name == "=" and len(expr.args) == 2):
        return False
    left, right = expr.args
    return (_unique_column(left, entry, unique) and not _reads_a_column(right)) or (
        _unique_column(right, entry, unique) and not _reads_a_column(left))


def _unique_column(expr: Expr, entry: RangeEntry, unique: frozenset[str]) -> bool:
    while isinstance(expr, Cast) and expr.path == "relabel":
        expr = expr.arg
    return isinstance(expr, Var) and expr.entry is entry and expr.levels_up == 0 and expr.name in unique


def _reads_a_column(expr: Expr) -> bool:
    return any(isinstance(node, Var) for node in walk(expr))


def where_conjuncts(query: Query) -> list[Expr]:
    """The top-level AND terms of a level's WHERE (the whole condition when it is no AND)."""
    where = query.where
    if where is None:
        return []
    if isinstance(where, BoolOp) and where.op == "AND":
        return list(where.args)
    return [where]


def inner_relations(query: Query) -> list[RangeEntry]:
    """The relation entries of a level whose rows its WHERE filters directly (none on a nullable side)."""
    found: list[RangeEntry] = []
    stack = list(query.from_items)
    while stack:
        entry = stack.pop()
        if entry.kind == "relation":
            found.append(entry)
        elif entry.kind == "join" and entry.join_sides is not None:
            left, right = entry.join_sides
            if entry.join_kind in ("inner", "left"):
                stack.append(left)
            if entry.join_kind in ("inner", "right"):
                stack.append(right)
    return found
