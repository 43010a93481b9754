"""What a value prints and holds as JSON (``to_json``, ``jsonb_build_object``, ``jsonb_agg``...): the sizes the
JSON rules of ``size_rules_structured.py`` build on.

JSON keeps json as it is and prints numbers as they print, escapes strings (a control character becomes
``\\u00XX``, six bytes from one) and gives a record its keys. Into jsonb, numbers print without their
exponent (a float 5e-324 prints 326 characters, a json '[1e1000]' 1 002) and every value holds a 4-byte entry,
alignment and a number's header.
"""

from __future__ import annotations

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.ir import Const, Expr, Row, Var, walk
from drivers.postgres.guard.model.types import BPCHAR, CHAR, FLOAT4, FLOAT8, JSON, JSONB, NAME, RECORD, TEXT, VARCHAR
from drivers.postgres.guard.model.types import UNKNOWN as UNKNOWN_TYPE
from drivers.postgres.guard.sizes.bounds import Bound, maximum
from drivers.postgres.guard.sizes.literals import jsonb_held, jsonb_printed
from drivers.postgres.guard.sizes.rules import Arg, RuleContext, json_escaped
from drivers.postgres.guard.sizes.type_sizes import parsed_bound

_JSON_AS_IS = frozenset({JSON, JSONB})
_STRINGS = frozenset({TEXT, VARCHAR, BPCHAR, NAME, CHAR, UNKNOWN_TYPE})
_NULL = Bound(4)
"""A NULL argument or element prints ``null``."""
_JSONB_FLOAT = Bound(330)
"""jsonb holds a float as a numeric, printed without an exponent: 5e-324 prints 326 characters."""
_JSONB_VALUE = 20
"""Bytes a jsonb value holds beyond what it prints: its entry (4), alignment (3), a number's length word and
header (8), and for a scalar alone the array it is held in (8): to_jsonb(0) prints 1 character, holds 14."""
_JSONB_FLOAT_GROWTH = 55
"""The most one printed byte of a float grows to in jsonb: ``1e-300`` (6 bytes) prints 302."""


def as_json(arg: Arg, context: RuleContext) -> Bound:
    """What ``to_json`` prints for a value: JSON as it is, numbers as printed, strings escaped (a control
    character becomes ``\\u00XX``), arrays and records with every text quoted and escaped, and a record's
    keys; ``null`` for a NULL. Into jsonb, numbers of json and floats print without their exponent."""
    found = _json_of(arg, context)
    catalog = context.catalog
    if context.result_type == JSONB and catalog is not None:
        type_oid = catalog.base_type(arg.expr.type)
        held = _held_types(catalog, arg.expr, type_oid, 0)
        if type_oid in (FLOAT4, FLOAT8):
            found = _JSONB_FLOAT
        elif type_oid == JSON and arg.text is not None:
            found = Bound(max(jsonb_printed(arg.text), jsonb_held(arg.text)))
        elif type_oid == JSON:  # as a cast from json counts it: its numbers print in full in jsonb
            found = parsed_bound(catalog, JSONB, -1, arg.size)
        elif held:
            found = _into_jsonb(catalog, arg.expr, found, held)
        found = found.scaled(1, _JSONB_VALUE)
    return maximum([found, _NULL])


def _into_jsonb(catalog: Catalog, expr: Expr, found: Bound, held: set[int]) -> Bound:
    """An array or record holding floats or json, into jsonb: of constants alone, every number may print in
    full (a json '[1e1000]' prints 1 002 characters, a float 5e-324 326); reading stored data, each float the
    expression holds and each json constant is counted at its longest, and the administrator's json prints
    and is held within the six times that escaping already counts ('[0,0]' holds 26 bytes)."""
    if found.is_constant:
        return parsed_bound(catalog, JSONB, -1, found) if JSON in held else found.scaled(_JSONB_FLOAT_GROWTH)
    extra = 0
    for sub in walk(expr):
        if isinstance(sub, Const) and catalog.base_type(sub.type) == JSON and sub.text is not None:
            extra += max(jsonb_printed(sub.text), jsonb_held(sub.text))
        elif isinstance(sub, Var) and sub.column == 0:
            extra += _JSONB_FLOAT.fixed * sum(_floats(catalog, slot.type, 0) for slot in sub.entry.columns)
        else:
            extra += _JSONB_FLOAT.fixed * _floats(catalog, sub.type, 0)
    return found + Bound(extra)


def _floats(catalog: Catalog, type_oid: int, depth: int) -> int:
    """How many floats a value of the type holds where the type says (a row's float columns)."""
    type_oid = catalog.base_type(type_oid)
    if type_oid in (FLOAT4, FLOAT8):
        return 1
    relation = catalog.relation_of_type(type_oid)
    if relation is None or depth > 8:
        return 0
    return sum(_floats(catalog, column.type, depth + 1) for column in relation.columns)


def _json_of(arg: Arg, context: RuleContext) -> Bound:
    catalog = context.catalog
    type_oid = catalog.base_type(arg.expr.type) if catalog is not None else arg.expr.type
    if type_oid in _JSON_AS_IS:
        return arg.size
    if type_oid in _STRINGS:
        return json_escaped(arg.size)
    info = catalog.type(type_oid) if catalog is not None else None
    if info is not None and info.category in ("N", "B"):
        return arg.size.scaled(1, 2)
    relation = catalog.relation_of_type(type_oid) if catalog is not None else None
    if relation is not None:
        # A key is the column's name escaped as a JSON string (a control character in a quoted name becomes
        # \\u00XX), a colon and a space, a comma.
        keys = sum(json_escaped(Bound(len(column.name.encode("utf-8")))).fixed + 4 for column in relation.columns)
        return json_escaped(arg.size).scaled(1, keys)
    if type_oid == RECORD or (info is not None and info.kind == "c"):
        return json_escaped(arg.size).scaled(4)  # keys "f1".."fn" of at most a few characters per field
    return json_escaped(arg.size)


def _held_types(catalog: Catalog, expr: Expr | None, type_oid: int, depth: int) -> set[int]:
    """Which of float4, float8 and json a value of the type may hold (as an element, a field; a record's
    fields are known only at run time, unless it is a ``ROW(...)``)."""
    type_oid = catalog.base_type(type_oid)
    if type_oid in (FLOAT4, FLOAT8, JSON):
        return {type_oid}
    if depth > 8:
        return {FLOAT8, JSON}
    if isinstance(expr, Row):
        return set().union(*(_held_types(catalog, a, a.type, depth + 1) for a in expr.args))
    if type_oid == RECORD:
        return {FLOAT8, JSON}
    element = catalog.element_type(type_oid)
    if element:
        return _held_types(catalog, None, element, depth + 1)
    relation = catalog.relation_of_type(type_oid)
    columns = relation.columns if relation is not None else ()
    return set().union(*(_held_types(catalog, None, c.type, depth + 1) for c in columns))
