"""The analysed tree's SQL constructs: CASE, COALESCE, GREATEST, ARRAY, ROW, fields, subscripts..."""

from __future__ import annotations

from collections.abc import Iterator

from drivers.postgres.guard.model.ir.expressions import Expr
from drivers.postgres.guard.model.types import BOOL


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
