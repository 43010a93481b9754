"""What the guard knows of one database's catalog, read in one round trip per pool.

``CATALOG_SQL`` answers one row of JSON texts: the types (every type of
``pg_catalog`` and of the schemas that hold user relations), the functions and
operators of ``pg_catalog`` (the only schema a GetData session searches:
``search_path=pg_catalog``) and the functions behind casts, every cast, the
aggregates' kinds, the ranges, the collations of ``pg_catalog``, and every
user relation with its columns (tables, views, materialized views, foreign
and partitioned tables, and composite types). ``Catalog.from_row`` builds the
immutable snapshot the type model (``analysis.py``) resolves names against;
``Catalog.from_rows`` builds one from plain rows, for tests.

Only what parse analysis reads is here: PostgreSQL resolves a query from the
same catalog rows (``pg_proc``, ``pg_operator``, ``pg_cast``, ``pg_type``,
``pg_attribute``), following the rules of the manual's chapter "Type
Conversion".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import orjson

from drivers.postgres.guard.model.types import (
    FunctionInfo,
    OperatorInfo,
    RelationInfo,
    TypeInfo,
    column,
)

_USER_SCHEMAS = """n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'"""

CATALOG_SQL = f"""
WITH user_schemas AS (
  SELECT n.oid FROM pg_catalog.pg_namespace n WHERE {_USER_SCHEMAS}
)
SELECT
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(
       t.oid, t.typname, n.nspname, t.typtype, t.typcategory, t.typispreferred, t.typlen, t.typelem,
       t.typarray, t.typrelid, t.typbasetype, t.typtypmod, t.typcollation <> 0, i.proname, o.proname,
       CASE WHEN t.typsubscript <> 0 THEN t.typsubscript::pg_catalog.regproc::pg_catalog.text END,
       pg_catalog.format_type(t.oid, NULL), t.typdelim))
   FROM pg_catalog.pg_type t
   JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
   LEFT JOIN pg_catalog.pg_proc i ON i.oid = t.typinput
   LEFT JOIN pg_catalog.pg_proc o ON o.oid = t.typoutput
   WHERE n.nspname = 'pg_catalog' OR t.typnamespace IN (SELECT oid FROM user_schemas))::text,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(
       p.oid, p.proname, n.nspname, p.prokind, p.provolatile, p.prorettype, p.proargtypes::pg_catalog.oid[],
       p.proallargtypes, p.proargmodes, p.proargnames, p.pronargdefaults, p.provariadic, p.proretset,
       CASE WHEN p.prolang IN (12, 13) THEN p.prosrc END, p.proisstrict, p.proleakproof,
       a.aggkind, a.aggnumdirectargs))
   FROM pg_catalog.pg_proc p
   JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
   LEFT JOIN pg_catalog.pg_aggregate a ON a.aggfnoid = p.oid
   WHERE n.nspname = 'pg_catalog'
      OR p.oid IN (SELECT c.castfunc FROM pg_catalog.pg_cast c))::text,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(
       o.oid, o.oprname, o.oprkind, o.oprleft, o.oprright, o.oprresult, o.oprcode::pg_catalog.oid))
   FROM pg_catalog.pg_operator o
   JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
   WHERE n.nspname = 'pg_catalog')::text,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(
       c.castsource, c.casttarget, c.castfunc, c.castcontext, c.castmethod))
   FROM pg_catalog.pg_cast c)::text,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(r.rngtypid, r.rngsubtype, r.rngmultitypid))
   FROM pg_catalog.pg_range r)::text,
  (SELECT pg_catalog.json_agg(c.collname)
   FROM pg_catalog.pg_collation c
   JOIN pg_catalog.pg_namespace n ON n.oid = c.collnamespace
   WHERE n.nspname = 'pg_catalog'
     AND c.collencoding IN (-1, (SELECT d.encoding FROM pg_catalog.pg_database d
                                 WHERE d.datname = pg_catalog.current_database())))::text,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(
       c.oid, n.nspname, c.relname, c.relkind, c.reltype,
       (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(a.attname, a.atttypid, a.atttypmod)
                                   ORDER BY a.attnum)
        FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
       (SELECT pg_catalog.json_agg(a.attname)
        FROM pg_catalog.pg_index x
        JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
        WHERE x.indrelid = c.oid AND x.indisunique AND x.indisvalid AND x.indnkeyatts = 1
          AND x.indpred IS NULL AND x.indexprs IS NULL)))
   FROM pg_catalog.pg_class c
   JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p', 'c') AND c.relnamespace IN (SELECT oid FROM user_schemas))::text,
  (SELECT GREATEST(pg_catalog.current_setting('default_statistics_target')::pg_catalog.int4,
                   COALESCE(pg_catalog.max(a.attstattarget), 0))
   FROM pg_catalog.pg_attribute a
   JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
   WHERE a.attnum > 0 AND c.relnamespace IN (SELECT oid FROM user_schemas))::text
"""
"""One row of eight JSON texts: types, functions, operators, casts, ranges, collations, relations, and the
largest statistics target of any user column."""

