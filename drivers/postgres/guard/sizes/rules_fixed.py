"""DATA: size rules of functions whose results are small, configured, or a fixed multiple of an argument.

The rest of ``size_rules.py``'s table: settings and names the administrator
configures (the administrator's data, ``D``), binary ``*send`` forms, the
transition states of built-in aggregates, range and multirange constructors.
``tests/test_guard_size_rules.py`` checks them against the server as it
checks the others.
"""

from __future__ import annotations

from drivers.postgres.guard.sizes.bounds import DATA, Bound, maximum, total
from drivers.postgres.guard.sizes.rules import Arg, RuleContext, rule

_SEND_FACTOR = 16
"""A value's binary form, printed as bytea hex, per byte of its printed form: a record of empty columns
prints one comma per column and sends eight bytes (sixteen hex digits) for each."""


def _size(args: list[Arg], index: int) -> Bound:
    return args[index].size if index < len(args) else Bound()


# Configured by the administrator: settings, search paths, enum labels, dictionaries' output.
rule("current_setting", "current_schemas", "enum_range")(lambda args, _: DATA)


@rule("ts_lexize")
def _lexize(args: list[Arg], _: RuleContext) -> Bound:
    # A dictionary's lexemes for one token: the administrator's dictionary, at most a few per token.
    return DATA + _size(args, 1).scaled(4, 64)


rule("timeofday")(lambda args, _: Bound(64))
rule("cash_words")(lambda args, _: Bound(512))
rule("abbrev", "host")(lambda args, _: Bound(64))  # an inet prints at most 49 characters
rule("pg_size_pretty")(lambda args, _: _size(args, 0) + Bound(8))
# bpchar(value, typmod, explicit) pads to typmod - 4 characters with spaces (bpchar('a', 3004, true) holds
# 3000 bytes; it prints without the trailing spaces).
rule("bpchar")(lambda args, _: _size(args, 0) + (args[1].number if len(args) > 1 else Bound()))
rule("xmlcomment")(lambda args, _: _size(args, 0).scaled(1, 7))
rule("xmlconcat2")(lambda args, _: total([_size(args, 0), _size(args, 1)]))


@rule("multirange", "int4multirange", "int8multirange", "nummultirange", "datemultirange", "tsmultirange",
      "tstzmultirange")
def _multirange(args: list[Arg], _: RuleContext) -> Bound:
    # The ranges given (one by one or as a VARIADIC array), a comma between, braces around; it holds its
    # type and count (8 bytes) and aligns its ranges to 8 (int8multirange() holds 12 bytes).
    return total([a.size for a in args]).scaled(2, 16)


rule("range_intersect_agg_transfn", "multirange_intersect_agg_transfn")(
    lambda args, _: maximum([a.size for a in args]))

# Aggregate transition states: arrays of two or three numbers of the argument's type.
rule("float4_accum", "float8_accum", "float8_combine", "float8_regr_accum", "float8_regr_combine",
     "int2_avg_accum", "int2_avg_accum_inv", "int4_avg_accum", "int4_avg_accum_inv", "int4_avg_combine")(
    lambda args, _: Bound(256))
rule("interval_accum", "interval_accum_inv", "interval_combine")(lambda args, _: Bound(512))


# Arithmetic on numbers: the result's digits come from the operands' (a type's own limit caps each). Counted so
# that a sum of stored numbers stays the stored data's size, as the cost of dividing it depends on.
rule("numeric_abs", "abs", "numeric_uminus", "numeric_uplus", "numeric_larger", "numeric_smaller", "ceil", "ceiling",
     "floor")(lambda args, _: maximum([a.size for a in args[:2]]).scaled(1, 2))
# A sum's digits run from the larger integer part to the longer fraction: 0.5e9999 + 459e-2000 prints 12 000
# digits, the two operands' together (measured).
rule("numeric_add", "numeric_sub", "numeric_mod", "mod")(lambda args, _: total([a.size for a in args[:2]]).scaled(1, 2))


@rule("round", "trunc")
def _rounded(args: list[Arg], _: RuleContext) -> Bound:
    # To a scale, the digits after the point are that many: round(1, 100) prints 102 characters (measured).
    value = _size(args, 0).scaled(1, 2)
    return value + args[1].number if len(args) > 1 else value



rule("numeric_mul")(lambda args, _: total([a.size for a in args]).scaled(1, 2))
# A quotient has at most the dividend's digits plus the divisor's (dividing by 0.001 multiplies), and at most
# NUMERIC_MAX_DISPLAY_SCALE (1 000) digits after the point.
rule("numeric_div", "numeric_div_trunc", "div")(lambda args, _: total([a.size for a in args]).scaled(1, 1024))
# An aggregate of numbers: a sum has at most 19 more digits than its largest term (2^63 rows); an average at
# most the display scale more.
# The terms differ row by row, and a sum holds the integer digits of one and the fraction of another (1e131071
# plus 459e-2000 prints 133 073 characters): twice the largest term.
rule("sum")(lambda args, _: maximum([a.size for a in args]).scaled(2, 24))
rule("avg")(lambda args, _: maximum([a.size for a in args]).scaled(2, 1044))


_FLOATS = frozenset({700, 701})
"""float4 and float8: a float prints at most 24 characters, but as a numeric 1e308 is 309 digits."""


@rule("numeric")
def _to_numeric(args: list[Arg], _: RuleContext) -> Bound:
    # The cast to numeric: the digits the value has; a float's value keeps 15 significant digits, 5e-324 prints
    # 340 characters (measured). numeric(x, typmod) pads the scale the typmod gives: numeric(0, 1000) prints
    # 998 (measured), at most the typmod's own number.
    if args and args[0].expr.type in _FLOATS:
        return Bound(342)
    value = _size(args, 0).scaled(1, 2)
    return value + args[1].number if len(args) > 1 else value


def send_rule(args: list[Arg], _: RuleContext) -> Bound:
    """A ``*send`` function: the value's binary form, as bytea (``\\x`` and two hex digits per byte)."""
    return _size(args, 0).scaled(_SEND_FACTOR, 64)
