"""DATA: size rules of built-in functions over structured values: JSON, arrays, aggregates, text search,
geometry and bit strings (the text functions are in ``size_rules.py``, which this module extends)."""

from __future__ import annotations

from drivers.postgres.guard.model.ir import Array, Cast
from drivers.postgres.guard.sizes.bounds import UNKNOWN, Bound, maximum, total
from drivers.postgres.guard.sizes.json_sizes import as_json
from drivers.postgres.guard.sizes.jsonpath import computes
from drivers.postgres.guard.sizes.rules import (
    ARRAY_HEADER,
    DIMENSION_BYTES,
    Arg,
    RuleContext,
    array_element,
    literal_numbers,
    rule,
)
from drivers.postgres.guard.sizes.rules_sets import path_rows

_ARRAY_HEADER = ARRAY_HEADER


def _size(args: list[Arg], index: int) -> Bound:
    return args[index].size if index < len(args) else Bound()


_element = array_element


# JSON ------------------------------------------------------------------------------------------------------

@rule("to_json", "to_jsonb", "row_to_json", "array_to_json")
def _to_json(args: list[Arg], context: RuleContext) -> Bound:
    return as_json(args[0], context) if args else Bound(4)


@rule("json_build_object", "jsonb_build_object", "json_build_array", "jsonb_build_array")
def _json_build(args: list[Arg], context: RuleContext) -> Bound:
    # jsonb prints ", " between members and ": " after keys; an empty one holds its 4-byte header.
    return total([as_json(a, context).scaled(1, 4) for a in args]).scaled(1, 4)


@rule("json_object", "jsonb_object")
def _json_object(args: list[Arg], _: RuleContext) -> Bound:
    return total([a.size for a in args]).scaled(8, 2)


@rule("jsonb_set", "jsonb_set_lax", "jsonb_insert")
def _jsonb_set(args: list[Arg], _: RuleContext) -> Bound:
    return (_size(args, 0) + _size(args, 1).scaled(2) + _size(args, 2)).scaled(1, 8)


@rule("jsonb_pretty")
def _jsonb_pretty(args: list[Arg], _: RuleContext) -> Bound:
    # Every line is indented four spaces per level of nesting, and nesting is at most half the text.
    value = _size(args, 0)
    return value + value * value.scaled(2)


def _path_text(args: list[Arg]) -> str | None:
    return args[1].text if len(args) > 1 else None


@rule("jsonb_path_query", "jsonb_path_query_tz", "jsonb_path_query_first", "jsonb_path_query_first_tz")
def _path_item(args: list[Arg], context: RuleContext) -> Bound:
    # A part of the document or of the variables (``$x``), or a value the path writes (the path '1e300' returns
    # 1e300, 301 characters); where the path computes, also a number it computed or a keyvalue() object.
    parts = _size(args, 0) + _size(args, 1) + _size(args, 2)
    if not computes(_path_text(args)):
        return parts
    return parts.scaled(2, 147_458 + 64)


@rule("jsonb_path_query_array", "jsonb_path_query_array_tz")
def _path_array(args: list[Arg], context: RuleContext) -> Bound:
    path, document = _path_text(args), _size(args, 0) + _size(args, 2)
    if path_rows(args).unknown:
        # Index lists, a second .** or keyvalue(): each step may return a part again for each, and steps
        # multiply ('$' || repeat('[0,0,0,0]', 6) over [[[[[[1]]]]]] returns 4 096 items).
        return UNKNOWN
    if path is not None and not computes(path):
        # Parts of the document: each accessor step can return each part once; .** returns every part
        # inside every part.
        parts = document * Bound(len(path) + 1)
        if ".**" in path:
            parts = parts + document * document
        return parts.scaled(2, 2)
    item = document.scaled(2, 147_458 + 64)
    return path_rows(args) * item.scaled(1, 2)


@rule("json_typeof", "jsonb_typeof")
def _typeof(args: list[Arg], _: RuleContext) -> Bound:
    return Bound(7)


# Aggregates ------------------------------------------------------------------------------------------------

