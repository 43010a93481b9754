"""The planner's work over a query's constants: selectivity estimation against the column statistics.

When a condition (WHERE, ON, HAVING) compares a column with a value the
planner can compute (constants, and immutable or stable functions of them),
PostgreSQL estimates its selectivity by running the operator against the
column's most-common values and its histogram: up to the statistics target
of each (``Catalog.statistics_target``), and for ``col = ANY (array)`` once per
element of the array. Planning checks for no interrupts, so a cancel waits
for all of it. The interrupt audit: ``cat = ANY (array_fill(5,
ARRAY[1048576]))`` over a column with a 1 000-entry target planned for 2.0 s.

``estimation_cost`` bounds that work for one comparison: for an array of
``n`` elements whose sizes add up to ``S``, against statistics values of at
most ``s`` bytes (a column's own bound, and never more than the 1 024 bytes
ANALYZE keeps), it is ``2 x target`` times the operator's cost over
``(s, S)`` plus ``n`` times its cost over ``s`` alone: a linear comparison
costs ``rate x (S + n s)`` and a product one ``S x s``, summed over elements.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.ir import Array, ArrayOp, Call, Expr, OpCall, SubLink, Var, walk
from drivers.postgres.guard.model.types import FunctionInfo
from drivers.postgres.guard.sizes.bounds import Bound
from drivers.postgres.guard.work.conversions import elements_in
from drivers.postgres.guard.work.costs import call_cost

STATISTICS_VALUE_BYTES: Final = 1024
"""ANALYZE keeps no value wider than this in a column's statistics (``WIDTH_THRESHOLD``)."""
_LISTS: Final = 2
"""The most-common values and the histogram: each up to the statistics target."""


def plan_constant(expr: Expr) -> bool:
    """True when the planner can compute ``expr`` while planning: no column, sub-select, aggregate, window
    function or volatile call in it."""
    for node in walk(expr):
        if isinstance(node, (Var, SubLink)):
            return False
        if isinstance(node, Call) and (node.kind != "function" or node.function.volatility == "v"):
            return False
        if isinstance(node, (OpCall, ArrayOp)) and node.function is not None and node.function.volatility == "v":
            return False
    return True


def estimated(expr: Expr) -> tuple[Expr, Expr, int | None] | None:
    """For a comparison the planner estimates (a column side and a plan-time constant side): the column
    side, the constant side and, for ``= ANY (ARRAY[...])``, the number of elements written."""
    if isinstance(expr, ArrayOp) and len(expr.args) == 2:
        column, array = expr.args
        if plan_constant(array) and not plan_constant(column):
            written = len(array.elements) if isinstance(array, Array) and not array.multidims else None
            return column, array, written
    if isinstance(expr, OpCall) and len(expr.args) == 2:
        left, right = expr.args
        if plan_constant(right) and not plan_constant(left):
            return left, right, 1
        if plan_constant(left) and not plan_constant(right):
            return right, left, 1
    return None


def estimation_cost(catalog: Catalog, function: FunctionInfo | None, column: Bound, constant: Bound,
                    constant_type: int, written: int | None, statistics_target: int,
                    products: Mapping[int, tuple[int, ...]]) -> Bound:
    """Nanoseconds selectivity estimation may spend comparing ``constant`` with a column's statistics."""
    if column.unknown or column.data:
        width = STATISTICS_VALUE_BYTES
    else:
        width = min(column.fixed + column.stored, STATISTICS_VALUE_BYTES)
    value = Bound(width)
    elements = Bound(written) if written is not None else (
        elements_in(catalog, constant_type, constant) if catalog.element_type(catalog.base_type(constant_type))
        else Bound(1))
    each = call_cost(function, [value, constant], products) + elements * call_cost(function, [value, Bound()], products)
    return each.scaled(_LISTS * statistics_target)
