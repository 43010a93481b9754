"""What the statement generator builds with: the live catalog's types, functions, operators and casts, and
for each type the expressions that have it (a fixture column, a typed literal, ``NULL::type``) and the
text of an unknown-type literal its input function accepts.

An unknown literal is coerced by the type's input function during parse analysis, so ``int4pl('x', 1)``
is an error on the server before anything runs: the generator writes literals valid for the type it
means (``LITERALS``), and a statement whose resolution picks another type may still be such an error.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import psycopg2.extensions

LITERALS: dict[str, str] = {
    "bool": "true", "bytea": "\\x0102", "char": "a", "name": "abc", "int8": "3000000000", "int2": "7",
    "int2vector": "1 2", "int4": "42", "regproc": "now", "text": "abc", "oid": "42", "tid": "(0,1)", "xid": "5",
    "cid": "3", "oidvector": "1 2", "json": '{"a": 1}', "xml": "<a>1</a>", "xid8": "5", "point": "(1,2)",
    "lseg": "[(0,0),(1,1)]", "path": "[(0,0),(1,1)]", "box": "(1,1),(0,0)", "polygon": "((0,0),(1,1),(1,0))",
    "line": "{1,-1,0}", "float4": "1.25", "float8": "2.5", "circle": "<(0,0),1>", "money": "1.50",
    "macaddr": "08:00:2b:01:02:03", "inet": "10.0.0.1", "cidr": "10.0.0.0/8", "macaddr8": "08:00:2b:01:02:03:04:05",
    "bpchar": "abc", "varchar": "abc", "date": "2024-01-01", "time": "12:00:00", "timestamp": "2024-01-01 12:00:00",
    "timestamptz": "2024-01-01 12:00:00+00", "interval": "1 day", "timetz": "12:00:00+02", "bit": "101",
    "varbit": "101", "numeric": "1.5", "refcursor": "c", "regprocedure": "now()", "regoperator": "+(integer,integer)",
    "regclass": "pg_class", "regcollation": "C", "regtype": "integer", "regnamespace": "pg_catalog",
    "uuid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "pg_lsn": "0/16B3748", "tsvector": "a fat cat",
    "tsquery": "fat & cat", "regconfig": "english", "regdictionary": "simple", "jsonb": '{"a": [1, 2]}',
    "jsonpath": "$.a", "txid_snapshot": "10:20:10,14,15", "pg_snapshot": "10:20:10,14,15", "int4range": "[1,5)",
    "numrange": "[1.5,2.5)", "tsrange": "[2024-01-01,2024-02-01)", "tstzrange": "[2024-01-01,2024-02-01)",
    "daterange": "[2024-01-01,2024-02-01)", "int8range": "[1,50)", "int4multirange": "{[1,3)}",
    "nummultirange": "{[1.5,2)}", "datemultirange": "{}", "tsmultirange": "{}", "tstzmultirange": "{}",
    "int8multirange": "{[1,2)}", "cstring": "abc", "posint": "5", "label": "abc", "pair": "(1,abc)",
}
"""Unknown-literal text the input function of each type (by ``typname``) accepts; arrays take ``{}``."""

BARE: dict[str, str] = {"int4": "42", "int8": "3000000000", "numeric": "1.5", "bool": "true"}
"""Types whose constants need no cast: an integer, a too-big integer, a decimal, a boolean."""


def quote(text: str) -> str:
    """``text`` as an SQL string constant."""
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class TypeRow:
    """One ``pg_type`` row of pg_catalog or of the fixture schema."""

    oid: int
    name: str  # typname
    sql: str  # format_type(oid, -1): a cast target that means this type with no typmod
    kind: str  # typtype: b c d e p r m
    category: str
    preferred: bool
    elem: int  # of an array type (typsubscript is array_subscript_handler), else 0
    array: int
    base: int  # of a domain
    schema: str


@dataclass(frozen=True)
class Proc:
    """One function of pg_catalog, with its input arguments only."""

    oid: int
    name: str
    kind: str  # f a w p
    args: tuple[int, ...]
    arg_names: tuple[str, ...]  # of the input arguments; '' where unnamed
    result: int
    retset: bool
    variadic: int  # the element type of a VARIADIC argument, "any" for VARIADIC "any", 0 for none
    defaults: int


@dataclass(frozen=True)
class Operator:
    name: str
    kind: str  # b or l (prefix)
    left: int
    right: int
    result: int


@dataclass
class Palette:
    """The catalog as the generator sees it, and the expressions of each type."""

    types: dict[int, TypeRow]
    procs: list[Proc]
    operators: list[Operator]
    implicit_sources: dict[int, list[int]]  # target -> sources with an implicit cast
    casts: set[tuple[int, int]]  # (source, target) of every pg_cast row
    ranges: dict[int, tuple[int, int]]  # range type -> (subtype, multirange type)
    columns: dict[str, list[tuple[str, int, int]]]  # fixture table -> (column, type, typmod)
    enum_labels: dict[int, list[str]]
    by_name: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.by_name = {}
        for row in sorted(self.types.values(), key=lambda row: (row.schema != "pg_catalog", row.oid)):
            self.by_name.setdefault(row.name, row.oid)
            self.by_name.setdefault(f"{row.schema}.{row.name}", row.oid)

    @classmethod
    def read(cls, connection: psycopg2.extensions.connection) -> Palette:
        """Read the catalog of ``connection``'s database (pg_catalog and schema tf)."""
        with connection.cursor() as cursor:
            cursor.execute(_TYPES_SQL)
            types = {row[0]: TypeRow(*row) for row in cursor.fetchall()}
            cursor.execute(_PROCS_SQL)
            procs = [_proc(*row) for row in cursor.fetchall()]
            cursor.execute(_OPERATORS_SQL)
            operators = [Operator(*row) for row in cursor.fetchall()]
            cursor.execute("SELECT castsource, casttarget, castcontext FROM pg_cast ORDER BY 1, 2")
            cast_rows = cursor.fetchall()
            cursor.execute("SELECT rngtypid, rngsubtype, rngmultitypid FROM pg_range ORDER BY 1")
            ranges = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}
            cursor.execute(_COLUMNS_SQL)
            columns: dict[str, list[tuple[str, int, int]]] = {}
            for table, name, type_, typmod in cursor.fetchall():
                columns.setdefault(table, []).append((name, type_, typmod))
            cursor.execute("SELECT enumtypid, enumlabel FROM pg_enum ORDER BY enumtypid, enumsortorder")
            enum_labels: dict[int, list[str]] = {}
            for type_, label in cursor.fetchall():
                enum_labels.setdefault(type_, []).append(label)
        implicit: dict[int, list[int]] = {}
        for source, target, context in cast_rows:
            if context == "i":
                implicit.setdefault(target, []).append(source)
        casts = {(source, target) for source, target, _ in cast_rows}
        return cls(types, procs, operators, implicit, casts, ranges, columns, enum_labels)

    # -- names -------------------------------------------------------------------------------------------
    def oid(self, name: str) -> int:
        """The OID of a type by ``typname`` (``int4``, ``_text``, ``anyelement``) or ``tf.name``."""
        return self.by_name[name]

    def sql(self, oid: int) -> str:
        """A cast target meaning this type, no typmod."""
        return self.types[oid].sql

    def is_array(self, oid: int) -> bool:
        return self.types[oid].elem != 0 and self.types[oid].name.startswith("_")

    # -- expressions ---------------------------------------------------------------------------------------
    def columns_of(self, oid: int, table: str = "t") -> list[str]:
        """The fixture columns of exactly this type, qualified (``t.c_int4``)."""
        return [f"{table}.{name}" for name, type_, _ in self.columns.get(table, ()) if type_ == oid]

    def column_types(self, table: str = "t") -> list[int]:
        """The distinct types of the fixture table's columns, in column order."""
        return list(dict.fromkeys(type_ for _, type_, _ in self.columns[table]))

    def literal(self, oid: int) -> str | None:
        """An unknown literal (quoted) that this type's input function takes, if the palette knows one."""
        row = self.types.get(oid)
        if row is None:
            return None
        if row.kind == "e":
            return quote(self.enum_labels[oid][0])
        if self.is_array(oid):
            return "'{}'"
        text = LITERALS.get(row.name)
        return None if text is None else quote(text)

    def constant(self, oid: int, rng: random.Random) -> str:
        """A constant of exactly this type: a bare number, a cast literal, or ``NULL::type``."""
        row = self.types[oid]
        if row.name in BARE and row.schema == "pg_catalog" and rng.random() < 0.7:
            return BARE[row.name]
        if oid == self.oid("record"):
            return "ROW(1, 'a'::text)"
        literal = self.literal(oid)
        if self.is_array(oid) and rng.random() < 0.5 and self.types[row.elem].kind != "p":
            element = self.constant(row.elem, rng)
            return f"ARRAY[{element}]::{row.sql}" if element.startswith("NULL") else f"ARRAY[{element}]"
        if literal is None or rng.random() < 0.1:
            return f"NULL::{row.sql}"
        return f"{literal}::{row.sql}"

    def value(self, oid: int, rng: random.Random) -> str:
        """An expression of exactly this type: a fixture column of ``tf.t`` when there is one, or a constant."""
        columns = self.columns_of(oid)
        if oid == self.oid("tf.t"):
            return "t"
        if columns and rng.random() < 0.75:
            return rng.choice(columns)
        return self.constant(oid, rng)

    def implicit_source(self, oid: int, rng: random.Random) -> int | None:
        """A type (with a fixture column) that casts to ``oid`` implicitly, or None."""
        sources = [source for source in self.implicit_sources.get(oid, ()) if self.columns_of(source)]
        return rng.choice(sources) if sources else None

    def concrete_types(self) -> list[int]:
        """The types a fixture column has: the ordinary values the generator mixes."""
        return self.column_types("t")

    def range_of(self, subtype: int) -> int | None:
        """The range type over ``subtype`` (the first by OID), if any."""
        for range_type, (sub, _) in sorted(self.ranges.items()):
            if sub == subtype:
                return range_type
        return None


