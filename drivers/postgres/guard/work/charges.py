"""What each call, cast, conversion and planner estimate of a query level costs, charged to the statement's
budget (``budget.py``) at the bounded sizes of its arguments.

``WorkCharges`` is a part of ``checks.LevelChecks``: calls by their function's cost (``costs.py``),
conversions to and from text by their types (``conversions.py``), JSON-to-record columns by their input
functions, jsonpath that compares sequences by the square of the document, hash tables that never spill by
their rows, the planner's estimates (``planner.py``) and the row's output.
"""

from __future__ import annotations

from typing import Final

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.ir import ArrayOp, Call, Cast, Const, Expr, FieldSelect, OpCall, Param, Query
from drivers.postgres.guard.model.render import describe
from drivers.postgres.guard.model.types import BPCHAR, JSON, JSONB, TEXT, VARCHAR, XML, FunctionInfo
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.refusal_reasons import PostgresRefusal
from drivers.postgres.guard.rules.allowed import XML_PARSING
from drivers.postgres.guard.sizes.bounds import Bound, total
from drivers.postgres.guard.sizes.jsonpath import compares_sequences
from drivers.postgres.guard.sizes.size_model import SizeModel, constant_text
from drivers.postgres.guard.work.budget import RowBudget
from drivers.postgres.guard.work.conversions import (
    ELEMENT_WISE_FUNCTIONS,
    FIELD_NS,
    RENDERING_FUNCTIONS,
    conversion_memory,
    element_memory,
    io_ns_per_byte,
)
from drivers.postgres.guard.work.costs import COMPARISON_NS_PER_BYTE, PRODUCT_NS_PER_STEP, call_cost, call_memory
from drivers.postgres.guard.work.planner import estimated, estimation_cost
from gateway.errors import QueryRejected

_AS_IS: Final = frozenset({TEXT, VARCHAR, BPCHAR, JSON, JSONB})
"""Types a rendering function takes as they are, without their output function."""
JSON_RECORD_MAKERS: Final = frozenset({
    "json_to_record", "json_to_recordset", "jsonb_to_record", "jsonb_to_recordset",
    "json_populate_record", "json_populate_recordset", "jsonb_populate_record", "jsonb_populate_recordset",
})
"""Functions that make rows from JSON, reading each column's value with that column type's input function."""