@rule("string_agg")
def _string_agg(args: list[Arg], context: RuleContext) -> Bound:
    return context.rows * (_size(args, 0) + _size(args, 1))


@rule("array_agg")
def _array_agg(args: list[Arg], context: RuleContext) -> Bound:
    return context.rows * _element(_size(args, 0)) + Bound(_ARRAY_HEADER)


@rule("json_agg", "jsonb_agg")
def _json_agg(args: list[Arg], context: RuleContext) -> Bound:
    return context.rows * as_json(args[0], context).scaled(1, 2) + Bound(2)


@rule("json_object_agg", "jsonb_object_agg")
def _json_object_agg(args: list[Arg], context: RuleContext) -> Bound:
    return context.rows * (as_json(args[0], context) + as_json(args[1], context)).scaled(1, 4) + Bound(2)


@rule("xmlagg", "range_agg", "range_intersect_agg")
def _collecting(args: list[Arg], context: RuleContext) -> Bound:
    return context.rows * _size(args, 0).scaled(1, 2)


@rule("max", "min", "mode", "first_value", "last_value", "nth_value", "array_larger", "array_smaller", "bit_and",
      "bit_or", "bit_xor", "bitand", "bitor", "bitxor", "text_larger", "text_smaller", "bpchar_larger",
      "bpchar_smaller")
def _one_of(args: list[Arg], _: RuleContext) -> Bound:
    return maximum([a.size for a in args]) if args else UNKNOWN


@rule("lag", "lead")
def _lag(args: list[Arg], _: RuleContext) -> Bound:
    # The value, or the default (the third argument) where there is no row at that offset.
    return maximum([a.size for i, a in enumerate(args) if i != 1])


def _fraction_count(fractions: Arg) -> Bound:
    """How many fractions an ordered-set aggregate's array argument holds: those written in ARRAY[...], else
    at most one per byte of the array."""
    expr = fractions.expr
    while isinstance(expr, Cast):
        expr = expr.arg
    if isinstance(expr, Array) and not expr.multidims:
        return Bound(len(expr.elements))
    return fractions.size.scaled(1, 1)


@rule("percentile_disc")
def _percentile_disc(args: list[Arg], context: RuleContext) -> Bound:
    fractions, value = args[0], _size(args, 1)
    if context.result_type and fractions.expr.type in (1022,):  # float8[]: one value per fraction
        return _fraction_count(fractions) * _element(value) + Bound(_ARRAY_HEADER)
    return value


@rule("percentile_cont")
def _percentile_cont(args: list[Arg], context: RuleContext) -> Bound:
    if context.result_limit is not None:
        return context.result_limit
    return _fraction_count(args[0]) * Bound(96 + 3) + Bound(_ARRAY_HEADER)


# Arrays ----------------------------------------------------------------------------------------------------

@rule("array_fill")
def _array_fill(args: list[Arg], _: RuleContext) -> Bound:
    dimensions = literal_numbers(args[1].expr) if len(args) > 1 else None
    if dimensions is None:
        return UNKNOWN
    count = 1
    for dimension in dimensions:
        count *= max(0, dimension)
    return Bound(count) * _element(_size(args, 0)) + Bound(_ARRAY_HEADER + DIMENSION_BYTES * len(dimensions))


@rule("array_append")
def _array_append(args: list[Arg], _: RuleContext) -> Bound:
    # The element is quoted and escaped like the others (array_append('{}', repeat('\\', n)) prints 2n + 4);
    # appending to NULL makes a new array, with its header.
    return _size(args, 0) + _element(_size(args, 1)) + Bound(_ARRAY_HEADER)


@rule("array_prepend")
def _array_prepend(args: list[Arg], _: RuleContext) -> Bound:
    # As array_append; and prepending to an array whose lower bound is 1 makes it 0, which prints the
    # dimensions ("[0:n]=").
    return _size(args, 1) + _element(_size(args, 0)) + Bound(DIMENSION_BYTES + _ARRAY_HEADER)


@rule("array_replace")
def _array_replace(args: list[Arg], _: RuleContext) -> Bound:
    array = _size(args, 0)
    return array + array * _element(_size(args, 2))


