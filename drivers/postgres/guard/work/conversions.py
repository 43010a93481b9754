"""The work of turning values into text and back: output and input functions, element by element.

PostgreSQL converts a value to text (its type's output function) to send it
to the client, for an I/O cast (``x::text``, ``t::int[]``, which then runs the
target's input function), and inside functions that render any value
(``concat``, ``format``, ``to_json``, ``array_to_string``). None of them
checks for interrupts, and their time per byte depends on the type far more
than a plain linear built-in's: an array of ranges calls two functions per
element. The rates below are per byte of the value's bound, measured on the
test machine over values of the smallest elements (the costliest per byte)
and doubled:

============================================  ==========  ===========
values                                        measured    counted
============================================  ==========  ===========
scalars; arrays of scalars (int[], text[],    14-28 ns/B   64 ns/B
timestamptz[] in and out; jsonb out)
jsonb in (an array of ``{}``: 113 ns/B)       113 ns/B    256 ns/B
geometric values, arrays of them (point[])    65 ns/B     160 ns/B
ranges, multiranges, composites and arrays    716 ns/B    1 500 ns/B
of them (int4multirange[] in 716, out 485;
int8range[] in 142; record[] out 146)
============================================  ==========  ===========

Memory: an array taken apart or built element by element (array_in,
array_out, an array cast, ``array_to_string``) holds each element apart
while it works: up to 74 bytes per element measured (``int[]`` to ``text[]``),
counted as ``ELEMENT_MEMORY_BYTES``; parsing text into jsonb builds a tree of
up to 210 bytes per byte of text (an array of ``{}``), counted as
``JSONB_PARSE_MEMORY_FACTOR``.
"""

from __future__ import annotations

from typing import Final

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.types import JSONB
from drivers.postgres.guard.sizes.bounds import Bound

IO_NS_PER_BYTE: Final = 64
JSONB_INPUT_NS_PER_BYTE: Final = 256
GEOMETRIC_IO_NS_PER_BYTE: Final = 160
NESTED_IO_NS_PER_BYTE: Final = 1500
ELEMENT_MEMORY_BYTES: Final = 96
JSONB_PARSE_MEMORY_FACTOR: Final = 256

_TEXT_LIKE: Final = frozenset({"text", "varchar", "bpchar", "name", "unknown", "cstring", "char", "xml", "json"})
"""Types whose output copies their text (json and xml parse only when read)."""
FIELD_NS: Final = 256
"""A composite value's work per field beyond the field's own output (a call, a comma; record[] out measured
146 ns per byte of one-digit fields). Every field prints at least its comma, so per byte it is at most this."""

RENDERING_FUNCTIONS: Final = frozenset({
    # Functions that run an argument's output function (any type, rendered as text or JSON).
    "concat", "concat_ws", "format", "quote_literal", "quote_nullable", "anytextcat", "textanycat",
    "to_json", "to_jsonb", "json_build_array", "json_build_object", "jsonb_build_array", "jsonb_build_object",
    "row_to_json", "array_to_json", "array_to_string", "json_agg", "jsonb_agg", "json_agg_strict",
    "jsonb_agg_strict", "json_object_agg", "jsonb_object_agg", "json_object_agg_strict",
    "jsonb_object_agg_strict", "json_object_agg_unique", "jsonb_object_agg_unique",
    "json_object_agg_unique_strict", "jsonb_object_agg_unique_strict",
})
ELEMENT_WISE_FUNCTIONS: Final = frozenset({
    # Functions that take an array apart element by element, holding each element's copy or text.
    "array_to_string", "array_to_json", "to_json", "to_jsonb", "json_build_array", "jsonb_build_array",
    "json_build_object", "jsonb_build_object", "format", "concat", "concat_ws", "row_to_json",
})


def io_ns_per_byte(catalog: Catalog, type_oid: int, *, reading: bool = False, depth: int = 0) -> int:
    """Nanoseconds per byte for the output function of ``type_oid`` (its input function with ``reading``).

    A composite type of known fields costs its costliest field's rate plus ``FIELD_NS``; an anonymous
    record, a range or multirange, or an array of them, ``NESTED_IO_NS_PER_BYTE``.
    """
    base = catalog.base_type(type_oid)
    info = catalog.type(base)
    if info is None:
        return NESTED_IO_NS_PER_BYTE
    if info.schema == "pg_catalog" and info.name in _TEXT_LIKE:
        # Output and input copy the text (json's input validates it: a plain I/O rate).
        return IO_NS_PER_BYTE if reading and info.name == "json" else 0
    if base == JSONB and reading:
        return JSONB_INPUT_NS_PER_BYTE
    element = catalog.type(catalog.base_element_type(base)) if info.is_array else None
    for kind in filter(None, (info, element)):
        relation = catalog.relation_of_type(kind.oid) if kind.kind == "c" else None
        if relation is not None and depth < 8:
            return FIELD_NS + max((io_ns_per_byte(catalog, column.type, reading=reading, depth=depth + 1)
                                   for column in relation.columns), default=0)
        if kind.kind in ("r", "m", "c", "p") or kind.category == "C":
            return NESTED_IO_NS_PER_BYTE
    if info.category == "G" or (element is not None and element.category == "G"):
        return GEOMETRIC_IO_NS_PER_BYTE
    return IO_NS_PER_BYTE


def elements_in(catalog: Catalog, array_type: int, size: Bound) -> Bound:
    """The most elements an array of ``array_type`` and this size bound holds (each element takes at least one
    byte stored or a digit and a comma printed; zero for a type that is no array)."""
    info = catalog.type(catalog.base_type(array_type))
    if info is None or not info.is_array:
        return Bound()
    element = catalog.type(catalog.base_element_type(array_type))
    if element is not None and element.length >= 2:
        return Bound((size.fixed + 1) // 2, (size.data + 1) // 2, size.unknown, (size.stored + 1) // 2)
    return size


def conversion_memory(catalog: Catalog, source: int, target: int, size: Bound) -> Bound:
    """Working memory of that conversion: elements held apart, a jsonb tree, the text between."""
    memory = size + (elements_in(catalog, source, size) + elements_in(catalog, target, size)).scaled(
        ELEMENT_MEMORY_BYTES)
    if catalog.base_type(target) == JSONB and catalog.base_type(source) != JSONB:
        memory = memory + size.scaled(JSONB_PARSE_MEMORY_FACTOR)
    return memory


def element_memory(catalog: Catalog, argument_types: list[int], sizes: list[Bound]) -> Bound:
    """Memory an element-wise function holds for the elements of its array arguments."""
    memory = Bound()
    for type_oid, size in zip(argument_types, sizes):
        memory = memory + elements_in(catalog, type_oid, size).scaled(ELEMENT_MEMORY_BYTES)
    return memory