class WorkCharges:
    """The charges of one query level's work to the statement's budget."""

    policy: GuardPolicy
    catalog: Catalog
    model: SizeModel
    query: Query
    budget: RowBudget

    def _size(self, expr: Expr) -> Bound:
        raise NotImplementedError

    def _function(self, function: FunctionInfo, expr: Expr) -> None:
        raise NotImplementedError

    def _check_type(self, expr: Expr) -> None:
        raise NotImplementedError

    def _check_call(self, expr: Call | OpCall | ArrayOp) -> None:
        function = expr.function
        if function is None:
            return
        self._function(function, expr)
        arguments = expr.direct_args + expr.args if isinstance(expr, Call) else expr.args
        sizes = [self._size(a) for a in arguments]
        types = [a.type for a in arguments]
        self._charge(function, expr, sizes, self._size(expr) if not isinstance(expr, ArrayOp) else Bound(5),
                     argument_types=types)
        if function.name in RENDERING_FUNCTIONS:
            self.budget.spend(expr, function, total([self._output_cost(a) for a in arguments
                                                     if self.catalog.base_type(a.type) not in _AS_IS]))
        if function.name in ELEMENT_WISE_FUNCTIONS:
            self.budget.spend(expr, function, Bound(), element_memory(self.catalog, types, sizes))
        if function.name.startswith("jsonb_path_") and len(arguments) > 1 and compares_sequences(
                constant_text(arguments[1])):
            # Every item of one sequence against every item of the other (jsonpath.py): n ≤ size / 2 items each,
            # about 12 ns and 64 bytes per pair measured.
            document = total([sizes[0], *sizes[2:3]])
            pairs = document * document
            self.budget.spend(expr, function, pairs.scaled(PRODUCT_NS_PER_STEP), pairs.scaled(16))

    def _check_literal(self, const: Const) -> None:
        text = const.unread if isinstance(const, Param) else const.text  # its length only, as the cache keys it
        if not const.parsed_as or text is None:
            return
        if const.parsed_as == XML or self.catalog.base_type(const.parsed_as) == XML:
            raise QueryRejected(f"the literal {describe(const)} is read as xml, which is not allowed: "
                                f"{XML_PARSING}", reason=PostgresRefusal.TYPE)
        info = self.catalog.type(const.parsed_as)
        parser = self._named_function(info.input_function) if info is not None else None
        if parser is not None and parser.oid in self.policy.products:
            written = Bound(len(text.encode("utf-8")))
            self._charge(parser, const, [written], Bound())

    def _check_cast(self, cast: Cast) -> None:
        source = self._size(cast.arg)
        if cast.function is not None:
            self._function(cast.function, cast)
            self._charge(cast.function, cast, [source], self._size(cast))
        if cast.length_function is not None:
            self._function(cast.length_function, cast)
        if cast.path == "io":
            self._check_conversion(cast, cast.arg.type, cast.type, source)
        elif cast.path == "array":
            # array_map: every element through the element's coercion, each held apart until the array is built
            element = cast.element
            if element is not None and element.path == "io":
                self._check_conversion(cast, cast.arg.type, cast.type, source)
            else:
                function = element.function if element is not None else cast.length_function
                self.budget.spend(cast, function, call_cost(function, [source], self.policy.products),
                                  conversion_memory(self.catalog, cast.arg.type, cast.type, source))

    def _check_conversion(self, expr: Expr, source_type: int, target_type: int, source: Bound) -> None:
        """An I/O conversion: the source type's output function, then the target's input function."""
        catalog = self.catalog
        target = catalog.type(catalog.base_element_type(target_type)) if catalog.element_type(
            catalog.base_type(target_type)) else catalog.type(catalog.base_type(target_type))
        if catalog.base_type(target_type) == XML or (target is not None and target.oid == XML):
            raise QueryRejected(f"{describe(expr, catalog.type_display)} is not allowed: a cast to xml "
                                f"parses the text: {XML_PARSING}", reason=PostgresRefusal.TYPE)
        parser = self._named_function(target.input_function) if target is not None else None
        time = self._output_cost(expr.arg) if isinstance(expr, Cast) else source.scaled(
            io_ns_per_byte(catalog, source_type))
        time = time + source.scaled(io_ns_per_byte(catalog, target_type, reading=True))
        if parser is not None and parser.oid in self.policy.products:
            time = time + call_cost(parser, [source], self.policy.products)
        result = self._size(expr)
        self.budget.spend(expr, parser, time, (result if not result.unknown else Bound()) + conversion_memory(
            catalog, source_type, target_type, source))

    def _check_record_field(self, field: FieldSelect, maker: Call) -> None:
        """A JSON-to-record function reads each column from its text with the column type's input function,
        as a cast would: ``jsonb_to_record(j) AS x(q tsquery)`` runs ``tsqueryin`` over text from ``j``."""
        if maker.function is None or maker.function.name not in JSON_RECORD_MAKERS or not maker.args:
            return
        self._check_type(field)  # the column is read even when nothing refers to it
        target = self.catalog.type(self.catalog.base_type(field.type))
        if target is None:
            return
        if target.oid == XML:
            raise QueryRejected(f"column {field.field!r} of {maker.function.name} is read as xml, which is not "
                                f"allowed: {XML_PARSING}", reason=PostgresRefusal.TYPE)
        self._check_conversion(maker, maker.args[-1].type, field.type, self._size(maker.args[-1]))

    def _check_set_memory(self) -> None:
        """Hash tables PostgreSQL 15 never spills: ``INTERSECT``/``EXCEPT`` (``HashSetOp``) and a recursive
        CTE's ``UNION`` hold every distinct row in memory at once (80 rows of 8 MB: 666 MB in 1.3 s)."""
        query = self.query
        if query.setop is None:
            return
        operation, keeps_all, _, _ = query.setop
        if operation in ("INTERSECT", "EXCEPT") or (operation == "UNION" and not keeps_all and query.recursive_cte):
            width = total([self._size(target.expr) for target in query.targets if not target.junk])
            held = self.model.rows(query) * width.scaled(1, 32)
            self.budget.spend(query.targets[0].expr, f"the hash table of {operation}", Bound(), held)

    def _check_estimation(self, expr: Expr) -> None:
        """The planner's selectivity estimate of a comparison of a column with a plan-time constant."""
        found = estimated(expr)
        if found is None or not isinstance(expr, (OpCall, ArrayOp)):
            return
        column, constant, written = found
        cost = estimation_cost(self.catalog, expr.function, self._size(column), self._size(constant), constant.type,
                               written, self.catalog.statistics_target, self.policy.products)
        self.budget.spend(expr, "the planner's estimate of it", cost)

    def _output_cost(self, expr: Expr) -> Bound:
        """Time the output function of ``expr``'s type takes over it; a whole row's, field by field."""
        fields = self.model.row_fields(expr, self.query)
        if fields is None:
            return self._size(expr).scaled(io_ns_per_byte(self.catalog, expr.type))
        cost = Bound(FIELD_NS * len(fields))
        for field, type_oid, size in fields:
            cost = cost + (self._output_cost(field) if field is not None and field is not expr else
                           size.scaled(io_ns_per_byte(self.catalog, type_oid)))
        return cost

    def _named_function(self, name: str) -> FunctionInfo | None:
        found = self.catalog.functions_by_name.get(name, ())
        return found[0] if found else None

    def _charge(self, function: FunctionInfo | None, expr: Expr, sizes: list[Bound], result: Bound, *,
                comparison: bool = False, argument_types: list[int] | None = None) -> None:
        cost = call_cost(function, sizes, self.policy.products) if not comparison else \
            total(sizes).scaled(COMPARISON_NS_PER_BYTE)
        known = [size if not size.unknown else Bound() for size in sizes]
        self.budget.spend(expr, function, cost, call_memory(function, argument_types or [], known,
                                                            result if not result.unknown else Bound()))
