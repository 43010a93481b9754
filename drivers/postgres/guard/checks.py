"""The guard's checks of an analysed query: what it calls, the types of its values, their sizes, its work.

For every query level (the main SELECT, each CTE, sub-select and set
operation branch), ``check_query_tree`` holds every expression against the
policy:

1. every function it runs is on the allowlist: called by name, behind an
   operator, as a cast, a length coercion or an ``ORDER BY ... USING``;
2. no value has a type that looks catalog objects up or is internal plumbing
   (a text search configuration only as a bare-name literal argument), and
   nothing parses XML;
3. every value's size bound keeps to the limits: at most
   ``max_built_value_bytes`` from the query's own constants, and at most
   ``max_data_amplification`` times the administrator's data;
4. the work of one row's evaluation (every call of the level, summed, at the
   bounded sizes, ``costs.py``) stays within ``max_expression_milliseconds``,
   and its memory within ``max_expression_memory_bytes``.

The first rule broken raises ``QueryRejected`` naming the expression and,
for a limit, the bound it would exceed.
"""

from __future__ import annotations

import re

from drivers.postgres.guard.model.ir import (
    ArrayOp,
    Call,
    Cast,
    Const,
    Expr,
    FieldSelect,
    MinMax,
    OpCall,
    Query,
    RowCompare,
    Xml,
    subqueries,
    walk,
)
from drivers.postgres.guard.model.render import describe
from drivers.postgres.guard.model.types import BPCHAR, JSON, JSONB, TEXT, VARCHAR, XML, FunctionInfo
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.rules.type_rules import CATALOG_LOOKUP_TYPES, PLUMBING_TYPES, TEXT_SEARCH_LOOKUP_TYPES
from drivers.postgres.guard.sizes.bounds import Bound, total
from drivers.postgres.guard.sizes.jsonpath import compares_sequences
from drivers.postgres.guard.sizes.size_model import SizeModel, constant_text
from drivers.postgres.guard.structure.names import display_name
from drivers.postgres.guard.work.budget import RowBudget, kib
from drivers.postgres.guard.work.conversions import (
    ELEMENT_WISE_FUNCTIONS,
    FIELD_NS,
    RENDERING_FUNCTIONS,
    conversion_memory,
    element_memory,
    io_ns_per_byte,
)
from drivers.postgres.guard.work.costs import COMPARISON_NS_PER_BYTE, PRODUCT_NS_PER_STEP, call_cost, call_memory
from drivers.postgres.guard.work.levels import expression_repeats
from drivers.postgres.guard.work.planner import estimated, estimation_cost
from gateway.errors import QueryRejected, RefusalReason

_AS_IS = frozenset({TEXT, VARCHAR, BPCHAR, JSON, JSONB})
"""Types a rendering function takes as they are, without their output function."""
_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_XML_PARSING = "it parses XML with libxml2, which PostgreSQL cannot interrupt"
MAX_GROUPING_SETS = 1024
"""The most grouping sets a GROUP BY may expand to. Pairwise incomparable sets (``GROUPING SETS((a),(b)),
GROUPING SETS((c),(d)), ...``) each make a rollup, and the planner's knapsack over them checks for no
interrupts: 1 024 sets planned in 0.19 s, 2 048 in 0.77 s, 4 096 (PostgreSQL's own limit) in 55 s."""
JSON_RECORD_MAKERS = frozenset({
    "json_to_record", "json_to_recordset", "jsonb_to_record", "jsonb_to_recordset",
    "json_populate_record", "json_populate_recordset", "jsonb_populate_record", "jsonb_populate_recordset",
})
"""Functions that make rows from JSON, reading each column's value with that column type's input function."""


