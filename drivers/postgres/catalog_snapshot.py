"""What the SQL guard knows of a database's ``pg_catalog``: types, functions, operators and casts.

``CATALOG_SNAPSHOT_SQL`` reads everything in one round trip, once per pool
(``pool.py``), as one row of four JSON arrays; ``CatalogSnapshot.from_rows``
builds the immutable snapshot from plain rows, so tests can build one from a
handful of hand-written rows as well as from the live catalog.

Only objects of schema ``pg_catalog`` are read: the guard refuses functions,
operators and types of any other schema before it looks anything up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import orjson

# One row: types, functions, operators, casts; each a JSON array of arrays (or NULL when empty).
CATALOG_SNAPSHOT_SQL = """
SELECT
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(
       t.oid, t.typname, t.typtype, t.typrelid, t.typelem, t.typarray, t.typlen, t.typcategory,
       t.typbasetype, i.proname))
   FROM pg_catalog.pg_type t
   JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
   LEFT JOIN pg_catalog.pg_proc i ON i.oid = t.typinput
   WHERE n.nspname = 'pg_catalog')::text AS types,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(
       p.oid, p.proname, p.prokind, p.provolatile, p.prorettype, p.proargtypes::pg_catalog.oid[],
       p.proallargtypes, p.pronargdefaults, p.provariadic, p.proretset,
       CASE WHEN p.prolang IN (12, 13) THEN p.prosrc END))
   FROM pg_catalog.pg_proc p
   JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname = 'pg_catalog')::text AS functions,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(
       o.oprname, o.oprleft, o.oprright, o.oprresult, o.oprcode::pg_catalog.oid))
   FROM pg_catalog.pg_operator o
   JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
   WHERE n.nspname = 'pg_catalog' AND o.oprcode <> 0)::text AS operators,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(c.castsource, c.casttarget))
   FROM pg_catalog.pg_cast c
   WHERE c.castcontext = 'i')::text AS implicit_casts
"""

FIRST_NORMAL_OID = 16384
"""OIDs below this were assigned by initdb: the built-in objects (``FirstNormalObjectId``)."""


@attrs.frozen
class TypeInfo:
    """One ``pg_type`` row of schema pg_catalog."""

    oid: int
    """The type's OID."""
    name: str
    """``typname``: ``int4``, ``_text`` (an array), ``pg_class`` (a relation's row type)."""
    kind: str
    """``typtype``: b base, c composite, d domain, e enum, p pseudo, r range, m multirange."""
    relation: int
    """``typrelid``: the relation whose row type this is, or 0."""
    element: int
    """``typelem``: the element type of an array (or of a fixed-length subscriptable type), or 0."""
    array: int
    """``typarray``: this type's array type, or 0."""
    length: int
    """``typlen``: bytes of a fixed-length type, -1 variable length, -2 C string."""
    category: str
    """``typcategory``: A array, S string, N numeric, G geometric, U user, P pseudo, ..."""
    base: int
    """``typbasetype``: the type a domain is over, or 0."""
    input_function: str
    """Name of the function that reads the type's text form (``typinput``)."""

    @property
    def is_array(self) -> bool:
        """True for a true array type (``_int4``), not for int2vector-like subscriptable types."""
        return self.category == "A" and self.element != 0 and self.length == -1 and self.name.startswith("_")


@attrs.frozen
class FunctionOverload:
    """One ``pg_proc`` row of schema pg_catalog."""

    oid: int
    """The function's OID."""
    name: str
    """``proname``."""
    kind: str
    """``prokind``: f function, a aggregate, w window, p procedure."""
    volatility: str
    """``provolatile``: i immutable, s stable, v volatile."""
    result: int
    """``prorettype``."""
    arguments: tuple[int, ...]
    """``proargtypes``: the input arguments' types, in order."""
    all_arguments: tuple[int, ...]
    """``proallargtypes`` (input and OUT arguments) when the function has OUT arguments, else ``arguments``."""
    defaults: int
    """``pronargdefaults``: how many trailing input arguments may be left out."""
    variadic: int
    """``provariadic``: element type of the VARIADIC argument, or 0."""
    returns_set: bool
    """``proretset``."""
    source: str = ""
    """``prosrc`` of an internal or C function: the C symbol that implements it (``like`` and ``textlike``
    share ``textlike``); empty for SQL functions."""

    @property
    def builtin(self) -> bool:
        """True when initdb created the function (not an extension installed into pg_catalog)."""
        return self.oid < FIRST_NORMAL_OID

    def accepts_argument_count(self, count: int, *, variadic_call: bool = False) -> bool:
        """True when a call with ``count`` arguments can resolve to this overload."""
        declared = len(self.arguments)
        if variadic_call:
            return self.variadic != 0 and count == declared
        if declared - self.defaults <= count <= declared:
            return True
        return self.variadic != 0 and count >= declared - 1

    def parameter_types(self, position: int, count: int, *, variadic_call: bool = False) -> tuple[int, ...]:
        """The types argument ``position`` of a ``count``-argument call may have to feed.

        For a VARIADIC function called without the keyword, PostgreSQL matches
        the trailing arguments against the element type; the array type itself
        is kept as a possibility too (never says less than PostgreSQL could).
        """
        declared = len(self.arguments)
        if self.variadic and not variadic_call and position >= declared - 1:
            return (self.variadic, self.arguments[-1]) if position == declared - 1 else (self.variadic,)
        return (self.arguments[min(position, declared - 1)],) if declared else ()


