"""The guard's checks of an analysed query: what it runs, its values' types and sizes, its work.

For every query level (the main SELECT, each CTE, sub-select and set
operation branch), ``check_query_tree`` holds every expression against the
policy:

1. every function it runs is on the allowlist: called by name, behind an
   operator, as a cast, a length coercion or an ``ORDER BY ... USING``; no
   value has a type that looks catalog objects up or is internal plumbing;
   nothing parses XML (``rules/allowed.py``);
2. every value's size bound keeps to the limits: at most
   ``max_built_value_bytes`` from the query's own constants, and at most
   ``max_data_amplification`` times the administrator's data (here);
3. GROUP BY expands to at most ``MAX_GROUPING_SETS`` grouping sets (here);
4. the work of every call, conversion and planner estimate of every level,
   times how often it runs per row, is charged to one budget for the
   statement (``work/charges.py``, ``work/budget.py``), which must stay within
   ``max_expression_milliseconds`` and ``max_expression_memory_bytes``.

The first rule broken raises ``QueryRejected`` naming the expression and,
for a limit, the bound it would exceed.
"""

from __future__ import annotations

from drivers.postgres.guard.model.ir import (
    ArrayOp,
    Call,
    Cast,
    Const,
    Expr,
    FieldSelect,
    MinMax,
    OpCall,
    Param,
    Query,
    RowCompare,
    Xml,
    subqueries,
    walk,
)
from drivers.postgres.guard.model.render import describe
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.rules.allowed import XML_PARSING, AllowedChecks
from drivers.postgres.guard.sizes.bounds import Bound
from drivers.postgres.guard.sizes.size_model import SizeModel
from drivers.postgres.guard.work.budget import RowBudget, kib
from drivers.postgres.guard.work.charges import WorkCharges
from drivers.postgres.guard.work.levels import expression_repeats
from gateway.errors import QueryRejected, RefusalReason

MAX_GROUPING_SETS = 1024
"""The most grouping sets a GROUP BY may expand to. Pairwise incomparable sets (``GROUPING SETS((a),(b)),
GROUPING SETS((c),(d)), ...``) each make a rollup, and the planner's knapsack over them checks for no
interrupts: 1 024 sets planned in 0.19 s, 2 048 in 0.77 s, 4 096 (PostgreSQL's own limit) in 55 s."""
class LevelChecks(AllowedChecks, WorkCharges):
    """The checks of one query level (``functions`` collects the names of what it calls): what may run
    (``rules/allowed.py``), the size caps, and the work charged to the statement's budget (``work/charges.py``)."""

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
            raise QueryRejected(f"{construct} is not allowed: {XML_PARSING}", reason=RefusalReason.FUNCTION)
        self._check_size(expr)

    def _size(self, expr: Expr) -> Bound:
        return self.model.size(expr, self.query)


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

def check_query_tree(root: Query, policy: GuardPolicy) -> tuple[frozenset[str], frozenset[int], frozenset[int]]:
    """Raise ``QueryRejected`` unless every level of ``root`` keeps to ``policy``.

    Answers the functions the query runs, the byte locations of the numeric constants whose values the
    decision read (``Const.value_read``), and the numbers of the parameters whose values it read: the guard
    cache keys those by value.
    """
    model = SizeModel(policy.catalog, root)
    functions: set[str] = set()
    queries = list(subqueries(root))
    budget, repeats = RowBudget(policy.limits, policy.catalog), expression_repeats(root)
    for query in queries:
        LevelChecks(policy, model, query, functions, budget, repeats, sends_rows=query is root).run()
    budget.check()
    constants = [expr for query in queries for top in query.expressions() for expr in walk(top)
                 if isinstance(expr, Const) and expr.value_read]
    read = {const.location for const in constants if const.literal in ("integer", "numeric")}
    parameters = {const.number for const in constants if isinstance(const, Param)}
    return frozenset(functions), frozenset(read), frozenset(parameters)
