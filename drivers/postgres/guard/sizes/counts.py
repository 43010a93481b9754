"""Upper bounds on numbers and row counts: the magnitudes size rules read, the rows aggregates read.

``Counts.number(expr, query)`` bounds a number's magnitude (``repeat``'s
count, ``lpad``'s length, ``array_fill``'s dimensions, a series' bounds);
``rows(query)`` the rows a query level yields, for aggregates and
``ARRAY(SELECT ...)``. A stored number counts as the administrator's data;
the administrator's numbers multiplied by each other do not
(``number_product``). ``SizeModel`` (``size_model.py``) is built on it.
"""

from __future__ import annotations

import decimal

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.ir import (
    Call,
    Case,
    CaseTest,
    Cast,
    Coalesce,
    Collate,
    Const,
    Expr,
    MinMax,
    OpCall,
    Query,
    RangeEntry,
    SetOpColumn,
    SubLink,
    Var,
    walk,
)
from drivers.postgres.guard.model.types import NUMERIC
from drivers.postgres.guard.sizes.bounds import DATA, MAX_NUMBER, UNKNOWN, Bound, maximum, total
from drivers.postgres.guard.sizes.rules import ROWS, Arg

_ONE = Bound(1)
_NUMBER_FUNCTIONS_OF_SIZE = frozenset({
    "length", "char_length", "character_length", "octet_length", "bit_length", "array_length", "cardinality",
    "strpos", "position", "array_upper", "array_lower", "jsonb_array_length", "json_array_length",
})
_NUMBER_PRESERVING = frozenset({"abs", "round", "trunc", "floor", "ceil", "ceiling", "sign", "int4", "int8",
                                "int2", "numeric", "float8", "float4", "max", "min", "greatest", "least"})




def number_product(left: Bound, right: Bound) -> Bound:
    """A bound on the product of two numbers. The administrator's numbers times the administrator's numbers
    are no longer the administrator's data (``id * id * 200``, a cross join's count squares them): unbounded."""
    if (left.data or left.stored) and (right.data or right.stored):
        return UNKNOWN
    return left * right


