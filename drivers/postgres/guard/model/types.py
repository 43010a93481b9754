"""The catalog rows the type model reads, and the OIDs PostgreSQL fixes at initdb.

Built-in OIDs (``pg_type.dat``) are the same in every PostgreSQL release and
database, so the model names them directly, as PostgreSQL's own C code does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

BOOL: Final = 16
BYTEA: Final = 17
CHAR: Final = 18
NAME: Final = 19
INT8: Final = 20
INT2: Final = 21
INT4: Final = 23
TEXT: Final = 25
OID: Final = 26
TID: Final = 27
XID: Final = 28
CID: Final = 29
JSON: Final = 114
XML: Final = 142
FLOAT4: Final = 700
FLOAT8: Final = 701
UNKNOWN: Final = 705
BPCHAR: Final = 1042
VARCHAR: Final = 1043
DATE: Final = 1082
TIME: Final = 1083
TIMESTAMP: Final = 1114
TIMESTAMPTZ: Final = 1184
INTERVAL: Final = 1186
TIMETZ: Final = 1266
BIT: Final = 1560
VARBIT: Final = 1562
NUMERIC: Final = 1700
RECORD: Final = 2249
CSTRING: Final = 2275
ANY: Final = 2276
ANYARRAY: Final = 2277
VOID: Final = 2278
ANYELEMENT: Final = 2283
ANYNONARRAY: Final = 2776
ANYENUM: Final = 3500
ANYRANGE: Final = 3831
ANYMULTIRANGE: Final = 4537
ANYCOMPATIBLE: Final = 5077
ANYCOMPATIBLEARRAY: Final = 5078
ANYCOMPATIBLENONARRAY: Final = 5079
ANYCOMPATIBLERANGE: Final = 5080
ANYCOMPATIBLEMULTIRANGE: Final = 4538
RECORD_ARRAY: Final = 2287
TEXT_ARRAY: Final = 1009
JSONB: Final = 3802
JSONPATH: Final = 4072
OIDVECTOR: Final = 30
INTERNAL: Final = 2281
INT2VECTOR: Final = 22
REGCONFIG: Final = 3734
TSVECTOR: Final = 3614
REGDICTIONARY: Final = 3769

POLYMORPHIC_FAMILY_1: Final = frozenset({ANYELEMENT, ANYARRAY, ANYNONARRAY, ANYENUM, ANYRANGE, ANYMULTIRANGE})
POLYMORPHIC_FAMILY_2: Final = frozenset({
    ANYCOMPATIBLE, ANYCOMPATIBLEARRAY, ANYCOMPATIBLENONARRAY, ANYCOMPATIBLERANGE, ANYCOMPATIBLEMULTIRANGE,
})
POLYMORPHIC: Final = POLYMORPHIC_FAMILY_1 | POLYMORPHIC_FAMILY_2
"""``IsPolymorphicType``."""


@attrs.frozen
class TypeInfo:
    """One ``pg_type`` row (with its ``pg_range`` facts)."""

    oid: int
    """The type's OID."""
    name: str
    """``typname``."""
    schema: str
    """The schema it lives in."""
    kind: str
    """``typtype``: b base, c composite, d domain, e enum, p pseudo, r range, m multirange."""
    category: str
    """``typcategory``: A array, B boolean, C composite, D date/time, E enum, G geometric, I network,
    N numeric, P pseudo, R range, S string, T timespan, U user, V bit string, X unknown."""
    preferred: bool
    """``typispreferred``."""
    length: int
    """``typlen``: bytes of a fixed-length type, -1 varlena, -2 C string."""
    element: int
    """``typelem``."""
    array: int
    """``typarray``: the array type over this type, or 0."""
    relation: int
    """``typrelid``: the relation of a composite type, or 0."""
    base: int
    """``typbasetype`` of a domain, else 0."""
    base_typmod: int
    """``typtypmod`` of a domain (-1 when none)."""
    collatable: bool
    """True when the type has a collation."""
    input_function: str
    """Name of ``typinput``: what reads a literal of this type at parse analysis."""
    output_function: str
    """Name of ``typoutput``: what prints a value of this type."""
    subscript: str
    """Name of ``typsubscript`` (``array_subscript_handler``, ``jsonb_subscript_handler``...), or empty."""
    display: str
    """``format_type(oid, NULL)``: how messages name it."""
    range_subtype: int = 0
    """The element type of a range type (``rngsubtype``), else 0."""
    multirange: int = 0
    """The multirange type over a range type (``rngmultitypid``), else 0."""
    multirange_range: int = 0
    """The range type of a multirange type, else 0."""

    @property
    def is_array(self) -> bool:
        """True for a true array type (``_int4``), not for int2vector-like subscriptable types."""
        return self.category == "A" and self.element != 0 and self.length == -1 and self.name.startswith("_")


@attrs.frozen
class Column:
    """One column of a relation or composite type."""

    name: str
    """``attname``."""
    type: int
    """``atttypid``."""
    typmod: int
    """``atttypmod``."""


def column(name: str, type_oid: int, typmod: int) -> Column:
    """A ``Column``."""
    return Column(name, type_oid, typmod)


