"""Upper bounds on every value of an analysed query (the guard's size model).

``SizeModel.size(expr, query)`` bounds the printed and stored size of a
value: a literal at its printed size (``literals.py``), a stored column by its
type or as the administrator's data, a call by its function's rule
(``rules*.py``) within what its type allows, a cast by what its target type
reads from the source's text (``type_sizes.py``). The numbers and row counts
the rules read come from ``counts.py``, which ``SizeModel`` extends.
"""

from __future__ import annotations

from typing import Final

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.ir import (
    Array,
    ArrayOp,
    BoolOp,
    Call,
    Case,
    CaseTest,
    Cast,
    Coalesce,
    Collate,
    Const,
    Expr,
    FieldSelect,
    Grouping,
    MinMax,
    OpCall,
    Param,
    Query,
    RangeEntry,
    Row,
    RowCompare,
    SetOpColumn,
    SubLink,
    Subscript,
    SubSelectColumn,
    Test,
    ValueFunction,
    Var,
    Xml,
    subqueries,
)
from drivers.postgres.guard.model.types import BOOL, BYTEA, INT4, JSON, JSONB, JSONPATH, NUMERIC
from drivers.postgres.guard.model.types import UNKNOWN as UNKNOWN_TYPE
from drivers.postgres.guard.sizes import (
    rules_sets,  # noqa: F401  (registers its rules)
    rules_structured,  # noqa: F401  (registers its rules)
)
from drivers.postgres.guard.sizes.bounds import DATA, UNKNOWN, Bound, maximum, total
from drivers.postgres.guard.sizes.counts import Counts
from drivers.postgres.guard.sizes.jsonpath import jsonpath_printed
from drivers.postgres.guard.sizes.literals import (
    array_elements,
    jsonb_held,
    jsonb_printed,
    number_shaped,
    numeric_printed,
)
from drivers.postgres.guard.sizes.rules import (
    ARRAY_HEADER,
    DIMENSION_BYTES,
    RULES,
    Arg,
    RuleContext,
    array_element,
    quoted,
)
from drivers.postgres.guard.sizes.rules_fixed import send_rule
from drivers.postgres.guard.sizes.type_sizes import parsed_bound, stored_bound, type_bound, value_bound

_BOOLEAN = Bound(5)
_NULL = Bound(4)
"""A NULL element of an array prints ``NULL``."""
_NUMERIC_HEADER = 3
"""Bytes a numeric may hold beyond its printed digits: ``1`` holds 4 bytes (a header, one base-10000 digit)."""
_BIT_LENGTH_WORD = 4
"""A bit string holds its length in bits before its bytes: ``B'1'`` holds 5 bytes."""
_JSONPATH_HELD_PER_BYTE = 12
_ROW_HEADER = 32
"""A row value holds a tuple header (24 bytes, 32 with a null bitmap): ``ROW()`` holds 24 bytes."""
_ONE = Bound(1)
_JSON_ROW_MAKERS: Final = frozenset({
    "json_to_record", "json_to_recordset", "jsonb_to_record", "jsonb_to_recordset", "json_populate_record",
    "json_populate_recordset", "jsonb_populate_record", "jsonb_populate_recordset", "json_each", "jsonb_each",
    "json_each_text", "jsonb_each_text",
})


