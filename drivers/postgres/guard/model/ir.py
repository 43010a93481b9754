"""The analysed query: every expression typed, every name resolved (PostgreSQL's ``Query`` and ``Expr`` nodes).

``analysis.py`` builds these from pglast's raw parse tree as PostgreSQL's
parse analysis builds its own; the safety checks (``checks.py``) and the
size model (``sizes.py``) read them. Each expression carries its type OID and
typmod; calls carry the catalog row of the function or operator they resolved
to; implicit coercions are explicit ``Cast`` nodes, as in PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from drivers.postgres.guard.model.types import BOOL, FunctionInfo, OperatorInfo, RelationInfo


class Expr:
    """An analysed expression: its type and typmod, and its sub-expressions."""

    __slots__ = ("type", "typmod", "location")

    def __init__(self, type_oid: int, typmod: int = -1, location: int = -1) -> None:
        self.type = type_oid
        self.typmod = typmod
        self.location = location

    def children(self) -> Iterator[Expr]:
        """The direct sub-expressions (not those of sub-queries)."""
        return iter(())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for cls in type(self).__mro__
                           for name in getattr(cls, "__slots__", ()) if name != "location")
        return f"{type(self).__name__}({fields})"


class Const(Expr):
    """A literal. ``text`` is its text (None for NULL); a string literal read by a type's input function at
    parse analysis keeps ``text`` and gets that type (``parsed_as``)."""

    __slots__ = ("text", "literal", "parsed_as", "value_read")

    def __init__(self, type_oid: int, text: str | None, literal: str, location: int = -1,
                 typmod: int = -1, parsed_as: int = 0) -> None:
        super().__init__(type_oid, typmod, location)
        self.text = text
        self.literal = literal
        """``integer``, ``numeric``, ``string``, ``bits``, ``boolean`` or ``null``: what the grammar saw."""
        self.parsed_as = parsed_as
        """The type whose input function read ``text`` at parse analysis (0 when none did)."""
        self.value_read = False
        """True once a size rule has read this constant's value (a count, a length, a dimension): the guard's
        decision then depends on it, and its cache must not reuse the decision for another value."""


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


class CaseTest(Expr):
    """The CASE operand inside a ``CASE x WHEN v`` comparison (``CaseTestExpr``)."""

    __slots__ = ("source",)

    def __init__(self, source: Expr) -> None:
        super().__init__(source.type, source.typmod)
        self.source = source
        """The CASE operand it stands for."""


class Call(Expr):
    """A call of a function: plain, aggregate (``Aggref``) or window function (``WindowFunc``)."""

    __slots__ = ("function", "args", "variadic", "kind", "direct_args", "order", "distinct", "filter", "star",
                 "window", "returns_set")

    def __init__(self, type_oid: int, function: FunctionInfo, args: list[Expr], *, typmod: int = -1,
                 variadic: bool = False, kind: str = "function", location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.function = function
        self.args = args
        self.variadic = variadic
        self.kind = kind
        """``function``, ``aggregate`` or ``window``."""
        self.direct_args: list[Expr] = []
        """An ordered-set aggregate's direct arguments (``args`` holds the aggregated ones)."""
        self.order: list[SortItem] = []
        """An aggregate's ORDER BY."""
        self.distinct = False
        self.filter: Expr | None = None
        self.star = False
        self.window: Window | None = None
        self.returns_set = function.returns_set

    def children(self) -> Iterator[Expr]:
        yield from self.direct_args
        yield from self.args
        for item in self.order:
            yield item.expr
        if self.filter is not None:
            yield self.filter


class OpCall(Expr):
    """An operator applied (``OpExpr``); ``form`` says how: ``op``, ``distinct`` (IS DISTINCT FROM, its ``=``),
    ``nullif`` (NULLIF, its ``=``; typed as the left operand)."""

    __slots__ = ("operator", "function", "args", "form")

    def __init__(self, type_oid: int, operator: OperatorInfo, function: FunctionInfo | None, args: list[Expr],
                 form: str = "op", location: int = -1) -> None:
        super().__init__(type_oid, -1, location)
        self.operator = operator
        self.function = function
        self.args = args
        self.form = form

    @property
    def returns_set(self) -> bool:
        """True when the operator's function returns a set."""
        return self.function is not None and self.function.returns_set

    def children(self) -> Iterator[Expr]:
        return iter(self.args)