SYSTEM_COLUMNS: Final = (
    Column("tableoid", OID, -1), Column("cmax", CID, -1), Column("xmax", XID, -1), Column("cmin", CID, -1),
    Column("xmin", XID, -1), Column("ctid", TID, -1),
)
"""The system columns of a table (``SystemAttributeDefinition``)."""


@attrs.frozen
class RelationInfo:
    """One user relation or composite type with its columns."""

    oid: int
    """``pg_class.oid``."""
    schema: str
    """Its schema."""
    name: str
    """``relname``."""
    kind: str
    """``relkind``: r table, v view, m materialized view, f foreign table, p partitioned table, c composite type."""
    row_type: int
    """``reltype``: its row type."""
    columns: tuple[Column, ...]
    """Its columns in order, dropped ones left out."""
    narrowed: bool = False
    """Seen through a token's narrowed grant (``grants/``): only the granted columns, and read as a sub-select
    (no system columns, its whole row an anonymous record)."""
    unique_columns: frozenset[str] = frozenset()
    """Columns that are alone the key of a valid unique index without predicate or expression: the planner
    estimates ``column = value`` on them as one row, whatever its statistics hold (``grants/leakproof.py``)."""

    @property
    def has_system_columns(self) -> bool:
        """True for relations that store rows (views and composite types have no system columns)."""
        return self.kind in ("r", "m", "f", "p") and not self.narrowed


@attrs.frozen
class FunctionInfo:
    """One ``pg_proc`` row (with its ``pg_aggregate`` kind)."""

    oid: int
    """The function's OID."""
    name: str
    """``proname``."""
    schema: str
    """The schema it lives in."""
    kind: str
    """``prokind``: f function, a aggregate, w window, p procedure."""
    volatility: str
    """``provolatile``: i immutable, s stable, v volatile."""
    result: int
    """``prorettype``."""
    arguments: tuple[int, ...]
    """``proargtypes``: the input arguments' types."""
    all_arguments: tuple[int, ...]
    """``proallargtypes``, or ``arguments`` when the function has no OUT arguments."""
    argument_modes: tuple[str, ...]
    """``proargmodes`` (i, o, b, v, t), or empty when every argument is IN."""
    argument_names: tuple[str, ...]
    """``proargnames`` (all arguments, as ``proallargtypes``), or empty."""
    defaults: int
    """``pronargdefaults``."""
    variadic: int
    """``provariadic``: the VARIADIC argument's element type, or 0."""
    returns_set: bool
    """``proretset``."""
    source: str
    """``prosrc`` of an internal or C function (its C symbol), else empty."""
    strict: bool
    """``proisstrict``."""
    leakproof: bool
    """``proleakproof``."""
    aggregate_kind: str
    """``aggkind`` of an aggregate: n normal, o ordered-set, h hypothetical-set; empty otherwise."""
    direct_arguments: int
    """``aggnumdirectargs`` of an ordered-set aggregate."""

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> FunctionInfo:
        """Build from one array of ``CATALOG_SQL``'s functions."""
        arguments = tuple(int(oid) for oid in row[6] or ())
        return cls(
            oid=int(row[0]), name=str(row[1]), schema=str(row[2]), kind=str(row[3]), volatility=str(row[4]),
            result=int(row[5]), arguments=arguments,
            all_arguments=tuple(int(oid) for oid in row[7]) if row[7] else arguments,
            argument_modes=tuple(str(m) for m in row[8] or ()), argument_names=tuple(str(n) for n in row[9] or ()),
            defaults=int(row[10] or 0), variadic=int(row[11] or 0), returns_set=bool(row[12]),
            source=str(row[13] or ""), strict=bool(row[14]), leakproof=bool(row[15]),
            aggregate_kind=str(row[16] or ""), direct_arguments=int(row[17] or 0),
        )

    def output_columns(self) -> tuple[tuple[str, int], ...]:
        """The OUT/INOUT/TABLE arguments as (name, type): the columns of a function returning ``record``."""
        if not self.argument_modes:
            return ()
        found: list[tuple[str, int]] = []
        for position, mode in enumerate(self.argument_modes):
            if mode in ("o", "b", "t"):
                name = self.argument_names[position] if position < len(self.argument_names) else ""
                found.append((name or f"column{len(found) + 1}", self.all_arguments[position]))
        return tuple(found)

    def input_names(self) -> tuple[str, ...]:
        """The names of the input arguments in order ('' when unnamed)."""
        if not self.argument_names:
            return ("",) * len(self.arguments)
        if not self.argument_modes:
            return tuple(self.argument_names[: len(self.arguments)])
        return tuple(name for name, mode in zip(self.argument_names, self.argument_modes) if mode in ("i", "b", "v"))


@attrs.frozen
class OperatorInfo:
    """One ``pg_operator`` row of pg_catalog."""

    oid: int
    """The operator's OID."""
    name: str
    """``oprname``."""
    kind: str
    """``oprkind``: b infix, l prefix."""
    left: int
    """``oprleft`` (0 for a prefix operator)."""
    right: int
    """``oprright``."""
    result: int
    """``oprresult``."""
    function: int
    """``oprcode``: the function that implements it (0 for a shell)."""

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> OperatorInfo:
        """Build from one array of ``CATALOG_SQL``'s operators."""
        return cls(int(row[0]), str(row[1]), str(row[2]), int(row[3]), int(row[4]), int(row[5]), int(row[6]))