def _proc(oid: int, name: str, kind: str, args: list[int], result: int, retset: bool, variadic: int,
          defaults: int, names: list[str] | None, modes: list[str] | None) -> Proc:
    """A Proc from a pg_proc row; ``names`` and ``modes`` cover all arguments, OUT ones too."""
    if names and modes:
        names = [name_ for name_, mode in zip(names, modes, strict=True) if mode in ("i", "b", "v")]
    arg_names = tuple(names or ()) if names and len(names) == len(args) else ("",) * len(args)
    return Proc(oid, name, kind, tuple(args), arg_names, result, retset, variadic, defaults)


_TYPES_SQL = """
SELECT t.oid::int, t.typname::text, pg_catalog.format_type(t.oid, -1), t.typtype::text, t.typcategory::text,
       t.typispreferred, CASE WHEN t.typsubscript = 'array_subscript_handler'::regproc THEN t.typelem::int
       ELSE 0 END, t.typarray::int, t.typbasetype::int, n.nspname::text
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE n.nspname IN ('pg_catalog', 'tf') ORDER BY t.oid
"""

_PROCS_SQL = """
SELECT p.oid::int, p.proname::text, p.prokind::text, p.proargtypes::oid[]::int[], p.prorettype::int, p.proretset,
       p.provariadic::int, p.pronargdefaults::int, p.proargnames, p.proargmodes::text[]
FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace ORDER BY p.proname, p.oid
"""

_OPERATORS_SQL = """
SELECT o.oprname::text, o.oprkind::text, o.oprleft::int, o.oprright::int, o.oprresult::int
FROM pg_operator o WHERE o.oprnamespace = 'pg_catalog'::regnamespace ORDER BY o.oprname, o.oprleft, o.oprright
"""

_COLUMNS_SQL = """
SELECT c.relname::text, a.attname::text, a.atttypid::int, a.atttypmod
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relnamespace = 'tf'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum
"""
