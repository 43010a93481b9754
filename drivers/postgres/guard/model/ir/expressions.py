"""The analysed tree's base ``Expr``, the nodes calls, operators and casts make (with their sort items and
windows), and the walk over them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from drivers.postgres.guard.model.types import BOOL, FunctionInfo, OperatorInfo


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


class Param(Const):
    """``$n``: a value the client sends beside the query (issue 23), typed as PostgreSQL deduces a variable
    parameter's type (``parse_param.c``: from the first place that coerces it; ``unknown`` until then). Its
    ``text`` is the value sent (None for NULL): sizes and costs read it as they read a literal's, and
    ``parsed_as`` is the type whose input function will read it.

    Reading ``text`` marks the value read (``value_read``): the guard cache keys a parameter by its kind and
    size only (``cache.parameter_signature``), so any other use of the value must pin it. ``unread`` is the
    value for the two readers that use no more than the signature holds: a value's byte length, and a
    number-shaped value's printed size (``SizeModel.literal``, ``LevelChecks._check_literal``)."""

    __slots__ = ("number", "unread")

    def __init__(self, type_oid: int, number: int, text: str | None, location: int = -1) -> None:
        super().__init__(type_oid, text, "parameter", location, parsed_as=type_oid if type_oid != 705 else 0)
        self.number = number
        """``n`` of ``$n``."""

    @property  # type: ignore[override]
    def text(self) -> str | None:
        self.value_read = True
        return self.unread

    @text.setter
    def text(self, value: str | None) -> None:
        self.unread = value


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


def walk(expr: Expr) -> Iterator[Expr]:
    """``expr`` and every expression under it, depth first, without entering sub-queries."""
    stack: list[Expr] = [expr]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children())


def field(node: dict[str, Any], name: str, default: Any = None) -> Any:
    """A field of a raw node; pglast's JSON leaves out fields at their default value."""
    return node.get(name, default)
