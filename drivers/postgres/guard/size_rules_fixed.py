"""DATA: size rules of functions whose results are small, configured, or a fixed multiple of an argument.

The rest of ``size_rules.py``'s table: settings and names the administrator
configures (the administrator's data, ``D``), binary ``*send`` forms, the
transition states of built-in aggregates, range and multirange constructors.
``tests/test_guard_size_rules.py`` checks them against the server as it
checks the others.
"""

from __future__ import annotations

from drivers.postgres.guard.bounds import DATA, Bound, maximum, total
from drivers.postgres.guard.size_rules import Arg, RuleContext, rule

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
rule("bpchar")(lambda args, _: _size(args, 0))
rule("xmlcomment")(lambda args, _: _size(args, 0).scaled(1, 7))
rule("xmlconcat2")(lambda args, _: total([_size(args, 0), _size(args, 1)]))


@rule("int4multirange", "int8multirange", "nummultirange", "datemultirange", "tsmultirange", "tstzmultirange")
def _multirange(args: list[Arg], _: RuleContext) -> Bound:
    # The ranges given (one by one or as a VARIADIC array), a comma between, braces around.
    return total([a.size for a in args]).scaled(2, 2)


rule("range_intersect_agg_transfn", "multirange_intersect_agg_transfn")(
    lambda args, _: maximum([a.size for a in args]))

# Aggregate transition states: arrays of two or three numbers of the argument's type.
rule("float4_accum", "float8_accum", "float8_combine", "float8_regr_accum", "float8_regr_combine",
     "int2_avg_accum", "int2_avg_accum_inv", "int4_avg_accum", "int4_avg_accum_inv", "int4_avg_combine")(
    lambda args, _: Bound(256))
rule("interval_accum", "interval_accum_inv", "interval_combine")(lambda args, _: Bound(512))


def send_rule(args: list[Arg], _: RuleContext) -> Bound:
    """A ``*send`` function: the value's binary form, as bytea (``\\x`` and two hex digits per byte)."""
    return _size(args, 0).scaled(_SEND_FACTOR, 64)