class ArrayOp(Expr):
    """``x op ANY/ALL (array)`` (``ScalarArrayOpExpr``); ``args`` is [x, array]."""

    __slots__ = ("operator", "function", "args", "use_or")

    def __init__(self, operator: OperatorInfo, function: FunctionInfo | None, args: list[Expr], use_or: bool,
                 location: int = -1) -> None:
        super().__init__(BOOL, -1, location)
        self.operator = operator
        self.function = function
        self.args = args
        self.use_or = use_or

    def children(self) -> Iterator[Expr]:
        return iter(self.args)


class RowCompare(Expr):
    """``ROW(a, b) op ROW(c, d)``: one operator per pair."""

    __slots__ = ("operators", "functions", "left", "right")

    def __init__(self, operators: list[OperatorInfo], functions: list[FunctionInfo | None], left: list[Expr],
                 right: list[Expr], location: int = -1) -> None:
        super().__init__(BOOL, -1, location)
        self.operators = operators
        self.functions = functions
        self.left = left
        self.right = right

    def children(self) -> Iterator[Expr]:
        yield from self.left
        yield from self.right


class BoolOp(Expr):
    """AND, OR, NOT."""

    __slots__ = ("op", "args")

    def __init__(self, op: str, args: list[Expr], location: int = -1) -> None:
        super().__init__(BOOL, -1, location)
        self.op = op
        self.args = args

    def children(self) -> Iterator[Expr]:
        return iter(self.args)