@attrs.frozen
class OperatorInfo:
    """One ``pg_operator`` row of schema pg_catalog."""

    name: str
    """``oprname``."""
    left: int
    """``oprleft``: 0 for a prefix operator."""
    right: int
    """``oprright``."""
    result: int
    """``oprresult``."""
    function: int
    """``oprcode``: the OID of the function that implements the operator."""


@attrs.frozen(eq=False, repr=False)
class CatalogSnapshot:
    """Types, functions, operators and implicit casts of one database's pg_catalog."""

    types: Mapping[int, TypeInfo]
    """Every pg_catalog type by OID."""
    type_oids: Mapping[str, int]
    """Every pg_catalog type OID by ``typname``."""
    functions: Mapping[int, FunctionOverload]
    """Every pg_catalog function overload by OID."""
    overloads: Mapping[str, tuple[FunctionOverload, ...]]
    """Every overload of each pg_catalog function name."""
    operators: Mapping[tuple[str, int], tuple[OperatorInfo, ...]]
    """pg_catalog operators by (name, operand count): 1 for prefix, 2 for infix."""
    implicit_casts: frozenset[tuple[int, int]]
    """(source, target) type OIDs PostgreSQL converts without being asked (``castcontext = 'i'``)."""

    @classmethod
    def from_rows(
        cls,
        *,
        types: Iterable[Sequence[Any]],
        functions: Iterable[Sequence[Any]],
        operators: Iterable[Sequence[Any]] = (),
        implicit_casts: Iterable[Sequence[Any]] = (),
    ) -> CatalogSnapshot:
        """Build from rows shaped as the arrays of ``CATALOG_SNAPSHOT_SQL``."""
        type_rows = [TypeInfo(int(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[6]),
                              str(r[7]), int(r[8]), str(r[9] or "")) for r in types]
        function_rows = [_function(row) for row in functions]
        by_name: dict[str, list[FunctionOverload]] = {}
        for overload in function_rows:
            by_name.setdefault(overload.name, []).append(overload)
        by_operator: dict[tuple[str, int], list[OperatorInfo]] = {}
        for row in operators:
            operator = OperatorInfo(str(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4]))
            by_operator.setdefault((operator.name, 1 if operator.left == 0 else 2), []).append(operator)
        return cls(
            types={t.oid: t for t in type_rows},
            type_oids={t.name: t.oid for t in type_rows},
            functions={f.oid: f for f in function_rows},
            overloads={name: tuple(items) for name, items in by_name.items()},
            operators={key: tuple(items) for key, items in by_operator.items()},
            implicit_casts=frozenset((int(row[0]), int(row[1])) for row in implicit_casts),
        )

    @classmethod
    def from_query_row(cls, row: Sequence[Any]) -> CatalogSnapshot:
        """Build from the one row ``CATALOG_SNAPSHOT_SQL`` answers (four JSON texts)."""
        types, functions, operators, casts = (orjson.loads(text) if text else [] for text in row)
        return cls.from_rows(types=types, functions=functions, operators=operators, implicit_casts=casts)

    def type_named(self, name: str) -> TypeInfo | None:
        """The pg_catalog type called ``name`` (``typname``), if any."""
        oid = self.type_oids.get(name)
        return None if oid is None else self.types[oid]

    def type_name(self, oid: int) -> str:
        """How a message names a type: ``text``, ``text[]``, or the OID when it is not in pg_catalog."""
        info = self.types.get(oid)
        if info is None:
            return str(oid)
        if info.is_array and info.element in self.types:
            return self.types[info.element].name + "[]"
        return info.name


def _function(row: Sequence[Any]) -> FunctionOverload:
    arguments = tuple(int(oid) for oid in row[5] or ())
    return FunctionOverload(
        oid=int(row[0]),
        name=str(row[1]),
        kind=str(row[2]),
        volatility=str(row[3]),
        result=int(row[4]),
        arguments=arguments,
        all_arguments=tuple(int(oid) for oid in row[6]) if row[6] else arguments,
        defaults=int(row[7] or 0),
        variadic=int(row[8] or 0),
        returns_set=bool(row[9]),
        source=str(row[10] or "") if len(row) > 10 else "",
    )