class Counts:
    """Numbers and rows of one analysed query; ``SizeModel`` gives the sizes they read."""

    catalog: Catalog
    _numbers: dict[int, Bound]
    _rows: dict[tuple[int, bool], Bound]
    _owner: dict[int, Query]

    def size(self, expr: Expr, query: Query) -> Bound:
        raise NotImplementedError

    def arguments(self, call: Call | OpCall, query: Query) -> list[Arg]:
        raise NotImplementedError

    def number(self, expr: Expr, query: Query) -> Bound:
        """The largest magnitude ``expr`` can have, when it is a number (``UNKNOWN`` when nothing bounds it)."""
        key = id(expr)
        found = self._numbers.get(key)
        if found is None:
            found = self._numbers[key] = self._number(expr, self._owner.get(key, query))
        return found

    def _number(self, expr: Expr, query: Query) -> Bound:
        if isinstance(expr, Const):
            return _constant_number(expr)
        if isinstance(expr, Var):
            entry = expr.entry
            if expr.column <= 0:
                return UNKNOWN
            slot = entry.columns[expr.column - 1]
            if entry.kind == "relation":
                return DATA
            if slot.expr is not None:
                return self.number(slot.expr, entry.query or query)
            if entry.kind == "values" and query.values:
                return maximum([self.number(row[expr.column - 1], query) for row in query.values])
            return DATA if entry.kind == "cte" else UNKNOWN
        if isinstance(expr, (Cast, Collate)):
            return self.number(expr.arg, query)
        if isinstance(expr, CaseTest):
            return self.number(expr.source, query)
        if isinstance(expr, OpCall):
            return self._operator_number(expr, query)
        if isinstance(expr, (Case, Coalesce, MinMax)):
            branches = ([r for _, r in expr.whens] + [expr.default]) if isinstance(expr, Case) else expr.args
            return maximum([self.number(b, query) for b in branches])
        if isinstance(expr, SubLink) and expr.kind == "expr":
            return self.number([t for t in expr.query.targets if not t.junk][0].expr, expr.query)
        if isinstance(expr, SetOpColumn):
            return maximum([self.number(source, query) for source in expr.sources])
        if isinstance(expr, Call):
            return self._call_number(expr, query)
        return UNKNOWN

    def _operator_number(self, op: OpCall, query: Query) -> Bound:
        name = op.operator.name
        numbers = [self.number(a, query) for a in op.args]
        if name in ("+", "-"):
            return total(numbers)
        if name == "*":
            return number_product(numbers[0], numbers[1]) if len(numbers) == 2 else UNKNOWN
        if name in ("/", "%") and len(numbers) == 2:
            if op.type == NUMERIC or self.catalog.category(op.type) == "N" and op.type not in (20, 21, 23):
                return UNKNOWN  # dividing by a fraction grows the number
            return numbers[0]
        if name in ("@", "|/") and numbers:
            return numbers[-1]
        return UNKNOWN

    def _call_number(self, call: Call, query: Query) -> Bound:
        name = call.function.name
        if name in _NUMBER_FUNCTIONS_OF_SIZE and call.args:
            return self.size(call.args[0], query)
        if name == "count":
            return self.input_rows(query, strict=True)
        if name == "sum" and call.args:
            return number_product(self.input_rows(query, strict=True), self.number(call.args[0], query))
        if name in _NUMBER_PRESERVING and call.args:
            return maximum([self.number(a, query) for a in call.args]).scaled(1, 1)
        if name in ("random", "random_normal"):
            return Bound(1)
        return UNKNOWN

    # Rows ------------------------------------------------------------------------------------------------

    def rows(self, query: Query, *, strict: bool = False) -> Bound:
        """The most rows ``query`` yields (``strict``: as a number, see ``input_rows``)."""
        key = (id(query), strict)
        found = self._rows.get(key)
        if found is None:
            # A query reading itself (a recursive CTE) counts as data; as a number, unbounded.
            self._rows[key] = UNKNOWN if strict else DATA
            found = self._rows[key] = self._query_rows(query, strict)
        return found

    def _query_rows(self, query: Query, strict: bool) -> Bound:
        if query.setop is not None:
            operation, _, left, right = query.setop
            rows = self.rows(left, strict=strict)
            rows = rows + self.rows(right, strict=strict) if operation == "UNION" else rows
        elif query.values is not None:
            rows = Bound(len(query.values))
        elif query.has_aggregates and not query.group:
            rows = _ONE
        else:
            rows = self.input_rows(query, strict=strict)
            # Set-returning calls anywhere in the select list (``generate_series(1, n)::text``) multiply the
            # rows; siblings run in step, so the product is an upper bound.
            for target in query.targets:
                for expr in walk(target.expr):
                    if isinstance(expr, (Call, OpCall)) and expr.returns_set:
                        produced = maximum([_ONE, self.set_rows(expr, query)])
                        rows = number_product(rows, produced) if strict else rows * produced
        if query.limit is not None:
            limit = self.number(query.limit, query)
            if limit.is_constant and (rows.unknown or rows.data or limit.fixed < rows.fixed):
                rows = limit
        return rows

    def input_rows(self, query: Query, *, strict: bool = False) -> Bound:
        """The rows a query level reads before grouping: the product of its FROM items.

        As a size the product of two tables' rows stays the administrator's data (a join of granted tables
        is the data); as a number (``strict``: a ``count(*)`` that a size rule reads) it is not bounded:
        a cross join of a table with itself squares its rows.
        """
        rows = _ONE
        for entry in query.from_items:
            found = self.entry_rows(entry, query, strict=strict)
            rows = number_product(rows, found) if strict else rows * found
        return rows

    def entry_rows(self, entry: RangeEntry, query: Query, *, strict: bool = False) -> Bound:
        """The rows one FROM item yields."""
        if entry.kind == "relation":
            return DATA
        if entry.kind == "join" and entry.join_sides is not None:
            left, right = (self.entry_rows(side, query, strict=strict) for side in entry.join_sides)
            return number_product(left, right) if strict else left * right
        if entry.kind == "values":
            return Bound(len(query.values or ()))
        if entry.kind == "function":
            found = [self.set_rows(f, query) if getattr(f, "returns_set", False) else _ONE for f in entry.functions]
            return maximum(found) if found else _ONE
        if entry.query is not None:
            return self.rows(entry.query, strict=strict)
        return DATA

    def set_rows(self, call: Expr, query: Query) -> Bound:
        """The rows one call of a set-returning function yields."""
        if not isinstance(call, Call):
            return UNKNOWN
        rule = ROWS.get(call.function.name)
        if rule is None:
            return UNKNOWN
        return rule(self.arguments(call, query))


def _constant_number(const: Const) -> Bound:
    const.value_read = True
    text = const.text
    if text is None:
        return Bound()
    try:
        value = decimal.Decimal(text.strip())
    except (decimal.InvalidOperation, ValueError):
        return UNKNOWN
    if not value.is_finite():
        return UNKNOWN
    if value.adjusted() > 40:
        return Bound(MAX_NUMBER)
    return Bound(int(abs(value).to_integral_value(rounding=decimal.ROUND_CEILING)))
