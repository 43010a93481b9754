"""A raw ``TypeName`` (a cast's target, a column definition) to its type OID and typmod (``parse_type.c``).

The grammar already spells SQL's keyword types by their catalog names
(``integer`` is ``pg_catalog.int4``, ``character varying(20)`` is
``pg_catalog.varchar`` with modifier 20); this module looks the name up, turns
the modifiers into a typmod as each type's ``typmodin`` function does, and
takes ``[]`` to the array type.
"""

from __future__ import annotations

from typing import Any

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.types import TypeInfo

_VARHDRSZ = 4
_MAX_CHARACTER_LENGTH = 10 * 1024 * 1024
_INTERVAL_FULL_RANGE = 0x7FFF
_INTERVAL_FULL_PRECISION = 0xFFFF
_TIME_TYPES = frozenset({"time", "timetz", "timestamp", "timestamptz"})


def type_name_parts(type_name: dict[str, Any]) -> list[str]:
    """The dotted name of a ``TypeName``: ``["pg_catalog", "int4"]``."""
    return [part["String"]["sval"] for part in type_name.get("names", ()) if "String" in part]


def lookup_type(catalog: Catalog, type_name: dict[str, Any]) -> TypeInfo:
    """The type a ``TypeName`` names (before ``[]``), or PostgreSQL's "type does not exist"."""
    if type_name.get("pct_type"):
        raise Unsupported("%TYPE is not supported in a GetData query")
    if type_name.get("setof"):
        raise AnalysisError("SETOF type not allowed here")
    parts = type_name_parts(type_name)
    if len(parts) == 1 or (len(parts) == 2 and parts[0] == "pg_catalog"):
        found = catalog.types_by_name.get(parts[-1])
    elif len(parts) == 2:
        found = _in_schema(catalog, parts[0], parts[1])
    else:
        raise AnalysisError(f"improper qualified name (too many dotted names): {'.'.join(parts)}")
    if found is None:
        raise AnalysisError(f'type "{".".join(parts)}" does not exist')
    return found


def _in_schema(catalog: Catalog, schema: str, name: str) -> TypeInfo | None:
    for info in catalog.types.values():
        if info.name == name and info.schema == schema:
            return info
    return None


def resolve_type_name(catalog: Catalog, type_name: dict[str, Any]) -> tuple[int, int]:
    """``typenameTypeIdAndMod``: (OID, typmod) of a ``TypeName``, arrays included."""
    info = lookup_type(catalog, type_name)
    typmod = _typmod(catalog, info, type_name)
    oid = info.oid
    if type_name.get("arrayBounds"):
        if not catalog.element_type(oid) or info.kind == "d":
            array = info.array
            if not array:
                raise AnalysisError(f"could not find array type for data type {info.display}")
            oid = array
    return oid, typmod


def _typmod(catalog: Catalog, info: TypeInfo, type_name: dict[str, Any]) -> int:
    """What the type's ``typmodin`` answers for the written modifiers (-1 when there are none)."""
    modifiers = type_name.get("typmods")
    if not modifiers:
        return int(type_name.get("typemod", -1))
    values: list[int] = []
    for modifier in modifiers:
        constant = modifier.get("A_Const")
        if constant is None or "ival" not in constant:
            raise Unsupported(f"type modifiers of {info.display} must be integer literals")
        values.append(int(constant["ival"].get("ival", 0)))
    name = info.name if info.schema == "pg_catalog" else ""
    if name in ("bpchar", "varchar"):
        if len(values) != 1:
            raise AnalysisError("invalid type modifier")
        if values[0] < 1:
            raise AnalysisError(f"length for type {name} must be at least 1")
        if values[0] > _MAX_CHARACTER_LENGTH:
            raise AnalysisError(f"length for type {name} cannot exceed {_MAX_CHARACTER_LENGTH}")
        return values[0] + _VARHDRSZ
    if name == "numeric":
        if len(values) > 2:
            raise AnalysisError("invalid NUMERIC type modifier")
        precision, scale = values[0], values[1] if len(values) == 2 else 0
        if not 1 <= precision <= 1000:
            raise AnalysisError(f"NUMERIC precision {precision} must be between 1 and 1000")
        if not -1000 <= scale <= 1000:
            raise AnalysisError(f"NUMERIC scale {scale} must be between -1000 and 1000")
        return ((precision << 16) | (scale & 0x7FF)) + _VARHDRSZ
    if name in ("bit", "varbit"):
        if len(values) != 1:
            raise AnalysisError("invalid type modifier")
        if values[0] < 1:
            raise AnalysisError(f"length for type {name} must be at least 1")
        return values[0]
    if name in _TIME_TYPES:
        if len(values) != 1:
            raise AnalysisError("invalid type modifier")
        if values[0] < 0:
            raise AnalysisError(f"{info.display.upper()}({values[0]}) precision must not be negative")
        return min(values[0], 6)
    if name == "interval":
        fields = values[0] if values else _INTERVAL_FULL_RANGE
        precision = values[1] if len(values) > 1 else _INTERVAL_FULL_PRECISION
        if len(values) > 2:
            raise AnalysisError("invalid INTERVAL type modifier")
        if precision != _INTERVAL_FULL_PRECISION:
            if precision < 0:
                raise AnalysisError(f"INTERVAL({precision}) precision must not be negative")
            precision = min(precision, 6)
        return (fields << 16) | precision
    if info.kind == "d":
        raise AnalysisError(f"type modifier is not allowed for type \"{info.name}\"")
    raise AnalysisError(f'type modifier is not allowed for type "{info.name}"')
