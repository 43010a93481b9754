"""DATA: the rows a set-returning function makes (``ROWS``) and the size of each (``RULES``), as upper bounds.

A row rule answers from the call's arguments (as ``size_rules.Arg``) a ``Bound`` on the rows one call
returns: one per element of the input at most, a series by its bounds and step, a JSON path's items where
the path does not return an item twice. ``tests/test_guard_size_rules.py`` calls each in ``FROM`` and
counts the rows.
"""

from __future__ import annotations

import decimal

from drivers.postgres.guard.model.types import INT2, INT4, INT8, NUMERIC, TSVECTOR
from drivers.postgres.guard.sizes.bounds import UNKNOWN, Bound, maximum, total
from drivers.postgres.guard.sizes.rules import Arg, RuleContext, rows, rule


def _size(args: list[Arg], index: int) -> Bound:
    return args[index].size if index < len(args) else Bound()


def _number(args: list[Arg], index: int) -> Bound:
    return args[index].number if index < len(args) else UNKNOWN


# Sets of rows ----------------------------------------------------------------------------------------------

@rows("generate_series")
def _series_rows(args: list[Arg]) -> Bound:
    if not args or args[0].expr.type not in (INT2, INT4, INT8, NUMERIC):
        return UNKNOWN  # a series of timestamps: its length depends on the interval's value
    span = (_number(args, 0) + _number(args, 1)).scaled(1, 1)
    if len(args) < 3:
        return span
    step = args[2].text
    try:
        stride = abs(decimal.Decimal(step)) if step is not None else decimal.Decimal(0)
    except decimal.InvalidOperation:
        return UNKNOWN
    if stride == 0:
        return UNKNOWN
    if stride >= 1:
        return Bound(span.fixed // int(stride) + 1, span.data, span.unknown, span.stored // int(stride))
    return span.scaled(int(1 / stride) + 1)


@rows("unnest", "json_array_elements", "jsonb_array_elements", "json_array_elements_text",
      "jsonb_array_elements_text", "json_each", "jsonb_each", "json_each_text", "jsonb_each_text",
      "json_object_keys", "jsonb_object_keys", "regexp_split_to_table", "string_to_table", "regexp_matches",
      "json_to_recordset", "jsonb_to_recordset")
def _element_rows(args: list[Arg]) -> Bound:
    # One row per element at most, and an element takes at least a byte of the input.
    return total([a.size for a in args[:1]]).scaled(1, 1)


@rows("json_populate_recordset", "jsonb_populate_recordset")
def _populated_rows(args: list[Arg]) -> Bound:
    # One row per element of the JSON array, the second argument (the first is the row type's base row).
    return _size(args, 1).scaled(1, 1)


@rows("jsonb_path_query", "jsonb_path_query_tz")
def path_rows(args: list[Arg]) -> Bound:
    """Items a JSON path returns: each part of the document or of ``vars`` at most once, a ``keyvalue()``
    object per key and its three members; but a list (``$[0,0,0]``), a second ``**`` or ``keyvalue()``
    returns an item again for each, and the steps multiply (``'$' || repeat('[0,0,0,0]', 6)`` over
    ``[[[[[[1]]]]]]`` returns 4 096 rows, measured): no bound."""
    path = args[1].text if len(args) > 1 else None
    if path is None or "," in path or path.count("**") > 1 or path.count("keyvalue") > 1:
        return UNKNOWN
    return (_size(args, 0) + _size(args, 2)).scaled(3, 3)


rule("generate_series")(lambda args, context: context.result_limit or maximum([a.size for a in args]))
rule("json_array_elements", "jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text",
     "json_object_keys", "jsonb_object_keys", "regexp_split_to_table", "string_to_table")(
    lambda args, _: _size(args, 0))


@rule("unnest")
def _unnest(args: list[Arg], context: RuleContext) -> Bound:
    # An element of an array or a range of a multirange is at most the whole; a lexeme of a tsvector comes
    # as a row (lexeme, positions, weights) holding two arrays: 2 bytes for a position and 8 for its weight
    # where the tsvector prints two characters (unnest('a:1'::tsvector) holds 74 bytes).
    if args and context.catalog is not None and context.catalog.base_type(args[0].expr.type) == TSVECTOR:
        return args[0].size.scaled(5, 80)
    return _size(args, 0)
