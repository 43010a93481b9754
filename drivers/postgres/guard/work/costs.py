"""How long a call runs without checking for interrupts, and how much memory it takes, at the bounded sizes.

PostgreSQL checks for interrupts between rows, not between the calls of one
expression: every call made to produce one row (the select list, WHERE,
HAVING, ORDER BY and join conditions of one query level) runs as one
uninterruptible stretch, except the few built-ins that check for interrupts
in their own loops. ``call_cost`` estimates one call, in nanoseconds of the
test machine at the bounded sizes of its arguments:

- most built-ins are linear: ``LINEAR_NS_PER_BYTE`` per byte of argument;
  comparisons ``COMPARISON_NS_PER_BYTE``;
- the superlinear ones the interrupt audit found (``COST_BOUNDED_FUNCTIONS``:
  trimming sets, substring search, LIKE, array containment, jsonb key tests,
  tsquery parsing...) cost the product of their cost-driving arguments;
- those that check for interrupts (``INTERRUPTIBLE``) count nothing.

``call_memory`` is what a call allocates: its result, and for parsers of JSON
text a multiple of their input. Both are ``Bound`` s, evaluated by the
budget (``checks.py``) with the administrator's data at a nominal size.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.types import JSON, NUMERIC, FunctionInfo
from drivers.postgres.guard.sizes.bounds import Bound, total
from drivers.postgres.guard.work.cost_rules import COST_BOUNDED_FUNCTIONS

LINEAR_NS_PER_BYTE: Final = 3
"""A linear built-in's time per byte of input (md5 measured 2.7 ns/byte on the test machine)."""
COMPARISON_NS_PER_BYTE: Final = 1
"""Equality and ordering comparisons (memcmp, strcoll) per byte."""
PRODUCT_NS_PER_STEP: Final = 5
"""One step of a superlinear built-in (ltrim measured 5 ns per character pair)."""
JSON_PARSE_MEMORY_FACTOR: Final = 16
"""Memory a JSON parse takes per byte of text (json_array_length of 10 MB took 120 MB)."""

LONG_ARITHMETIC: Final = frozenset({"numeric_div", "numeric_div_trunc", "numeric_mod", "div", "mod", "numeric_mul"})
"""numeric's schoolbook multiplication and long division (numeric.c ``mul_var``, ``div_var``) check for no
interrupts and take the product of the operands' digits: ``(1e131000/7)/(1e65000/3)`` ran 0.68 s (0.08 ns per
pair of printed digits), a multiplication of two 65 000-digit numbers 0.12 s."""
LONG_ARITHMETIC_PAIRS_PER_NS: Final = 4
"""Counted at 0.25 ns per pair of printed digits: three times the division measured."""

INTERRUPTIBLE: Final = frozenset({
    # Their loops check for interrupts, so a cancel stops them within the call.
    "repeat", "generate_series", "generate_subscripts", "regexp_replace", "regexp_match", "regexp_matches",
    "regexp_split_to_array", "regexp_split_to_table", "regexp_substr", "regexp_count", "regexp_instr",
    "regexp_like", "textregexeq", "textregexne", "texticregexeq", "texticregexne", "nameregexeq",
    "nameregexne", "nameicregexeq", "nameicregexne", "bpcharregexeq", "bpcharregexne", "bpchariregexeq",
    "bpchariregexne", "similar_to_escape", "similar_escape", "pg_sleep",
})
_COMPARISON = re.compile(r"(eq|ne|lt|le|gt|ge|cmp|_larger|_smaller|hash|hash_extended)$")


def cost_positions(catalog: Catalog) -> dict[int, tuple[int, ...]]:
    """Function OID -> the argument positions whose sizes multiply into its time.

    Keys of ``COST_BOUNDED_FUNCTIONS`` name an overload (``ltrim(text, text)``) or every overload of a
    name; a rule holds for every function with the same C symbol and argument count too (``like`` and
    ``textlike`` run the same code).
    """
    resolved: dict[int, tuple[int, ...]] = {}
    for key, positions in COST_BOUNDED_FUNCTIONS.items():
        name, _, rest = key.partition("(")
        for function in catalog.functions_by_name.get(name.strip(), ()):
            if rest:
                wanted = [part.strip() for part in rest.rstrip(")").split(",") if part.strip()]
                if [catalog.type_display(t) for t in function.arguments] != [_display(catalog, w) for w in wanted]:
                    continue
            resolved[function.oid] = positions
    by_symbol: dict[tuple[str, int], tuple[int, ...]] = {}
    for oid, positions in resolved.items():
        function = catalog.functions[oid]
        if function.source and function.kind == "f":
            by_symbol[(function.source, len(function.arguments))] = positions
    for function in catalog.functions.values():
        symbol = (function.source, len(function.arguments))
        if function.kind == "f" and symbol in by_symbol and function.oid not in resolved:
            resolved[function.oid] = by_symbol[symbol]
    return resolved


def _display(catalog: Catalog, name: str) -> str:
    if name.endswith("[]"):
        return _display(catalog, name[:-2]) + "[]"
    info = catalog.types_by_name.get(name)
    return info.display if info is not None else name


def call_cost(function: FunctionInfo | None, sizes: list[Bound], products: Mapping[int, tuple[int, ...]]) -> Bound:
    """Nanoseconds one call runs without checking for interrupts, at these argument sizes."""
    if function is None or function.name in INTERRUPTIBLE:
        return Bound()
    if function.name in LONG_ARITHMETIC and len(sizes) == 2 and NUMERIC in function.arguments:
        pairs = (sizes[0] * sizes[1]).divided(LONG_ARITHMETIC_PAIRS_PER_NS)
        return pairs + total(sizes).scaled(LINEAR_NS_PER_BYTE)
    positions = products.get(function.oid)
    if positions:
        # One cost-driving argument: the audit found its time growing faster than its size (tsquery parsing,
        # Unicode normalisation); counted as the square.
        factors = [sizes[p] for p in positions if p < len(sizes)]
        if len(factors) == 1:
            factors = factors * 2
        product = Bound(1)
        for factor in factors:
            product = product * factor
        return product.scaled(PRODUCT_NS_PER_STEP) + total(sizes).scaled(LINEAR_NS_PER_BYTE)
    weight = COMPARISON_NS_PER_BYTE if _COMPARISON.search(function.name) else LINEAR_NS_PER_BYTE
    return total(sizes).scaled(weight)


_JSON_BUILDERS: Final = frozenset({
    "json_agg", "json_object_agg", "json_build_object", "json_build_array", "json_object", "to_json",
    "row_to_json", "array_to_json", "json_agg_strict", "json_object_agg_strict", "json_object_agg_unique",
})


def parses_json(function: FunctionInfo | None) -> bool:
    """True for a function that parses JSON text (``json_array_length``, ``->`` on json, a cast to jsonb)."""
    if function is None:
        return False
    name = function.name
    return name in ("json_in", "jsonb_in") or (name.startswith("json_") and name not in _JSON_BUILDERS)


def call_memory(function: FunctionInfo | None, argument_types: list[int], sizes: list[Bound],
                result: Bound) -> Bound:
    """Bytes one call allocates: its result, and a parse's working memory for the JSON text it reads."""
    if not parses_json(function):
        return result
    parsed = total([size for type_oid, size in zip(argument_types, sizes) if type_oid == JSON]
                   if function is not None and function.name.startswith("json_") else sizes)
    return result + parsed.scaled(JSON_PARSE_MEMORY_FACTOR)