class LevelChecks:
    """The checks of one query level; ``functions`` collects the names of what it calls."""

    def __init__(self, policy: GuardPolicy, model: SizeModel, query: Query, functions: set[str], budget: RowBudget,
                 repeats: dict[int, int], *, sends_rows: bool = False) -> None:
        self.policy = policy
        self.catalog = policy.catalog
        self.model = model
        self.query = query
        self.functions = functions
        self.sends_rows = sends_rows
        """The statement's own level: its row's values go to the client through their output functions."""
        self.budget = budget
        """The statement's budget: every level's work counts in it (``levels.py``)."""
        self.repeats = repeats
        """How many times a select-list expression runs per row (``levels.expression_repeats``)."""

    def run(self) -> None:
        query = self.query
        if query.grouping_sets > MAX_GROUPING_SETS:
            raise QueryRejected(
                f"GROUP BY expands to {query.grouping_sets:,} grouping sets, over {MAX_GROUPING_SETS:,}: PostgreSQL "
                "cannot interrupt planning them (their rollups are chosen by a search that grows with the cube of "
                "their number); group by fewer sets", reason=RefusalReason.CONSTRUCT)
        for top in query.expressions():
            self.budget.repeats = self.repeats.get(id(top), 1)
            for expr in walk(top):
                self._check(expr)
        self.budget.repeats = 1
        for item in query.sort:
            if item.function is not None:
                self._function(item.function, item.expr)
        for entry in query.entries:
            for column in entry.columns:
                if isinstance(column.expr, FieldSelect) and isinstance(column.expr.arg, Call):
                    self._check_record_field(column.expr, column.expr.arg)
        self._check_set_memory()
        conditions = [query.where, query.having, *(entry.join_condition for entry in query.entries)]
        for condition in filter(None, conditions):
            for expr in walk(condition):
                self._check_estimation(expr)
        if self.sends_rows:
            # The row goes to the client through each value's output function. A value of the
            # administrator's data may be returned whatever its size (reading the data costs as much); what
            # the query's own constants make counts.
            for target in query.targets:
                if not target.junk:
                    made = self._output_cost(target.expr)
                    self.budget.spend(target.expr, "its output function", Bound(made.fixed, 0, made.unknown))

    def _check(self, expr: Expr) -> None:
        self._check_type(expr)
        if isinstance(expr, Const):
            self._check_literal(expr)
        elif isinstance(expr, (Call, OpCall, ArrayOp)):
            self._check_call(expr)
        elif isinstance(expr, RowCompare):
            for function, left, right in zip(expr.functions, expr.left, expr.right):
                if function is not None:
                    self._function(function, expr)
                    self._charge(function, expr, [self._size(left), self._size(right)], Bound(5))
        elif isinstance(expr, Cast):
            self._check_cast(expr)
        elif isinstance(expr, MinMax):
            self._charge(None, expr, [self._size(a) for a in expr.args], Bound(), comparison=True)
        elif isinstance(expr, Xml) and expr.op in ("xmlparse", "document"):
            construct = "XMLPARSE" if expr.op == "xmlparse" else "IS DOCUMENT"
            raise QueryRejected(f"{construct} is not allowed: {_XML_PARSING}", reason=RefusalReason.FUNCTION)
        self._check_size(expr)

    def _size(self, expr: Expr) -> Bound:
        return self.model.size(expr, self.query)

    # Types -------------------------------------------------------------------------------------------------

    def _check_type(self, expr: Expr) -> None:
        info = self.catalog.type(self.catalog.base_type(expr.type))
        if info is None:
            return
        element = self.catalog.type(info.element) if info.is_array else None
        names = {info.name} | ({element.name} if element is not None else set())
        if info.schema != "pg_catalog" and (element is None or element.schema != "pg_catalog"):
            return
        lookup = names & CATALOG_LOOKUP_TYPES
        if lookup:
            if names <= TEXT_SEARCH_LOOKUP_TYPES and isinstance(expr, Const) and not info.is_array and (
                    expr.text is None or _BARE_NAME.fullmatch(expr.text)):
                return
            if names <= TEXT_SEARCH_LOOKUP_TYPES and isinstance(expr, Const):
                raise QueryRejected(
                    f"text search configuration {expr.text!r} is not allowed: give a built-in one as a literal "
                    "bare name, such as 'english' (anything else would look other schemas or OIDs up)",
                    reason=RefusalReason.FUNCTION)
            name = min(lookup)
            raise QueryRejected(f"{describe(expr, self.catalog.type_display)} is not allowed: its type {name} "
                                "looks catalog objects up by name or OID", reason=RefusalReason.TYPE)
        plumbing = names & PLUMBING_TYPES - {"unknown", "void"}
        if plumbing:
            raise QueryRejected(f"{describe(expr, self.catalog.type_display)} is not allowed: its type "
                                f"{min(plumbing)} is internal plumbing, not a data type", reason=RefusalReason.TYPE)

    # Calls -------------------------------------------------------------------------------------------------

    def _function(self, function: FunctionInfo, expr: Expr) -> None:
        name = function.name
        allowed = function.schema == "pg_catalog" and self.policy.functions.allows(name)
        if not allowed:
            reason = self.policy.functions.refusal_reason(name) if function.schema == "pg_catalog" else \
                "it is not a built-in pg_catalog function"
            written = describe(expr, self.catalog.type_display)
            where = "" if isinstance(expr, Call) and expr.function is function else f" (it runs for {written})"
            raise QueryRejected(f"function {display_name(name)} is not allowed{where}: {reason}",
                                reason=RefusalReason.FUNCTION)
        self.functions.add(name)

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
        if not const.parsed_as or const.text is None:
            return
        if const.parsed_as == XML or self.catalog.base_type(const.parsed_as) == XML:
            raise QueryRejected(f"the literal {describe(const)} is read as xml, which is not allowed: "
                                f"{_XML_PARSING}", reason=RefusalReason.TYPE)
        info = self.catalog.type(const.parsed_as)
        parser = self._named_function(info.input_function) if info is not None else None
        if parser is not None and parser.oid in self.policy.products:
            written = Bound(len(const.text.encode("utf-8")))
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
                                f"parses the text: {_XML_PARSING}", reason=RefusalReason.TYPE)
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
                                f"allowed: {_XML_PARSING}", reason=RefusalReason.TYPE)
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

    # Sizes and work ----------------------------------------------------------------------------------------

    def _check_size(self, expr: Expr) -> None:
        size = self._size(expr)
        if size.unknown:
            return
        limits = self.policy.limits
        if size.fixed > limits.max_built_value_bytes:
            raise QueryRejected(
                f"{describe(expr, self.catalog.type_display)} is not allowed: it can build a value of up to "
                f"{kib(size.fixed)} from the query's own constants, over the limit of "
                f"{kib(limits.max_built_value_bytes)} (max_built_value_bytes)",
                reason=RefusalReason.FUNCTION)
        if size.data > limits.max_data_amplification:
            raise QueryRejected(
                f"{describe(expr, self.catalog.type_display)} is not allowed: it can make a value of up to "
                f"{size.data:,} times the size of the stored data it reads, over the limit of "
                f"{limits.max_data_amplification:,} (max_data_amplification)",
                reason=RefusalReason.FUNCTION)

    def _charge(self, function: FunctionInfo | None, expr: Expr, sizes: list[Bound], result: Bound, *,
                comparison: bool = False, argument_types: list[int] | None = None) -> None:
        cost = call_cost(function, sizes, self.policy.products) if not comparison else \
            total(sizes).scaled(COMPARISON_NS_PER_BYTE)
        known = [size if not size.unknown else Bound() for size in sizes]
        self.budget.spend(expr, function, cost, call_memory(function, argument_types or [], known,
                                                            result if not result.unknown else Bound()))


def check_query_tree(root: Query, policy: GuardPolicy) -> tuple[frozenset[str], frozenset[int]]:
    """Raise ``QueryRejected`` unless every level of ``root`` keeps to ``policy``.

    Answers the functions the query runs, and the byte locations of the numeric constants whose values the
    decision read (``Const.value_read``): the guard cache keys those by value.
    """
    model = SizeModel(policy.catalog, root)
    functions: set[str] = set()
    queries = list(subqueries(root))
    budget, repeats = RowBudget(policy.limits, policy.catalog), expression_repeats(root)
    for query in queries:
        LevelChecks(policy, model, query, functions, budget, repeats, sends_rows=query is root).run()
    budget.check()
    read = {expr.location for query in queries for top in query.expressions() for expr in walk(top)
            if isinstance(expr, Const) and expr.value_read and expr.literal in ("integer", "numeric")}
    return frozenset(functions), frozenset(read)