class SizeModel(Counts):
    """Bounds for one analysed query and its sub-queries, remembered per node."""

    def __init__(self, catalog: Catalog, root: Query) -> None:
        self.catalog = catalog
        self._sizes: dict[int, Bound] = {}
        self._numbers: dict[int, Bound] = {}
        self._rows: dict[tuple[int, bool], Bound] = {}
        self._owner: dict[int, Query] = {}
        for query in subqueries(root):
            for target in query.targets:
                self._owner[id(target.expr)] = query
            for entry in query.entries:
                for slot in entry.columns:
                    if slot.expr is not None:
                        self._owner.setdefault(id(slot.expr), entry.query or query)

    # Sizes -----------------------------------------------------------------------------------------------

    def size(self, expr: Expr, query: Query) -> Bound:
        """The most ``expr`` prints or stores, in bytes."""
        key = id(expr)
        found = self._sizes.get(key)
        if found is None:
            found = self._sizes[key] = self._size(expr, self._owner.get(key, query))
        return found

    def _size(self, expr: Expr, query: Query) -> Bound:
        catalog = self.catalog
        if isinstance(expr, Const):
            return self.literal(expr)
        if isinstance(expr, Var):
            return self._var(expr, query)
        if isinstance(expr, (Call, OpCall)):
            return self.call_size(expr, query)
        if isinstance(expr, (ArrayOp, BoolOp, Test, RowCompare)):
            return _BOOLEAN
        if isinstance(expr, Cast):
            return self._cast(expr, query)
        if isinstance(expr, Case):
            return maximum([self.size(r, query) for _, r in expr.whens] + [self.size(expr.default, query)])
        if isinstance(expr, (Coalesce, MinMax)):
            return maximum([self.size(a, query) for a in expr.args])
        if isinstance(expr, Array):
            elements = total([quoted(self.size(e, query)).scaled(1, 8) for e in expr.elements])
            return elements + Bound(24 + 8 * len(expr.elements))
        if isinstance(expr, Row):
            # Each field holds its alignment and length word (8 bytes) on top of its value.
            return total([quoted(self.size(a, query)).scaled(1, 8) for a in expr.args]) + Bound(_ROW_HEADER)
        if isinstance(expr, SubLink):
            return self._sublink(expr)
        if isinstance(expr, SubSelectColumn):
            target = [t for t in expr.query.targets if not t.junk][expr.column - 1]
            return self.size(target.expr, expr.query)
        if isinstance(expr, SetOpColumn):
            return maximum([self.size(source, query) for source in expr.sources])
        if isinstance(expr, FieldSelect):
            return self._field(expr, query)
        if isinstance(expr, Subscript):
            return self.size(expr.container, query)
        if isinstance(expr, CaseTest):
            return self.size(expr.source, query)
        if isinstance(expr, Collate):
            return self.size(expr.arg, query)
        if isinstance(expr, (ValueFunction, Grouping)):
            return value_bound(catalog, expr.type, expr.typmod)
        if isinstance(expr, Xml):
            return total([self.size(a, query) for a in expr.args + expr.named_args]).scaled(6, 256)
        return value_bound(catalog, expr.type, expr.typmod)

    def literal(self, const: Const) -> Bound:
        """A literal's printed size (``1e9999`` is 10 000 characters).

        A parameter's value is read here for no more than the guard cache keys it by (its byte length, a
        number's printed size); where the size depends on more of it (an array, jsonb, jsonpath, a numeric
        that is not number-shaped) the value counts as read (``Param``)."""
        text = const.unread if isinstance(const, Param) else const.text
        if text is None:
            return Bound()
        written = len(text.encode("utf-8"))
        if isinstance(const, Param) and const.parsed_as and self._reads_contents(const.parsed_as, text):
            const.value_read = True
        if const.literal == "numeric" or (const.parsed_as == NUMERIC):
            return Bound(numeric_printed(text) + _NUMERIC_HEADER)
        if const.literal == "integer":
            return Bound(max(len(text) + 1, 4 if const.type == INT4 else 8))  # an int4 holds 4 bytes, an int8 8
        if const.literal == "bits":
            return Bound(max(1, len(text) - 1) * 4 + _BIT_LENGTH_WORD)
        if const.literal == "boolean":
            return _BOOLEAN
        if not const.parsed_as or const.parsed_as == UNKNOWN_TYPE:
            return Bound(written)
        return self._read_as(text, const.parsed_as, const.typmod)

    def _reads_contents(self, type_oid: int, text: str) -> bool:
        """Whether ``_read_as`` reads more of ``text`` than its length (or, number-shaped, its printed size)."""
        base = self.catalog.base_type(type_oid)
        if base == NUMERIC:
            return not number_shaped(text)
        return base in (JSONB, JSONPATH) or bool(self.catalog.element_type(base))

    def _read_as(self, text: str, type_oid: int, typmod: int) -> Bound:
        """The printed size of ``text`` read by a type's input function: a literal, an array's element."""
        base = self.catalog.base_type(type_oid)
        if base == NUMERIC:
            return Bound(numeric_printed(text) + _NUMERIC_HEADER)
        if base == JSONB:
            return Bound(max(jsonb_printed(text), jsonb_held(text)))
        if base == JSONPATH:
            # It holds an item of 8 or more bytes per step, operator and number: '-----------$' prints 34
            # characters and holds 144 bytes, '$[0,0,0,0,0,0,0,0]' 186 (measured).
            return Bound(max(jsonpath_printed(text), _JSONPATH_HELD_PER_BYTE * len(text.encode("utf-8")) + 24))
        if base == JSON:
            return Bound(len(text.encode("utf-8")))
        element = self.catalog.element_type(base)
        if element:
            return self._array_literal(text, element)
        return parsed_bound(self.catalog, type_oid, typmod, Bound(len(text.encode("utf-8"))))

    def _array_literal(self, text: str, element: int) -> Bound:
        """An array literal: each element as its type reads it, quoted, escaped and with its length word
        (a NULL prints ``NULL``), braces around each sub-array, the header and every dimension (which prints
        as ``[lb:ub]=`` where a lower bound is not 1)."""
        elements = [array_element(self._read_as(item, element, -1) if item is not None else _NULL)
                    for item in array_elements(text)]
        opening = text.find("{")
        dimensions = len(text) - opening - len(text[opening:].lstrip("{")) if opening >= 0 else 1
        return total(elements) + Bound(2 * text.count("{") + ARRAY_HEADER + DIMENSION_BYTES * dimensions)

    def _var(self, var: Var, query: Query) -> Bound:
        entry = var.entry
        if var.column == 0:
            return total([self._column(entry, i, query) for i in range(len(entry.columns))]).scaled(2, 8)
        if var.column < 0:
            return value_bound(self.catalog, var.type, var.typmod)
        return self._column(entry, var.column - 1, query)

    def row_fields(self, expr: Expr, query: Query) -> list[tuple[Expr | None, int, Bound]] | None:
        """The fields of a whole row (``t`` of ``FROM s.t t``, ``ROW(a, b)``): each one's expression where
        there is one, type and size; None for any other value."""
        if isinstance(expr, Row):
            return [(arg, arg.type, self.size(arg, query)) for arg in expr.args]
        if isinstance(expr, Var) and expr.column == 0:
            entry = expr.entry
            return [(slot.expr, slot.type, self._column(entry, i, query)) for i, slot in enumerate(entry.columns)]
        return None

    def _column(self, entry: RangeEntry, index: int, query: Query) -> Bound:
        slot = entry.columns[index]
        if entry.kind == "relation":
            return stored_bound(self.catalog, slot.type, slot.typmod)
        if entry.kind == "values" and entry.query is None:
            rows = query.values or []
            return maximum([self.size(row[index], query) for row in rows]) if rows else Bound()
        if slot.expr is not None:
            return self.size(slot.expr, entry.query or query)
        if entry.kind == "cte" and entry.query is not None:
            return DATA  # a recursive CTE's own rows, or a CTE read before it is defined
        return value_bound(self.catalog, slot.type, slot.typmod)

    def call_size(self, call: Call | OpCall, query: Query) -> Bound:
        """A call's result by its function's rule, within what its result type allows."""
        if isinstance(call, OpCall) and call.form == "nullif":
            return self.size(call.args[0], query)
        function = call.function
        limit = type_bound(self.catalog, call.type, call.typmod)
        if call.type == BOOL:
            return _BOOLEAN
        rule = RULES.get(function.name) if function is not None else None
        if rule is None and function is not None and function.name.endswith("send") and call.type == BYTEA:
            rule = send_rule
        if rule is None:
            return limit if limit is not None else UNKNOWN
        rows = self.input_rows(query) if isinstance(call, Call) and call.kind != "function" else _ONE
        arguments = self.arguments(call, query)
        bound = rule(arguments, RuleContext(rows, call.type, limit, self.catalog))
        if bound.unknown:
            return bound
        return bound.at_most(limit.fixed) if limit is not None else bound.at_most(1 << 30)

    def arguments(self, call: Call | OpCall, query: Query) -> list[Arg]:
        """The arguments of a call as size rules see them."""
        exprs = (call.direct_args + call.args) if isinstance(call, Call) else call.args
        return [Arg(e, self.size(e, query), self.number(e, query), constant_text(e)) for e in exprs]

    def _cast(self, cast: Cast, query: Query) -> Bound:
        source = self.size(cast.arg, query)
        limit = type_bound(self.catalog, cast.type, cast.typmod)
        if cast.length_function is not None or cast.path == "length":
            # varchar(n) cuts to n characters, char(n) pads to n: at most the value and the padding.
            length = type_bound(self.catalog, cast.type, cast.typmod)
            return source + length if length is not None else source
        if cast.path in ("relabel", "domain", "row"):
            return source if limit is None else source.at_most(limit.fixed)
        if cast.path == "io":
            return parsed_bound(self.catalog, cast.type, cast.typmod, source)
        if cast.path == "array":
            return parsed_bound(self.catalog, cast.type, cast.typmod, source.scaled(2, 24))
        function = cast.function
        rule = RULES.get(function.name) if function is not None else None
        if rule is not None:
            bound = rule([Arg(cast.arg, source, self.number(cast.arg, query), constant_text(cast.arg))],
                         RuleContext(_ONE, cast.type, limit, self.catalog))
            return bound.at_most(limit.fixed) if limit is not None else bound
        return limit if limit is not None else UNKNOWN

    def _sublink(self, link: SubLink) -> Bound:
        sub = link.query
        if link.kind == "expr":
            return self.size([t for t in sub.targets if not t.junk][0].expr, sub)
        if link.kind == "array":
            element = self.size([t for t in sub.targets if not t.junk][0].expr, sub)
            return self.rows(sub) * quoted(element).scaled(1, 8) + Bound(24)
        return _BOOLEAN

    def _field(self, field: FieldSelect, query: Query) -> Bound:
        limit = type_bound(self.catalog, field.type, field.typmod)
        arg = field.arg
        if isinstance(arg, Call) and arg.function.name in _JSON_ROW_MAKERS:
            # Each column is read from the JSON (its last argument) by the column type's input function.
            source = self.size(arg.args[-1], query) if arg.args else Bound()
            if arg.function.name.endswith("each") or arg.function.name.endswith("each_text"):
                return source if limit is None else source.at_most(limit.fixed)
            parsed = parsed_bound(self.catalog, field.type, field.typmod, source)
            if "populate" in arg.function.name and len(arg.args) > 1:  # or the base row's own field
                parsed = maximum([parsed, self.size(arg.args[0], query)])
            return parsed
        if isinstance(arg, Call) and arg.function.returns_set:
            found = self.call_size(arg, query)
            return found if limit is None else found.at_most(limit.fixed)
        whole = self.size(arg, query)
        return whole if limit is None else whole.at_most(limit.fixed)

def constant_text(expr: Expr) -> str | None:
    """The text of a constant argument (through casts), or None; a rule reads it, so the decision depends on it."""
    while isinstance(expr, Cast):
        expr = expr.arg
    if not isinstance(expr, Const):
        return None
    expr.value_read = True
    return expr.text