DEFAULT_STATISTICS_TARGET = 100
"""PostgreSQL's default ``default_statistics_target``."""

FIRST_NORMAL_OID = 16384
"""OIDs below this were assigned by initdb: the built-in objects (``FirstNormalObjectId``)."""


@attrs.frozen
class CastInfo:
    """One ``pg_cast`` row."""

    source: int
    """``castsource``."""
    target: int
    """``casttarget``."""
    function: int
    """``castfunc``: the function that converts, or 0 (binary or I/O)."""
    context: str
    """``castcontext``: i implicit, a assignment, e explicit."""
    method: str
    """``castmethod``: f function, i I/O conversion, b binary."""


@attrs.frozen(eq=False, repr=False)
class Catalog:
    """One database's types, functions, operators, casts and relations, as parse analysis reads them."""

    types: Mapping[int, TypeInfo]
    """Types by OID."""
    functions: Mapping[int, FunctionInfo]
    """Functions by OID: those of pg_catalog, and the functions of casts."""
    operators: Mapping[int, OperatorInfo]
    """Operators of pg_catalog by OID."""
    casts: Mapping[tuple[int, int], CastInfo]
    """Casts by (source, target)."""
    relations: Mapping[tuple[str, str], RelationInfo]
    """User relations and composite types by (schema, name)."""
    collations: frozenset[str] = frozenset()
    """Names of the collations of pg_catalog usable in this database's encoding."""
    statistics_target: int = 100
    """The most entries the planner keeps in any user column's most-common-values list or histogram
    (``default_statistics_target`` or a column's own ``SET STATISTICS``): what selectivity estimation
    compares a constant against (``planner.py``)."""
    functions_by_name: Mapping[str, tuple[FunctionInfo, ...]] = attrs.field(init=False)
    """pg_catalog functions by name."""
    operators_by_name: Mapping[tuple[str, str], tuple[OperatorInfo, ...]] = attrs.field(init=False)
    """pg_catalog operators by (name, kind): kind ``b`` infix, ``l`` prefix."""
    types_by_name: Mapping[str, TypeInfo] = attrs.field(init=False)
    """pg_catalog types by name."""
    relations_by_type: Mapping[int, RelationInfo] = attrs.field(init=False)
    """Relations and composite types by their row type's OID."""

    def __attrs_post_init__(self) -> None:
        functions: dict[str, list[FunctionInfo]] = {}
        for info in self.functions.values():
            if info.schema == "pg_catalog":
                functions.setdefault(info.name, []).append(info)
        operators: dict[tuple[str, str], list[OperatorInfo]] = {}
        for operator in self.operators.values():
            operators.setdefault((operator.name, operator.kind), []).append(operator)
        object.__setattr__(self, "functions_by_name", {k: tuple(v) for k, v in functions.items()})
        object.__setattr__(self, "operators_by_name", {k: tuple(v) for k, v in operators.items()})
        object.__setattr__(self, "types_by_name",
                           {t.name: t for t in self.types.values() if t.schema == "pg_catalog"})
        object.__setattr__(self, "relations_by_type",
                           {r.row_type: r for r in self.relations.values() if not r.narrowed})

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Catalog:
        """Build from the one row ``CATALOG_SQL`` answers."""
        loaded = [orjson.loads(text) if text else [] for text in row]
        types, functions, operators, casts, ranges, collations, relations, statistics_target = loaded
        return cls.from_rows(types=types, functions=functions, operators=operators, casts=casts,
                             ranges=ranges, collations=collations, relations=relations,
                             statistics_target=int(statistics_target or DEFAULT_STATISTICS_TARGET))

    @classmethod
    def from_rows(
        cls,
        *,
        types: Iterable[Sequence[Any]],
        functions: Iterable[Sequence[Any]] = (),
        operators: Iterable[Sequence[Any]] = (),
        casts: Iterable[Sequence[Any]] = (),
        ranges: Iterable[Sequence[Any]] = (),
        collations: Iterable[str] = (),
        relations: Iterable[Sequence[Any]] = (),
        statistics_target: int = 100,
    ) -> Catalog:
        """Build from rows shaped as the arrays of ``CATALOG_SQL``."""
        range_rows = {int(r[0]): (int(r[1]), int(r[2])) for r in ranges}
        multirange_of = {multirange: rng for rng, (_, multirange) in range_rows.items()}
        type_map = {info.oid: info for info in (_type(row, range_rows, multirange_of) for row in types)}
        function_map = {info.oid: info for info in (FunctionInfo.from_row(row) for row in functions)}
        operator_map = {info.oid: info for info in (OperatorInfo.from_row(row) for row in operators)}
        cast_map = {(int(r[0]), int(r[1])): CastInfo(int(r[0]), int(r[1]), int(r[2]), str(r[3]), str(r[4]))
                    for r in casts}
        relation_map = {}
        for row in relations:
            columns = tuple(column(str(c[0]), int(c[1]), int(c[2])) for c in (row[5] or ()))
            unique = frozenset(str(name) for name in (row[6] or ())) if len(row) > 6 else frozenset()
            relation = RelationInfo(int(row[0]), str(row[1]), str(row[2]), str(row[3]), int(row[4]), columns,
                                    unique_columns=unique)
            relation_map[(relation.schema, relation.name)] = relation
        return cls(types=type_map, functions=function_map, operators=operator_map, casts=cast_map,
                   relations=relation_map, collations=frozenset(str(c) for c in collations),
                   statistics_target=statistics_target)

    def type(self, oid: int) -> TypeInfo | None:
        """The type with this OID, if known."""
        return self.types.get(oid)

    def type_display(self, oid: int) -> str:
        """A type as PostgreSQL names it in messages (``format_type``): ``integer``, ``text[]``."""
        info = self.types.get(oid)
        return info.display if info is not None else str(oid)

    def base_type(self, oid: int) -> int:
        """The type under any domains (``getBaseType``)."""
        for _ in range(32):
            info = self.types.get(oid)
            if info is None or info.kind != "d" or not info.base:
                return oid
            oid = info.base
        return oid

    def base_type_and_typmod(self, oid: int, typmod: int) -> tuple[int, int]:
        """``getBaseTypeAndTypmod``: the base type, and the domain's typmod where it has one."""
        for _ in range(32):
            info = self.types.get(oid)
            if info is None or info.kind != "d" or not info.base:
                return oid, typmod
            oid, typmod = info.base, info.base_typmod
        return oid, typmod

    def element_type(self, oid: int) -> int:
        """``get_element_type``: the element type of a true array type (typlen -1 and typelem), else 0."""
        info = self.types.get(oid)
        if info is not None and info.element and info.length == -1 and info.subscript == "array_subscript_handler":
            return info.element
        return 0

    def base_element_type(self, oid: int) -> int:
        """``get_base_element_type``: the element type of an array or of a domain over an array."""
        return self.element_type(self.base_type(oid))

    def array_type(self, oid: int) -> int:
        """``get_array_type``: the array type whose elements are ``oid``, or 0."""
        info = self.types.get(oid)
        return info.array if info is not None else 0

    def category(self, oid: int) -> str:
        """``typcategory`` (``X`` for unknown types)."""
        info = self.types.get(oid)
        return info.category if info is not None else "X"

    def is_preferred(self, oid: int) -> bool:
        """``typispreferred``."""
        info = self.types.get(oid)
        return info is not None and info.preferred

    def is_complex(self, oid: int) -> bool:
        """``ISCOMPLEX``: a composite type (a relation's row type or a composite type)."""
        info = self.types.get(oid)
        return info is not None and info.kind == "c"

    def is_array_domain(self, oid: int) -> bool:
        """``type_is_array_domain``: an array type, or a domain over one."""
        return self.element_type(self.base_type(oid)) != 0

    def relation_of_type(self, oid: int) -> RelationInfo | None:
        """The relation or composite type whose row type is ``oid``."""
        return self.relations_by_type.get(oid)

    def cast(self, source: int, target: int) -> CastInfo | None:
        """The pg_cast row from ``source`` to ``target``."""
        return self.casts.get((source, target))


def _type(row: Sequence[Any], ranges: Mapping[int, tuple[int, int]], multirange_of: Mapping[int, int]) -> TypeInfo:
    oid = int(row[0])
    range_subtype, multirange = ranges.get(oid, (0, 0))
    return TypeInfo(
        oid=oid, name=str(row[1]), schema=str(row[2]), kind=str(row[3]), category=str(row[4]),
        preferred=bool(row[5]), length=int(row[6]), element=int(row[7]), array=int(row[8]), relation=int(row[9]),
        base=int(row[10]), base_typmod=int(row[11]), collatable=bool(row[12]), input_function=str(row[13] or ""),
        output_function=str(row[14] or ""), subscript=str(row[15] or ""), display=str(row[16]),
        range_subtype=range_subtype, multirange=multirange, multirange_range=multirange_of.get(oid, 0),
    )