class Cast(Expr):
    """A coercion, implicit or written: through a cast function (``function``), a relabelling, an I/O
    conversion (``path`` ``io``: the source's output function, then the target's input function), element by
    element (``path`` ``array``, ``element`` the coercion of one element), or to a domain."""

    __slots__ = ("arg", "path", "function", "explicit", "element", "domain", "length_function")

    def __init__(self, type_oid: int, typmod: int, arg: Expr, path: str, *, function: FunctionInfo | None = None,
                 explicit: bool = False, element: Cast | None = None, location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.arg = arg
        self.path = path
        """``function``, ``relabel``, ``io``, ``array``, ``domain``, ``row`` (one row type to another)."""
        self.function = function
        self.explicit = explicit
        self.element = element
        self.length_function: FunctionInfo | None = None
        """The typmod coercion (``varchar(n)``, ``numeric(p, s)``) applied after, if any."""

    def children(self) -> Iterator[Expr]:
        yield self.arg


class Case(Expr):
    """CASE; with an operand, each WHEN is ``CaseTest = value``."""

    __slots__ = ("arg", "whens", "default")

    def __init__(self, type_oid: int, arg: Expr | None, whens: list[tuple[Expr, Expr]], default: Expr,
                 typmod: int = -1, location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.arg = arg
        self.whens = whens
        self.default = default

    def children(self) -> Iterator[Expr]:
        if self.arg is not None:
            yield self.arg
        for condition, result in self.whens:
            yield condition
            yield result
        yield self.default


class Coalesce(Expr):
    """COALESCE."""

    __slots__ = ("args",)

    def __init__(self, type_oid: int, args: list[Expr], typmod: int = -1, location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.args = args

    def children(self) -> Iterator[Expr]:
        return iter(self.args)


class MinMax(Expr):
    """GREATEST or LEAST (compared with the type's default btree order)."""

    __slots__ = ("op", "args")

    def __init__(self, type_oid: int, op: str, args: list[Expr], typmod: int = -1, location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.op = op
        self.args = args

    def children(self) -> Iterator[Expr]:
        return iter(self.args)


class Array(Expr):
    """ARRAY[...] (``ArrayExpr``); ``multidims`` when its elements are arrays."""

    __slots__ = ("element_type", "elements", "multidims")

    def __init__(self, type_oid: int, element_type: int, elements: list[Expr], multidims: bool,
                 typmod: int = -1, location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.element_type = element_type
        self.elements = elements
        self.multidims = multidims

    def children(self) -> Iterator[Expr]:
        return iter(self.elements)


class Row(Expr):
    """ROW(...) (``RowExpr``): a ``record`` with fields ``names``, or a composite type."""

    __slots__ = ("args", "names")

    def __init__(self, type_oid: int, args: list[Expr], names: list[str], location: int = -1) -> None:
        super().__init__(type_oid, -1, location)
        self.args = args
        self.names = names

    def children(self) -> Iterator[Expr]:
        return iter(self.args)


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


class SetOpColumn(Expr):
    """One output column of UNION, INTERSECT or EXCEPT: either branch's column, coerced to the common type."""

    __slots__ = ("sources",)

    def __init__(self, type_oid: int, typmod: int, sources: list[Expr]) -> None:
        super().__init__(type_oid, typmod)
        self.sources = sources


class FieldSelect(Expr):
    """``(x).field`` of a composite value."""

    __slots__ = ("arg", "field")

    def __init__(self, type_oid: int, typmod: int, arg: Expr, field: str, location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.arg = arg
        self.field = field

    def children(self) -> Iterator[Expr]:
        yield self.arg


class Subscript(Expr):
    """``x[i]`` or ``x[i:j]`` (``SubscriptingRef``), through the container type's subscript handler."""

    __slots__ = ("container", "upper", "lower", "is_slice", "handler")

    def __init__(self, type_oid: int, typmod: int, container: Expr, upper: list[Expr | None],
                 lower: list[Expr | None], is_slice: bool, handler: str, location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.container = container
        self.upper = upper
        self.lower = lower
        self.is_slice = is_slice
        self.handler = handler

    def children(self) -> Iterator[Expr]:
        yield self.container
        yield from (e for e in self.upper if e is not None)
        yield from (e for e in self.lower if e is not None)


class Test(Expr):
    """``IS [NOT] NULL`` (``NullTest``) or ``IS [NOT] TRUE/FALSE/UNKNOWN`` (``BooleanTest``)."""

    __slots__ = ("arg", "test")

    def __init__(self, arg: Expr, test: str, location: int = -1) -> None:
        super().__init__(BOOL, -1, location)
        self.arg = arg
        self.test = test

    def children(self) -> Iterator[Expr]:
        yield self.arg


class ValueFunction(Expr):
    """CURRENT_DATE, LOCALTIMESTAMP and friends (``SQLValueFunction``)."""

    __slots__ = ("name",)

    def __init__(self, type_oid: int, name: str, typmod: int = -1, location: int = -1) -> None:
        super().__init__(type_oid, typmod, location)
        self.name = name


class Collate(Expr):
    """``x COLLATE name``."""

    __slots__ = ("arg", "collation")

    def __init__(self, arg: Expr, collation: str, location: int = -1) -> None:
        super().__init__(arg.type, arg.typmod, location)
        self.arg = arg
        self.collation = collation

    def children(self) -> Iterator[Expr]:
        yield self.arg


class Grouping(Expr):
    """GROUPING(...)."""

    __slots__ = ("args",)

    def __init__(self, type_oid: int, args: list[Expr], location: int = -1) -> None:
        super().__init__(type_oid, -1, location)
        self.args = args

    def children(self) -> Iterator[Expr]:
        return iter(self.args)


class Xml(Expr):
    """An SQL/XML construct (``XmlExpr``): xmlelement, xmlforest, xmlconcat, xmlpi, xmlroot, xmlserialize."""

    __slots__ = ("op", "args", "named_args")

    def __init__(self, type_oid: int, op: str, args: list[Expr], named_args: list[Expr],
                 location: int = -1) -> None:
        super().__init__(type_oid, -1, location)
        self.op = op
        self.args = args
        self.named_args = named_args

    def children(self) -> Iterator[Expr]:
        yield from self.named_args
        yield from self.args


class SortItem:
    """One ORDER BY item: the expression and, for ``USING op``, its operator."""

    __slots__ = ("expr", "operator", "function")

    def __init__(self, expr: Expr, operator: OperatorInfo | None = None, function: FunctionInfo | None = None):
        self.expr = expr
        self.operator = operator
        self.function = function


class Window:
    """A window definition: PARTITION BY, ORDER BY and the frame offsets."""

    __slots__ = ("name", "partition", "order", "start_offset", "end_offset")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.partition: list[Expr] = []
        self.order: list[SortItem] = []
        self.start_offset: Expr | None = None
        self.end_offset: Expr | None = None

    def expressions(self) -> Iterator[Expr]:
        """Every expression of the definition."""
        yield from self.partition
        yield from (item.expr for item in self.order)
        yield from (e for e in (self.start_offset, self.end_offset) if e is not None)


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


def walk(expr: Expr) -> Iterator[Expr]:
    """``expr`` and every expression under it, depth first, without entering sub-queries."""
    stack: list[Expr] = [expr]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children())


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
                    

def field(node: dict[str, Any], name: str, default: Any = None) -> Any:
    """A field of a raw node; pglast's JSON leaves out fields at their default value."""
    return node.get(name, default)
