"""Statement makers for aggregates (every plain aggregate of pg_catalog, DISTINCT, ORDER BY, FILTER, GROUP BY,
GROUPING), ordered-set and hypothetical-set aggregates, and window functions.
"""

from __future__ import annotations

import random

from type_binding import Binder, function_name
from type_generation_exprs import related
from type_palette import Palette

# -- aggregates ------------------------------------------------------------------------------------------------
AGGREGATE_SHAPES = ("{f}({a})", "{f}(DISTINCT {a})", "{f}({a} ORDER BY {a0})", "{f}({a}) FILTER (WHERE t.c_bool)")


def aggregates(palette: Palette, rng: random.Random) -> list[str]:
    """Every plain aggregate of pg_catalog over fitting and unfitting arguments; DISTINCT, ORDER BY, FILTER,
    GROUP BY with GROUPING(), and errors (nested aggregates, ungrouped columns)."""
    binder = Binder(palette)
    statements: list[str] = []
    ordered = {proc.oid for proc in palette.procs if proc.kind == "a" and proc.name in _ORDERED_SET}
    for proc in palette.procs:
        if proc.kind != "a" or proc.oid in ordered or not binder.callable(proc):
            continue
        for mode in ("exact", "exact", "exact", rng.choice(("unknown", "implicit", "wrong", "null", "number"))):
            args = binder.arguments(proc.args, mode, rng)
            if args is None:
                continue
            text = ", ".join(args) if args else "*"
            shape = rng.choice(AGGREGATE_SHAPES) if args else "{f}({a})"
            name = function_name(proc.name, rng)
            statements.append(f"SELECT {shape.format(f=name, a=text, a0=args[0] if args else '1')} FROM tf.t")
    for column in palette.columns["t"]:
        name = column[0]
        for aggregate in ("sum", "avg", "min", "max", "count", "array_agg", "string_agg({c}, ',')"):
            call = aggregate.format(c=name) if "{" in aggregate else f"{aggregate}({name})"
            statements.append(f"SELECT {call} FROM tf.t")
    statements += [
        "SELECT count(*) FROM tf.t", "SELECT count(*), c_int4 FROM tf.t GROUP BY c_int4",
        "SELECT c_int4, c_text FROM tf.t GROUP BY c_int4", "SELECT c_int4, c_text FROM tf.t GROUP BY id",
        "SELECT sum(sum(c_int4)) FROM tf.t", "SELECT c_int4 FROM tf.t WHERE sum(c_int4) > 1",
        "SELECT GROUPING(c_int4), c_int4, sum(c_int8) FROM tf.t GROUP BY ROLLUP (c_int4)",
        "SELECT GROUPING(c_int4, c_text) FROM tf.t GROUP BY CUBE (c_int4, c_text)",
        "SELECT GROUPING(c_int8) FROM tf.t GROUP BY c_int4", "SELECT c_text, count(*) FROM tf.t GROUP BY GROUPING SETS ((c_text), ())",
        "SELECT string_agg(c_varchar, 'x') FROM tf.t", "SELECT string_agg(c_bytea, '\\x00') FROM tf.t",
        "SELECT string_agg(c_int4, ',') FROM tf.t", "SELECT array_agg(c_int4_array) FROM tf.t",
        "SELECT array_agg(c_pair) FROM tf.t", "SELECT array_agg(t) FROM tf.t", "SELECT jsonb_object_agg(c_text, c_int4) FROM tf.t",
        "SELECT json_object_agg(c_int4, c_pair) FROM tf.t", "SELECT json_agg(t ORDER BY id) FROM tf.t",
        "SELECT sum(c_int4) FILTER (WHERE c_int4) FROM tf.t", "SELECT count(DISTINCT c_int4 ORDER BY c_int4) FROM tf.t",
        "SELECT sum(c_int4) + 1, avg(c_int2)::numeric(5,1) FROM tf.t", "SELECT bool_and(c_int4) FROM tf.t",
        "SELECT max(c_varchar_20), min(c_numeric_10_2), max(c_char_5) FROM tf.t", "SELECT max(c_posint), min(c_label) FROM tf.t",
        "SELECT c_int4 + 1 AS k, count(*) FROM tf.t GROUP BY k HAVING count(*) > 0", "SELECT count(*) FROM tf.t HAVING c_int4 > 1",
        "SELECT range_agg(c_int4range), range_intersect_agg(c_int4multirange) FROM tf.t", "SELECT xmlagg(c_xml) FROM tf.t",
        "SELECT avg(DISTINCT c_int8) FILTER (WHERE id > 1) FROM tf.t", "SELECT count(1.5) FROM tf.t", "SELECT count() FROM tf.t",
        "SELECT percentile_cont(0.5) FROM tf.t", "SELECT sum(c_int4) WITHIN GROUP (ORDER BY c_int4) FROM tf.t",
    ]
    return statements


_ORDERED_SET = ("percentile_cont", "percentile_disc", "mode", "rank", "dense_rank", "percent_rank", "cume_dist")


