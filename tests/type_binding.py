"""Argument lists for a function or operator signature: exact, through implicit casts, unknown literals,
NULLs, numeric literals, nested calls and wrong types; polymorphic signatures bound consistently (and, on
purpose, inconsistently).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

import pglast.keywords

from type_palette import Palette, Proc

POLYMORPHIC = (
    "anyelement", "anyarray", "anynonarray", "anyenum", "anyrange", "anymultirange",
    "anycompatible", "anycompatiblearray", "anycompatiblenonarray", "anycompatiblerange", "anycompatiblemultirange",
)
UNCALLABLE = (
    "internal", "trigger", "event_trigger", "language_handler", "fdw_handler", "index_am_handler",
    "tsm_handler", "table_am_handler", "pg_ddl_command",
)
MODES = ("exact", "implicit", "unknown", "all_unknown", "null", "number", "nested", "wrong")
NUMBERS = ("1", "42", "3000000000", "12345678901234567890", "1.5", "0.5e1", "'7'")
COMPATIBLE_GROUPS = (
    ("int2", "int4", "int8", "numeric", "float4", "float8"),
    ("int4", "int8"),
    ("text", "varchar", "bpchar", "name"),
    ("date", "timestamp", "timestamptz"),
    ("int4", "numeric"),
    ("float4", "float8"),
    ("jsonb",),
    ("tf.posint", "int4"),
)
_KEYWORDS = frozenset(pglast.keywords.RESERVED_KEYWORDS | pglast.keywords.COL_NAME_KEYWORDS)
_PLAIN = re.compile(r"[a-z_][a-z0-9_$]*\Z")


def function_name(name: str, rng: random.Random, qualify: float = 0.08) -> str:
    """The function's name as written in a call: quoted when it is a keyword, sometimes ``pg_catalog.``."""
    written = f'"{name}"' if name in _KEYWORDS or not _PLAIN.match(name) else name
    return f"pg_catalog.{written}" if rng.random() < qualify else written


class Binder:
    """Writes argument lists for signatures over one palette."""

    def __init__(self, palette: Palette) -> None:
        self.p = palette
        self.poly = {palette.oid(name): name for name in POLYMORPHIC}
        self.uncallable = {palette.oid(name) for name in UNCALLABLE}
        self.any = palette.oid("any")
        self.elements = [oid for oid in palette.concrete_types() if not palette.is_array(oid)]
        self.by_result: dict[int, list[Proc]] = {}
        for proc in palette.procs:
            if proc.kind == "f" and not proc.retset and proc.args and self.simple(proc):
                self.by_result.setdefault(proc.result, []).append(proc)

    def simple(self, proc: Proc) -> bool:
        """Arguments of concrete types only (no pseudo-type, nothing uncallable)."""
        return all(self.p.types[arg].kind != "p" for arg in proc.args)

    def callable(self, proc: Proc) -> bool:
        return not any(arg in self.uncallable for arg in proc.args)

    def polymorphic(self, types: Sequence[int]) -> bool:
        return any(arg in self.poly for arg in types)

    # -- binding pseudo-types to concrete ones -------------------------------------------------------------
    def bind(self, signature: Sequence[int], rng: random.Random, consistent: bool = True) -> list[int] | None:
        """Concrete types for ``signature``: polymorphic ones bound to one element (and one compatible) type."""
        names = [self.poly.get(arg, "") for arg in signature]
        ranged = any(name.endswith(("range", "multirange")) for name in names if not name.startswith("anycompat"))
        element = self._element(rng, ranged, "anyenum" in names, "anynonarray" in names)
        compatible = self._compatible(rng, any(n.startswith("anycompatible") and "range" in n for n in names))
        if element is None or compatible is None:
            return None
        bound: list[int] = []
        for arg, name in zip(signature, names, strict=True):
            if not name:
                bound.append(self._concrete(arg, rng))
                continue
            if not consistent and rng.random() < 0.5:
                element = rng.choice(self.elements)
            base = element if not name.startswith("anycompatible") else rng.choice(compatible)
            if name.endswith("multirange"):
                bound.append(self._multirange(base))
            elif name.endswith("range"):
                bound.append(self.p.range_of(base) or base)
            elif name.endswith("array"):
                bound.append(self.p.types[base].array or base)
            else:
                bound.append(base)
        return bound

    def _concrete(self, arg: int, rng: random.Random) -> int:
        if arg == self.any:
            return rng.choice(self.p.concrete_types())
        if arg == self.p.oid("anyarray"):
            return self.p.oid("_int4")
        return arg

    def _element(self, rng: random.Random, ranged: bool, enum: bool, nonarray: bool) -> int | None:
        if enum:
            return self.p.oid("tf.mood")
        if ranged:
            subtypes = sorted({sub for sub, _ in self.p.ranges.values()})
            return rng.choice(subtypes)
        choices = self.elements if nonarray or rng.random() < 0.85 else self.p.concrete_types()
        return rng.choice(choices)

    def _compatible(self, rng: random.Random, ranged: bool) -> list[int] | None:
        if ranged:
            sub = rng.choice(sorted({sub for sub, _ in self.p.ranges.values()}))
            return [sub]
        if rng.random() < 0.3:
            return [rng.choice(self.elements)]
        return [self.p.oid(name) for name in rng.choice(COMPATIBLE_GROUPS)]

    def _multirange(self, subtype: int) -> int:
        range_type = self.p.range_of(subtype)
        return self.p.ranges[range_type][1] if range_type else subtype

    # -- argument expressions ------------------------------------------------------------------------------
    def arguments(self, signature: Sequence[int], mode: str, rng: random.Random) -> list[str] | None:
        """Argument expressions for ``signature`` in ``mode`` (one of ``MODES``), or None if none fit."""
        types = self.bind(signature, rng, consistent=mode != "wrong")
        if types is None:
            return None
        args = [self.value(type_, rng) for type_ in types]
        if not args:
            return args
        pick = rng.randrange(len(args))
        if mode == "implicit":
            source = self.p.implicit_source(types[pick], rng)
            if source is None:
                return None
            args[pick] = rng.choice(self.p.columns_of(source))
        elif mode in ("unknown", "all_unknown"):
            positions = range(len(args)) if mode == "all_unknown" else [pick]
            for position in positions:
                args[position] = self.p.literal(types[position]) or "NULL"
        elif mode == "null":
            args = ["NULL"] * len(args)
        elif mode == "number":
            args = [rng.choice(NUMBERS) if self.p.types[type_].category == "N" else arg
                    for type_, arg in zip(types, args, strict=True)]
        elif mode == "nested":
            inner = self.nested(types[pick], rng)
            if inner is None:
                return None
            args[pick] = inner
        elif mode == "wrong":
            args[pick] = self.value(rng.choice(self.p.concrete_types()), rng)
        return args

    def value(self, type_: int, rng: random.Random) -> str:
        if type_ == self.p.oid("cstring"):
            return "'abc'"
        if type_ in self.uncallable or type_ == self.any:
            return "NULL"
        return self.p.value(type_, rng)

    def nested(self, type_: int, rng: random.Random) -> str | None:
        """A call of another function that returns ``type_``, its own arguments exact."""
        procs = self.by_result.get(type_)
        if not procs:
            return None
        proc = rng.choice(procs)
        args = [self.p.value(arg, rng) for arg in proc.args]
        return f"{function_name(proc.name, rng)}({', '.join(args)})"