@rule("array_to_string")
def _array_to_string(args: list[Arg], _: RuleContext) -> Bound:
    array = _size(args, 0)
    separators = _size(args, 1) + _size(args, 2)
    return array + array * separators


@rule("array_positions")
def _array_positions(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, 0).scaled(12, _ARRAY_HEADER)


@rule("string_to_array", "regexp_split_to_array", "tsvector_to_array", "parse_ident")
def _split_to_array(args: list[Arg], _: RuleContext) -> Bound:
    # Every character may become an element: printed "" with a comma, or held with its 4-byte length word
    # and alignment (string_to_array(repeat('"', 1000), NULL) holds 8 020 bytes).
    return _size(args, 0).scaled(8, _ARRAY_HEADER + 8)


@rule("regexp_match", "regexp_matches")
def _regexp_match(args: list[Arg], _: RuleContext) -> Bound:
    # One element per capture group (a group takes "(" and ")" of the pattern; the whole match when there is
    # none), each at most the string.
    pattern = _size(args, 1)
    groups = Bound(pattern.fixed // 2 + 1, pattern.data, pattern.unknown, pattern.stored // 2)
    return groups * _element(_size(args, 0)) + Bound(_ARRAY_HEADER)


@rule("array_dims")
def _array_dims(args: list[Arg], _: RuleContext) -> Bound:
    return Bound(6 * 26)


# Text search -----------------------------------------------------------------------------------------------

@rule("to_tsvector", "array_to_tsvector")
def _to_tsvector(args: list[Arg], _: RuleContext) -> Bound:
    # Each word is quoted, and every occurrence adds a position (at most five digits and a comma); each
    # lexeme holds a 4-byte entry, and a hyphenated word is indexed with its parts: 'a-b' holds 36 bytes.
    return _size(args, len(args) - 1 if len(args) < 3 else 1).scaled(8, 16)


@rule("json_to_tsvector", "jsonb_to_tsvector")
def _json_to_tsvector(args: list[Arg], _: RuleContext) -> Bound:
    # The document is the argument before the filter (``[regconfig,] document, filter``).
    return _size(args, max(0, len(args) - 2)).scaled(8, 16)


@rule("to_tsquery", "plainto_tsquery", "phraseto_tsquery", "websearch_to_tsquery")
def _to_tsquery(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, len(args) - 1).scaled(8, 8)


@rule("setweight")
def _setweight(args: list[Arg], _: RuleContext) -> Bound:
    return _size(args, 0).scaled(2, 2)


@rule("tsquery_and", "tsquery_or", "tsquery_phrase", "tsquery_not")
def _tsquery_combine(args: list[Arg], _: RuleContext) -> Bound:
    return total([a.size for a in args]).scaled(1, 16)


@rule("ts_headline")
def _ts_headline(args: list[Arg], _: RuleContext) -> Bound:
    document = maximum([a.size for a in args])
    return document + document * (maximum([a.size for a in args]) + Bound(16))


# Geometry and bit strings ----------------------------------------------------------------------------------

@rule("polygon")
def _polygon(args: list[Arg], _: RuleContext) -> Bound:
    if len(args) == 2:  # polygon(points, circle)
        return args[0].number.scaled(52, 64) if not args[0].number.unknown else UNKNOWN
    return _size(args, 0).scaled(4, 12 * 52 + 64)


@rule("path_add_pt", "path_sub_pt", "path_mul_pt", "path_div_pt")
def _path_moved(args: list[Arg], _: RuleContext) -> Bound:
    # A point takes at least five characters and prints at most 51.
    return _size(args, 0).scaled(11, 64)


@rule("varbit", "bit")
def _bit_length(args: list[Arg], context: RuleContext) -> Bound:
    # A length of at most 0 leaves the bit string as it is (bit(B'1010', 0, true) is B'1010').
    # It holds its length in bits (4 bytes) before its bytes.
    if len(args) > 1 and not args[1].number.unknown:
        return maximum([args[1].number.scaled(1, 1 + 4), _size(args, 0)])
    return _size(args, 0).scaled(32, 4)