def ordered_sets(palette: Palette, rng: random.Random) -> list[str]:
    """percentile_cont/disc (one fraction and an array of them), mode, hypothetical-set rank and friends."""
    statements: list[str] = []
    sorts = ("c_float8", "c_int4", "c_numeric", "c_interval", "c_text", "c_date", "c_timestamptz", "c_int8", "c_pair",
             "c_varchar_20", "c_bool", "c_float4", "c_numeric_10_2", "'a'", "NULL", "c_int4_array", "c_posint")
    fractions = ("0.5", "0.5::float4", "'0.5'", "NULL", "ARRAY[0.25, 0.75]", "'{0.5}'", "1", "c_float8", "'{0.5}'::float8[]")
    for name in ("percentile_cont", "percentile_disc"):
        for fraction in fractions:
            for sort in rng.sample(sorts, 5):
                statements.append(f"SELECT {name}({fraction}) WITHIN GROUP (ORDER BY {sort}) FROM tf.t")
    for sort in sorts:
        statements.append(f"SELECT mode() WITHIN GROUP (ORDER BY {sort}) FROM tf.t")
        statements.append(f"SELECT mode() WITHIN GROUP (ORDER BY {sort} DESC) FILTER (WHERE c_bool) FROM tf.t")
    for name in ("rank", "dense_rank", "percent_rank", "cume_dist"):
        for _ in range(12):
            x, y = related(rng, 2)
            statements.append(f"SELECT {name}({x}) WITHIN GROUP (ORDER BY {y}) FROM tf.t")
        statements.append(f"SELECT {name}(1, 'a') WITHIN GROUP (ORDER BY c_int4, c_text) FROM tf.t")
        statements.append(f"SELECT {name}(1, 2) WITHIN GROUP (ORDER BY c_int4) FROM tf.t")
    statements += [
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY c_float8), c_text FROM tf.t GROUP BY c_text",
        "SELECT mode() WITHIN GROUP (ORDER BY c_text), count(*) FROM tf.t", "SELECT mode(c_text) FROM tf.t",
        "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY c_int4) OVER () FROM tf.t",
    ]
    return statements


# -- window functions ------------------------------------------------------------------------------------------
WINDOWS = ("OVER ()", "OVER (PARTITION BY t.c_text)", "OVER (ORDER BY t.id)", "OVER w",
           "OVER (ORDER BY t.id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)", "OVER (w ROWS UNBOUNDED PRECEDING)",
           "OVER (ORDER BY t.c_int4 RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)")


def windows(palette: Palette, rng: random.Random) -> list[str]:
    """lag/lead with defaults of other types, first/last/nth_value, ntile, ranks, aggregates over windows."""
    statements: list[str] = []
    calls = ("lag({x})", "lag({x}, 2)", "lag({x}, 1, {y})", "lead({x}, 1, {y})", "lead({x}, {y})", "first_value({x})",
             "last_value({x})", "nth_value({x}, 2)", "ntile({x})", "row_number()", "rank()", "dense_rank()",
             "percent_rank()", "cume_dist()", "sum({x})", "avg({x})", "count({x})", "max({x})", "array_agg({x})",
             "count(*)", "sum({x}) FILTER (WHERE t.c_bool)", "string_agg({x}, ',')")
    for call in calls:
        for _ in range(14):
            x, y = related(rng, 2)
            window = rng.choice(WINDOWS)
            clause = " WINDOW w AS (ORDER BY t.id)" if "w" in window.split() or "(w " in window else ""
            statements.append(f"SELECT {call.format(x=x, y=y)} {window} FROM tf.t{clause}")
    statements += [
        "SELECT row_number() FROM tf.t", "SELECT lag(c_int4) FROM tf.t", "SELECT sum(c_int4) OVER (), count(*) FROM tf.t",
        "SELECT sum(sum(c_int4)) OVER () FROM tf.t", "SELECT sum(c_int4) OVER (ORDER BY sum(c_int4)) FROM tf.t GROUP BY c_int4",
        "SELECT rank() OVER w FROM tf.t", "SELECT lag(c_int4, 1, 1.5) OVER () FROM tf.t",
        "SELECT lag(c_int4, 1, 'a') OVER () FROM tf.t", "SELECT lag(c_varchar_20, 1, 'a') OVER () FROM tf.t",
        "SELECT lead(c_int2, 1, c_int8) OVER () FROM tf.t", "SELECT lead(c_posint, 1, 0) OVER () FROM tf.t",
        "SELECT first_value(c_numeric_10_2) OVER () FROM tf.t", "SELECT ntile('3') OVER () FROM tf.t",
        "SELECT ntile(3.5) OVER () FROM tf.t", "SELECT sum(c_int4) OVER (PARTITION BY c_int4 ORDER BY c_text), c_int4 FROM tf.t",
        "SELECT row_number() OVER () + 1, rank() OVER () * 1.5 FROM tf.t",
    ]
    return statements
