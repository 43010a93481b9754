"""DATA: the size rules of built-in functions, as upper bounds on the printed size of their result.

Each rule takes the call's arguments (``Arg``: each one's size bound, its
magnitude when it is a number, its text when it is a constant) and answers a
``Bound`` on the result's printed and stored size. A function with no rule and
a result type that does not bound itself is unbounded (``bounds.UNKNOWN``):
legal, but costly calls over it are refused. Rules are looked up by
``pg_proc.proname``; ``tests/test_guard_size_rules.py`` checks each against
the server with generated inputs (the output must stay under the rule).

Sizes are in bytes of the value as PostgreSQL prints it (a bytea's ``\\x``
hex, a jsonb's spaces, an array's quotes) or holds it (without its length
word), whichever is larger: a jsonb's 4-byte entries and numbers' headers, an
array's header and its elements' length words, a bit string's length. The one
type held beyond its bound is tsquery (12 bytes per item; the work budget of
text search is reckoned in its printed size), kept in view by the test.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.ir import Array, Const, Expr
from drivers.postgres.guard.sizes.bounds import DATA, MAX_NUMBER, UNKNOWN, Bound, constant, maximum, total


@attrs.define
class Arg:
    """One argument of a call, as the size rules see it."""

    expr: Expr
    """The analysed argument."""
    size: Bound
    """Its printed size."""
    number: Bound
    """Its magnitude, when it is a number (``UNKNOWN`` otherwise)."""
    text: str | None = None
    """Its text, when it is a constant."""


@attrs.define
class RuleContext:
    """What a rule may need besides the arguments."""

    rows: Bound
    """Rows an aggregate reads (its query level's input), or 1 outside aggregates."""
    result_type: int
    """The call's result type."""
    result_limit: Bound | None
    """What the result type alone allows (``type_sizes.type_bound``)."""
    catalog: Catalog | None = None
    """The catalog, for rules that depend on an argument's type."""


Rule = Callable[[list[Arg], RuleContext], Bound]
RULES: dict[str, Rule] = {}
"""Function name -> rule."""
ROWS: dict[str, Callable[[list[Arg]], Bound]] = {}
"""Set-returning function name -> a bound on the rows one call returns."""


def rule(*names: str) -> Callable[[Rule], Rule]:
    """Register a size rule for these function names."""

    def register(function: Rule) -> Rule:
        for name in names:
            RULES[name] = function
        return function

    return register


def rows(*names: str) -> Callable[[Callable[[list[Arg]], Bound]], Callable[[list[Arg]], Bound]]:
    """Register a row-count rule for these set-returning functions."""

    def register(function: Callable[[list[Arg]], Bound]) -> Callable[[list[Arg]], Bound]:
        for name in names:
            ROWS[name] = function
        return function

    return register


def _size(args: list[Arg], index: int) -> Bound:
    return args[index].size if index < len(args) else Bound()


def _number(args: list[Arg], index: int) -> Bound:
    return args[index].number if index < len(args) else UNKNOWN


def quoted(size: Bound) -> Bound:
    """A value quoted with each quote and backslash doubled (an array element, ``quote_literal``)."""
    return size.scaled(2, 3)


ARRAY_HEADER = 24
"""Bytes of an array's header, one dimension included."""
ELEMENT_OVERHEAD = 8
"""Bytes an array element may take beyond its printed value (alignment, its length word)."""
DIMENSION_BYTES = 26
"""Bytes each dimension of an array may add: eight in its header, and in print ``[lb:ub]`` (up to 25
characters, ``[-2147483648:-2147483647]``) where its lower bound is not 1."""


def array_element(size: Bound) -> Bound:
    """One array element: quoted and escaped in print, its length word in storage."""
    return quoted(size).scaled(1, ELEMENT_OVERHEAD)


def json_escaped(size: Bound) -> Bound:
    """A string as a JSON string: a control character becomes ``\\u00XX``."""
    return size.scaled(6, 2)


# Text ------------------------------------------------------------------------------------------------------

rule("btrim", "ltrim", "rtrim", "substr", "substring", "left", "right", "split_part", "reverse", "to_ascii",
     "unistr", "regexp_substr", "text", "varchar", "trim_array", "array_remove", "jsonb_delete", "jsonb_delete_path",
     "jsonb_strip_nulls", "json_strip_nulls", "strip", "ts_delete", "ts_filter", "json_array_element_text",
     "jsonb_array_element_text", "json_object_field_text", "jsonb_object_field_text", "json_extract_path_text",
     "jsonb_extract_path_text", "json_array_element", "jsonb_array_element", "json_object_field",
     "jsonb_object_field", "json_extract_path", "jsonb_extract_path", "pclose", "popen", "path",
     "set_bit", "set_byte", "bitshiftleft", "bitshiftright", "bitnot", "querytree")(
    lambda args, _: _size(args, 0))


@rule("convert_from")
def _convert_from(args: list[Arg], _: RuleContext) -> Bound:
    # Each byte of a single-byte encoding may become three in UTF-8 (WIN866 0xB0 is U+2591), and the bytea
    # prints two digits per byte: convert_from of 200 bytes prints up to 600.
    return _size(args, 0).scaled(2)


@rule("like_escape")
def _like_escape(args: list[Arg], _: RuleContext) -> Bound:
    # An empty escape character doubles every backslash (measured: like_escape(repeat('\\', n), '') is 2n bytes).
    return _size(args, 0).scaled(2)


@rule("lower", "upper", "initcap")
def _case_mapping(args: list[Arg], _: RuleContext) -> Bound:
    # Full case mapping (ICU) can turn one character into three ("ΐ" to "Ϊ́").
    return _size(args, 0).scaled(3)


@rule("lpad", "rpad")
def _pad(args: list[Arg], _: RuleContext) -> Bound:
    length = _number(args, 1)
    return length.scaled(4) if not length.unknown else UNKNOWN


@rule("repeat")
def _repeat(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, 0) * _number(args, 1)


@rule("replace")
def _replace(args: list[Arg], _: RuleContext) -> Bound:
    string, replacement = _size(args, 0), _size(args, 2)
    needle = args[1].text if len(args) > 1 else None
    if needle is not None and len(needle.encode("utf-8")) > 0:
        occurrences = Bound(string.fixed // len(needle.encode("utf-8")), string.data, string.unknown,
                            string.stored // len(needle.encode("utf-8")))
        return string + occurrences * replacement
    return string + string * replacement


@rule("translate")
def _translate(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, 0).scaled(4)


@rule("overlay")
def _overlay(args: list[Arg], _: RuleContext) -> Bound:
    # overlay(s placing r from p for n) is substr(s, 1, p - 1) || r || substr(s, p + n): with a negative n
    # the second part is the whole string again (overlay(s, '', 1000, -2147483648) is 999 + len(s) bytes).
    return (_size(args, 0).scaled(2) + _size(args, 1)).scaled(1, 8)


@rule("byteacat", "bitcat", "textcat", "anytextcat", "textanycat", "array_cat", "jsonb_concat",
      "tsvector_concat", "multirange_union", "path_add",
      # The bounds of a range operation's result are bounds of either argument, each used once
      # (multirange_intersect('{(,)}', x) is x).
      "range_merge", "range_union", "range_intersect", "range_minus", "multirange_intersect", "multirange_minus")
def _concatenation(args: list[Arg], _: RuleContext) -> Bound:
    return total([a.size for a in args]).scaled(1, 8)


@rule("concat")
def _concat(args: list[Arg], _: RuleContext) -> Bound:
    return total([a.size for a in args])


@rule("concat_ws")
def _concat_ws(args: list[Arg], _: RuleContext) -> Bound:
    if not args:
        return Bound()
    values = total([a.size for a in args[1:]])
    return values + args[0].size.scaled(max(0, len(args) - 2))


@rule("quote_ident")
def _quote_ident(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, 0).scaled(2, 2)


@rule("quote_literal", "quote_nullable")
def _quote_literal(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, 0).scaled(2, 4)


@rule("md5")
def _md5(args: list[Arg], _: RuleContext) -> Bound:
    return Bound(32)


@rule("sha224", "sha256", "sha384", "sha512")
def _sha(args: list[Arg], _: RuleContext) -> Bound:
    return Bound(130)


@rule("to_hex")
def _to_hex(args: list[Arg], _: RuleContext) -> Bound:
    return Bound(16)


@rule("chr")
def _chr(args: list[Arg], _: RuleContext) -> Bound:
    return Bound(4)


@rule("encode")
def _encode(args: list[Arg], _: RuleContext) -> Bound:
    # The bytea's printed size counts two hex digits per byte; escape format prints at most \ooo (4) per byte.
    return _size(args, 0).scaled(2)


@rule("decode", "convert_to", "convert")
def _decode(args: list[Arg], _: RuleContext) -> Bound:
    # A bytea prints as \x and two hex digits per byte; conversion to another encoding at most quadruples.
    return _size(args, 0).scaled(8, 2)


@rule("to_char")
def _to_char(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, 1).scaled(64, 64)


@rule("normalize")
def _normalize(args: list[Arg], _: RuleContext) -> Bound:
    # The longest canonical decomposition (U+FDFA) is 18 code points from one.
    return _size(args, 0).scaled(24)


@rule("similar_escape", "similar_to_escape")
def _similar_escape(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, 0).scaled(3, 16)


@rule("regexp_replace")
def _regexp_replace(args: list[Arg], _: RuleContext) -> Bound:
    string, replacement = _size(args, 0), _size(args, 2)
    # Each match (at most one per character, empty matches included) becomes the replacement, whose back
    # references (\1, \&) each copy at most the whole string.
    per_match = replacement + replacement * string
    flags = args[3].text if len(args) > 3 else None
    if len(args) <= 3 or (flags is not None and "g" not in flags and len(args) == 4):
        return string + per_match
    return string + string.scaled(1, 1) * per_match


@rule("format")
def _format(args: list[Arg], _: RuleContext) -> Bound:
    template = args[0].text if args else None
    if template is None:
        return UNKNOWN
    return _format_bound(template, args[1:])


def _format_bound(template: str, values: list[Arg]) -> Bound:
    """The most ``format(template, values...)`` prints: every conversion at its width or its widest value."""
    widest = maximum([a.size.scaled(2, 3) for a in values]) if values else Bound()
    result = Bound(len(template.encode("utf-8")))
    index, length = 0, len(template)
    while index < length:
        if template[index] != "%":
            index += 1
            continue
        index += 1
        digits = ""
        while index < length and (template[index].isdigit() or template[index] in "$-*"):
            if template[index] == "*":
                return UNKNOWN
            digits += template[index]
            index += 1
        if index < length and template[index] == "%":
            index += 1
            continue
        width = digits.split("$")[-1].lstrip("-")
        result = result + maximum([widest, constant(int(width) * 4 if width.isdigit() else 0)])
        index += 1
    return result


def literal_numbers(expr: Expr) -> list[int] | None:
    """The integers of a constant array (``ARRAY[3, 4]`` or ``'{3,4}'``), or None."""
    if isinstance(expr, Array):
        values = []
        for element in expr.elements:
            inner = literal_numbers(element)
            if inner is None:
                return None
            values.extend(inner)
        return values
    while not isinstance(expr, Const) and hasattr(expr, "arg"):
        expr = expr.arg  # type: ignore[attr-defined]
    if isinstance(expr, Const) and expr.text is not None:
        expr.value_read = True
        text = expr.text.strip()
        if text.lstrip("-").isdigit():
            return [int(text)]
        if text.startswith("{"):
            parts = [p.strip() for p in text.strip("{}").replace("{", ",").replace("}", ",").split(",") if p.strip()]
            if all(p.lstrip("-").isdigit() for p in parts):
                return [int(p) for p in parts]
    return None


__all__ = ["ARRAY_HEADER", "Arg", "DATA", "DIMENSION_BYTES", "ELEMENT_OVERHEAD", "MAX_NUMBER", "ROWS", "RULES",
           "RuleContext", "array_element", "json_escaped", "literal_numbers", "quoted"]
