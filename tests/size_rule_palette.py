"""Every type the size rules' tests pass, as SQL constants of exactly that type (so the server picks one
overload), and how a polymorphic signature is made concrete.

``Palette(rng, enum, composite).values("text[]")`` gives constants like ``'{"\\\\\\\\",NULL}'::text[]``; the
enum and composite types are the scratch database's (``size_rule_checker.SCRATCH_SQL``).
"""

from __future__ import annotations

import random

from size_rule_structured_values import (
    JSONPATH_TEXTS, MULTIRANGE_OF, array_texts, geometry_texts, json_texts, range_texts, record_values, tsquery_texts,
    tsvector_texts,
)
from size_rule_values import scalar_texts, sql_literal, typed

ENUM_TYPE = "public.size_rule_mood"
COMPOSITE_TYPE = "public.size_rule_pair"
"""Schema-qualified: the guard resolves a database's own types only by their qualified names."""
ENUM_LABELS = ("", "a", "\\\"'", "\\" * 63, "ΐ" * 31, "\x01" * 63)
"""Enum labels as the administrator may name them: up to 63 bytes, quoting and escaping ones included."""

CAST_NAMES = {"character": "bpchar", "character varying": "varchar"}
"""Type names whose cast form would add a length (``::character`` is ``char(1)``)."""

ELEMENT_TYPES = (
    "text", "integer", "numeric", "double precision", "boolean", "bytea", "json", "jsonb", "character varying",
    '"char"', "name", "point", "path", "box", "interval", "timestamp with time zone", "date", "tsvector",
    "tsquery", "bit varying", "money", "inet", "uuid", "xml", "int4range", "numrange", "tstzrange", ENUM_TYPE,
    COMPOSITE_TYPE,
)
"""What ``anyelement`` and its kin are instantiated to."""
ARRAY_ELEMENT_TYPES = tuple(t for t in ELEMENT_TYPES if t not in ("xml", "json"))
"""Element types of arrays that comparisons accept (``max(anyarray)`` needs a btree class)."""
RANGE_TYPES = tuple(MULTIRANGE_OF)


class Palette:
    """Constants of every type, by the type's SQL name (as ``format_type`` prints it)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        texts = scalar_texts(rng)
        texts["json"] = texts["jsonb"] = json_texts(rng)
        texts["jsonpath"] = list(JSONPATH_TEXTS)
        texts["tsvector"] = tsvector_texts(rng)
        texts["tsquery"] = tsquery_texts(rng)
        texts.update(range_texts())
        texts.update(geometry_texts(rng))
        texts[ENUM_TYPE] = list(ENUM_LABELS)
        self.texts = texts
        self.records = record_values(rng, texts, COMPOSITE_TYPE)
        self._values: dict[str, list[str]] = {}

    def values(self, type_name: str) -> list[str]:
        """Constants of ``type_name`` (NULL among them), or an empty list for a type it has none of."""
        found = self._values.get(type_name)
        if found is None:
            found = self._values[type_name] = self._make(type_name)
        return found

    def _make(self, type_name: str) -> list[str]:
        if type_name in ("record", COMPOSITE_TYPE):
            rows = self.records if type_name == "record" else [r for r in self.records if COMPOSITE_TYPE in r]
            return rows + [f"NULL::{type_name}"]
        if type_name == "unknown":  # an untyped literal, as a "any" argument may be
            return [sql_literal(text) for text in self.texts["text"]] + ["NULL"]
        if type_name.endswith("[]"):
            element = type_name[:-2]
            element_texts = self.texts.get(element)
            if not element_texts:
                return []
            cast = CAST_NAMES.get(element, element) + "[]"
            return [typed(text, cast) for text in array_texts(self.rng, element_texts)] + [f"NULL::{cast}"]
        texts = self.texts.get(type_name)
        if texts is None:
            return []
        return [self.constant(text, type_name) for text in texts] + [f"NULL::{CAST_NAMES.get(type_name, type_name)}"]

    @staticmethod
    def constant(text: str, type_name: str) -> str:
        """One constant of ``type_name`` read from ``text`` (a bit string as ``B'...'``: ``::bit`` is ``bit(1)``)."""
        if type_name == "bit":
            return f"B{sql_literal(text)}"
        return typed(text, CAST_NAMES.get(type_name, type_name))


POLYMORPHIC_ELEMENTS = frozenset({"anyelement", "anynonarray", "anycompatible", "anycompatiblenonarray", "anyarray",
                                  "anycompatiblearray"})
"""Arguments whose element type a call chooses: the cases try every element type in turn."""


def element_types(arguments: tuple[str, ...]) -> tuple[str, ...]:
    """The element types a signature's polymorphic arguments are tried with (arrays need comparable ones)."""
    return ARRAY_ELEMENT_TYPES if any(a in ("anyarray", "anycompatiblearray") for a in arguments) else ELEMENT_TYPES


def instantiate(arguments: tuple[str, ...], rng: random.Random, element: str | None = None) -> tuple[str, ...] | None:
    """Concrete types for a signature's polymorphic arguments, one choice per family (None: not instantiable);
    ``element`` is the element type of ``anyelement`` and ``anyarray``, random if not given."""
    element = element or rng.choice(element_types(arguments))  # anyelement and anyarray share it
    range_type = rng.choice(RANGE_TYPES)
    concrete = {
        "anyelement": element, "anynonarray": element, "anycompatible": element, "anycompatiblenonarray": element,
        "anyarray": f"{element}[]", "anycompatiblearray": f"{element}[]",
        "anyrange": range_type, "anycompatiblerange": range_type, "anymultirange": MULTIRANGE_OF[range_type],
        "anycompatiblemultirange": MULTIRANGE_OF[range_type], "anyenum": ENUM_TYPE,
    }
    result = []
    for argument in arguments:
        if argument == '"any"':
            result.append(rng.choice(ELEMENT_TYPES + ("text[]", "integer[]", "record", "unknown")))
        elif argument in concrete:
            result.append(concrete[argument])
        elif argument in ("internal", "anyenum[]", "cstring"):
            return None
        else:
            result.append(argument)
    return tuple(result)
