"""The statement probes of scripts/interrupt_audit.py --statements (issue 19), grouped by what issue 8's audit missed.

Each of issue 19's examples is here (``example`` names it), with small variants
of the same kind. Sizes grow by about 2 per step from sizes that finish well
within the limit; the audit stops growing a probe at its first overrun, so the
largest sizes listed are reached only by probes that keep stopping. They are
chosen so that no statement should run past a minute or take more than
``SAFE_MEMORY_MB`` even then (the server is shared).

Literal text the guard counts as "bounded" stays under its default 1 024 bytes
(``max_bounded_literal_bytes``), so a refusal says something about the rule,
not about a long literal.
"""

from __future__ import annotations

from collections.abc import Callable

from scripts.interrupt_statements import STORED_SIZES, Dimension, StatementProbe, template

D = Dimension


def doubling(first: int, last: int) -> tuple[int, ...]:
    sizes = [first]
    while sizes[-1] * 2 <= last:
        sizes.append(sizes[-1] * 2)
    if sizes[-1] != last:
        sizes.append(last)
    return tuple(sizes)


def stored(first: int, last: int) -> tuple[int, ...]:
    return tuple(size for size in STORED_SIZES if first <= size <= last)


ONE_ROW = "FROM public.audit_one o"
"""One row: ``{n} + o.id - o.id`` is the size, computed per row by the executor."""
PER_ROW = "{n} + o.id - o.id"

# -- several calls per statement ---------------------------------------------------------------------


def copies(call: str, count: int) -> str:
    """``call`` (with ``x`` for the value) ``count`` times, as a select list."""
    return ", ".join([call] * count)


def many_calls(name: str, call: str, count: int, forms: tuple[str, ...] = ("offset", "constant"), example: str = "",
               sizes: tuple[int, ...] = doubling(1 << 20, 100_000_000)) -> list[StatementProbe]:
    """``call`` (over ``x``) ``count`` times in one select list, over one large value built in one of these forms:

    - ``column``: a sub-select computes it per row from a column; the planner pulls the sub-select up, so each call
      gets its own copy of the expression (and of the interruptible ``repeat`` that builds it);
    - ``offset``: the same sub-select with ``OFFSET 0``, which the planner keeps: the value is built once and the
      calls run one after the other without an interrupt check between them;
    - ``cte``: a materialized CTE, the same for the calls;
    - ``constant``: built from constants, so the planner folds every call while planning.
    """
    sources = {
        "column": f"(SELECT repeat('a', {PER_ROW}) AS x {ONE_ROW}) s",
        "offset": f"(SELECT repeat('a', {PER_ROW}) AS x {ONE_ROW} OFFSET 0) s",
        "constant": "(SELECT repeat('a', {n}) AS x) s",
    }
    probes = []
    for form in forms:
        if form == "cte":
            text = (f"WITH s AS MATERIALIZED (SELECT repeat('a', {PER_ROW}) AS x {ONE_ROW}) "
                    f"SELECT {copies(call, count)} FROM s")
        else:
            text = f"SELECT {copies(call, count)} FROM {sources[form]}"
        probes.append(StatementProbe(D.MANY_CALLS, f"{name}_x{count}_{form}", template(text), sizes, "characters",
                                     example if form == "column" else ""))
    return probes


MANY_CALLS = [
    *many_calls("md5", "md5(x)", 40, ("column", "offset", "cte", "constant"),
                example="md5(x) x 40 over repeat('a', 100000000 + id - id): 10.9 s busy"),
    *many_calls("sha256", "sha256(convert_to(x, 'UTF8'))", 20),
    *many_calls("upper", "length(upper(x))", 20),
    *many_calls("length", "length(x)", 40),
    *many_calls("base64", "length(encode(convert_to(x, 'UTF8'), 'base64'))", 20),
    StatementProbe(D.MANY_CALLS, "md5_x40_stored",
                   template(f"SELECT {copies('md5(v.body)', 40)} FROM public.audit_values v WHERE v.size = {{n}}"),
                   stored(1 << 20, 1 << 24), "characters"),
]

# -- literals whose printed form is long ---------------------------------------------------------------

BIG_EXPONENT = "1e99999"
"""Prints as 100 000 digits (numeric's largest exponent is 131 071 before the point)."""


def jsonb_numbers(count: int) -> str:
    """``'[1e99999, ...]'::jsonb::text``: a literal of 8 bytes a number that prints as 100 000 bytes each."""
    return f"'[{','.join([BIG_EXPONENT] * count)}]'::jsonb::text"


def numeric_texts(count: int) -> str:
    """``'1e99999'::numeric::text || ...``: a string literal cast to numeric prints 100 000 digits."""
    return " || ".join([f"'{BIG_EXPONENT}'::numeric::text"] * count)


SET_OF_1000 = "'" + "x" * 975 + "0, 1[]{}\\\"''E&;amplgt<>/" + "'"
"""A trim set of 1 000 characters: every character the probes' strings hold (digits and separators of jsonb
numbers, the escapes of JSON, SQL, arrays and XML) comes last, so each character trimmed is compared ~975 times."""
NEEDLE_16K = "'2' || substr(1e-16383::text, 3, 16000)"
"""``2`` then 16 000 zeros: a needle that matches a run of zeros everywhere but at its first character."""
PATTERN_16K = "'%' || substr(1e-16383::text, 3, 16000) || '2'"
"""A LIKE pattern whose literal part matches runs of zeros until its last character."""


def printed(name: str, build: Callable[[int], str], sizes: tuple[int, ...], example: str = "") -> StatementProbe:
    return StatementProbe(D.PRINTED_SIZE, name, build, sizes, "numbers of 100 000 digits", example)


NUMBERS = doubling(1, 64)

PRINTED_SIZE = [
    printed("strpos_jsonb_exponents", lambda n: f"SELECT strpos({jsonb_numbers(n)}, {NEEDLE_16K})", NUMBERS,
            "strpos over '[1e99999]'::jsonb::text (100 002 bytes) and 1e-16383::text (16 385): 11-21 s busy"),
    printed("strpos_numeric_string_exponent",
            lambda n: f"SELECT strpos({numeric_texts(n)}, {NEEDLE_16K})", NUMBERS),
    printed("strpos_exponent_needle", lambda n: f"SELECT strpos({jsonb_numbers(n)}, '2' || 1e9999::text)", NUMBERS,
            "1e9999::text (10 005 bytes) as a needle"),
    printed("substr_strpos_jsonb_exponents",
            lambda n: f"SELECT strpos(substr({jsonb_numbers(n)}, 2), '2' || substr({jsonb_numbers(1)}, 3, 16000))",
            NUMBERS),
    printed("like_jsonb_exponents", lambda n: f"SELECT {jsonb_numbers(n)} LIKE {PATTERN_16K}", NUMBERS),
    printed("ltrim_jsonb_exponents", lambda n: f"SELECT length(ltrim(substr({jsonb_numbers(n)}, 3), {SET_OF_1000}))",
            NUMBERS),
    printed("replace_jsonb_exponents",
            lambda n: f"SELECT length(replace({jsonb_numbers(n)}, {NEEDLE_16K}, 'x'))", NUMBERS),
    printed("json_field_exponent_strpos",
            lambda n: "SELECT strpos(" + " || ".join(["('{\"a\": 1e99999}'::jsonb ->> 'a')"] * n) + f", {NEEDLE_16K})",
            NUMBERS),
    printed("md5_jsonb_exponents_many",
            lambda n: "SELECT " + ", ".join([f"md5({jsonb_numbers(n)})"] * 40), NUMBERS),
]

# -- nested escaping -----------------------------------------------------------------------------------

BACKSLASHES = "'" + "\\" * 1000 + "'::text"
"""1 000 backslashes (standard_conforming_strings: one character each)."""
DOUBLE_QUOTES = "'" + '"' * 1000 + "'::text"
AMPERSANDS = "'" + "&" * 1000 + "'::text"


def nested(wrapper: str, depth: int, seed: str) -> str:
    """``wrapper`` (with ``{}`` for its argument) applied ``depth`` times around ``seed``."""
    expression = seed
    for _ in range(depth):
        expression = wrapper.replace("{}", expression)
    return expression


ESCAPERS = (
    # name, wrapper, seed, growth per level, first depth, last depth
    ("to_json", "to_json({})::text", BACKSLASHES, 2, 6, 19),
    ("to_jsonb", "to_jsonb({})::text", BACKSLASHES, 2, 6, 19),
    ("json_build_array", "json_build_array({})::text", BACKSLASHES, 2, 6, 19),
    ("quote_literal", "quote_literal({})", BACKSLASHES, 2, 6, 19),
    ("format_literal", "format('%L', {})", BACKSLASHES, 2, 6, 19),
    ("quote_ident", "quote_ident({})", DOUBLE_QUOTES, 2, 6, 19),
    ("array_text", "(ARRAY[{}])::text", BACKSLASHES, 2, 6, 19),
    ("xmlelement", "xmlelement(name a, {})::text", AMPERSANDS, 5, 3, 8),
    ("encode_escape", "encode(convert_to({}, 'UTF8'), 'escape')", BACKSLASHES, 2, 6, 19),
)


def escaping(name: str, wrapper: str, seed: str, growth: int, first: int, last: int) -> list[StatementProbe]:
    depths = tuple(range(first, last + 1))
    unit = f"levels ({growth}x each over 1 000 characters)"
    return [
        StatementProbe(D.ESCAPING, f"nested_{name}", lambda d: f"SELECT length({nested(wrapper, d, seed)})",
                       depths, unit, memory_growth=growth + 1),
        StatementProbe(D.ESCAPING, f"ltrim_nested_{name}",
                       lambda d: f"SELECT length(ltrim({nested(wrapper, d, seed)}, {SET_OF_1000}))",
                       depths, unit, "ltrim over 14 nested to_json(x)::text of 1 KB: 77 s busy, 319 MB"
                       if name == "to_json" else "", memory_growth=growth + 1),
    ]


ESCAPING = [probe for escaper in ESCAPERS for probe in escaping(*escaper)]
ESCAPING += [
    StatementProbe(D.ESCAPING, "like_nested_to_json",
                   lambda d: f"SELECT {nested('to_json({})::text', d, BACKSLASHES)} LIKE "
                             "'%" + "\\\\" * 400 + "y'", tuple(range(6, 20)), "levels (2x each over 1 000 characters)",
                   "LIKE over nested to_json: 11.8 s busy", memory_growth=3),
    StatementProbe(D.ESCAPING, "strpos_nested_to_json",
                   lambda d: f"SELECT strpos({nested('to_json({})::text', d, BACKSLASHES)}, "
                             "'y" + "\\" * 1000 + "')", tuple(range(6, 20)), "levels (2x each over 1 000 characters)",
                   "strpos over nested to_json: 8.4 s busy", memory_growth=3),
]

# -- inputs from columns: stored values ----------------------------------------------------------------

ARRAY_TO_STRING = "length(array_to_string(v.list, ','))"

EXECUTOR = [
    StatementProbe(D.EXECUTOR, "json_array_length_x10_stored",
                   template(f"SELECT {copies('json_array_length(v.doc)', 10)} FROM public.audit_values v "
                            "WHERE v.size = {n}"), stored(1 << 18, 1 << 24), "elements",
                   "json_array_length x 10 over a 10 MB JSON: 1.2 GB"),
    StatementProbe(D.EXECUTOR, "json_array_length_x10_computed",
                   template(f"SELECT {copies('json_array_length(d)', 10)} FROM (SELECT ('[' || repeat('1,', {PER_ROW}) "
                            f"|| '1]')::json AS d {ONE_ROW}) s"), doubling(1 << 18, 1 << 24), "elements"),
    StatementProbe(D.EXECUTOR, "jsonb_cast_x10_stored",
                   template(f"SELECT {copies('jsonb_array_length(v.doc::jsonb)', 10)} FROM public.audit_values v "
                            "WHERE v.size = {n}"), stored(1 << 18, 1 << 24), "elements"),
    StatementProbe(D.EXECUTOR, "array_to_string_x10_stored",
                   template(f"SELECT {copies(ARRAY_TO_STRING, 10)} "
                            "FROM public.audit_values v WHERE v.size = {n}"), stored(1 << 18, 1 << 24), "elements"),
    StatementProbe(D.EXECUTOR, "repeat_count_from_column",
                   template("SELECT md5(repeat(v.body, 64)) FROM public.audit_values v WHERE v.size = {n}"),
                   stored(1 << 18, 1 << 24), "characters (x 64)"),
    StatementProbe(D.EXECUTOR, "upper_over_rows",
                   template("SELECT count(upper(repeat('a', {n} + r.id - r.id))) FROM public.audit_rows r"),
                   doubling(1 << 6, 1 << 14), "characters per row (100 000 rows)"),
]

# -- memory ----------------------------------------------------------------------------------------------

MEMORY = [
    StatementProbe(D.MEMORY, "array_fill_text_cast",
                   template("SELECT cardinality(array_fill(0, ARRAY[{n}])::text[])"), doubling(1 << 20, 30_000_000),
                   "elements", "array_fill(..., ARRAY[30000000])::text[]: 2.2 GB"),
    StatementProbe(D.MEMORY, "polygon_circle_points",
                   template("SELECT npoints(polygon({n}, circle '((0,0),1)'))"), doubling(1 << 20, 60_000_000),
                   "points", "npoints(polygon(60000000, circle '((0,0),1)')): 1.8 GB"),
    StatementProbe(D.MEMORY, "percentile_disc_fractions",
                   template("SELECT cardinality(percentile_disc(array_fill(0.5::float8, ARRAY[{n}])) "
                            "WITHIN GROUP (ORDER BY r.id)) FROM public.audit_rows r"), doubling(1 << 18, 20_000_000),
                   "fractions", "percentile_disc(array_fill(0.5::float8, ARRAY[20000000])): 0.94 GB"),
    StatementProbe(D.MEMORY, "percentile_cont_fractions",
                   template("SELECT cardinality(percentile_cont(array_fill(0.5::float8, ARRAY[{n}])) "
                            "WITHIN GROUP (ORDER BY r.id)) FROM public.audit_rows r"), doubling(1 << 18, 20_000_000),
                   "fractions"),
    StatementProbe(D.MEMORY, "json_array_elements_text_many",
                   template("SELECT count(*) FROM json_array_elements_text(('[' || repeat('1,', {n}) || '1]')::json)"),
                   doubling(1 << 20, 60_000_000), "elements",
                   "json_array_elements_text of 60 M elements: 0.88 GB"),
    StatementProbe(D.MEMORY, "json_array_length_x10_constant",
                   template(f"SELECT {copies('json_array_length(d)', 10)} "
                            "FROM (SELECT ('[' || repeat('1,', {n}) || '1]')::json AS d) s"),
                   doubling(1 << 18, 1 << 24), "elements"),
]

# -- aggregates, windows, set-returning functions --------------------------------------------------------

SERIES = doubling(1 << 20, 1 << 26)

AGGREGATE = [
    StatementProbe(D.AGGREGATE, "array_agg_series",
                   template("SELECT cardinality(array_agg(i)) FROM generate_series(1, {n}) i"), SERIES, "rows"),
    StatementProbe(D.AGGREGATE, "array_select_series",
                   template("SELECT cardinality(ARRAY(SELECT generate_series(1, {n})))"), SERIES, "rows"),
    StatementProbe(D.AGGREGATE, "array_select_series_text",
                   template("SELECT cardinality(ARRAY(SELECT generate_series(1, {n})::text))"), SERIES, "rows"),
    StatementProbe(D.AGGREGATE, "string_agg_series",
                   template("SELECT length(string_agg(i::text, ',')) FROM generate_series(1, {n}) i"), SERIES, "rows"),
    StatementProbe(D.AGGREGATE, "json_agg_series",
                   template("SELECT length(json_agg(i)::text) FROM generate_series(1, {n}) i"), SERIES, "rows"),
    StatementProbe(D.AGGREGATE, "jsonb_agg_series",
                   template("SELECT jsonb_array_length(jsonb_agg(i)) FROM generate_series(1, {n}) i"), SERIES, "rows",
                   memory_growth=2.5),
    StatementProbe(D.AGGREGATE, "array_agg_distinct_series",
                   template("SELECT cardinality(array_agg(DISTINCT i)) FROM generate_series(1, {n}) i"), SERIES,
                   "rows"),
    StatementProbe(D.AGGREGATE, "percentile_cont_series",
                   template("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY i) FROM generate_series(1, {n}) i"),
                   SERIES, "rows"),
    StatementProbe(D.AGGREGATE, "string_agg_large_values",
                   template("SELECT length(string_agg(repeat('a', {n} + r.id - r.id), ',')) FROM public.audit_rows r "
                            "WHERE r.id <= 16"), doubling(1 << 20, 1 << 25), "characters per row (16 rows)"),
    StatementProbe(D.AGGREGATE, "array_agg_of_arrays",
                   template("SELECT cardinality(array_agg(array_fill(r.id, ARRAY[{n}]))) FROM public.audit_rows r"),
                   doubling(1 << 4, 1 << 12), "elements per row (100 000 rows)"),
]

WINDOW = [
    StatementProbe(D.WINDOW, "string_agg_growing_frame",
                   template("SELECT max(length(s)) FROM (SELECT string_agg('x', ',') OVER (ORDER BY i) AS s "
                            "FROM generate_series(1, {n}) i) w"), doubling(1 << 12, 1 << 17), "rows"),
    StatementProbe(D.WINDOW, "max_shrinking_frame",
                   template("SELECT sum(m) FROM (SELECT max(i) OVER (ORDER BY i ROWS BETWEEN CURRENT ROW AND "
                            "UNBOUNDED FOLLOWING) AS m FROM generate_series(1, {n}) i) w"),
                   doubling(1 << 12, 1 << 17), "rows"),
    StatementProbe(D.WINDOW, "array_agg_whole_partition",
                   template("SELECT max(cardinality(a)) FROM (SELECT array_agg(i) OVER () AS a "
                            "FROM generate_series(1, {n}) i) w"), doubling(1 << 10, 1 << 16), "rows"),
    StatementProbe(D.WINDOW, "lag_large_values",
                   template("SELECT max(length(l)) FROM (SELECT lag(repeat('a', {n} + r.id - r.id)) OVER (ORDER BY r.id) "
                            "AS l FROM public.audit_rows r WHERE r.id <= 64) w"), doubling(1 << 20, 1 << 24),
                   "characters per row (64 rows)"),
]

SET_RETURNING = [
    StatementProbe(D.SET_RETURNING, "jsonb_array_elements_text_many",
                   template("SELECT count(*) FROM jsonb_array_elements_text(('[' || repeat('1,', {n}) || '1]')::jsonb)"),
                   doubling(1 << 20, 1 << 25), "elements"),
    StatementProbe(D.SET_RETURNING, "json_array_elements_select_list",
                   template("SELECT count(*) FROM (SELECT json_array_elements(('[' || repeat('1,', {n}) || '1]')::json)) s"),
                   doubling(1 << 20, 1 << 25), "elements"),
    StatementProbe(D.SET_RETURNING, "json_each_text_many",
                   template("SELECT count(*) FROM json_each_text(('{' || (SELECT string_agg('\"k' || i || '\":1', ',') "
                            "FROM generate_series(1, {n}) i) || '}')::json)"), doubling(1 << 18, 1 << 23), "keys"),
    StatementProbe(D.SET_RETURNING, "unnest_array_fill",
                   template("SELECT count(*) FROM unnest(array_fill(0, ARRAY[{n}])) u"), SERIES, "elements"),
    StatementProbe(D.SET_RETURNING, "unnest_array_fill_column",
                   template(f"SELECT count(*) FROM public.audit_one o, unnest(array_fill(0, ARRAY[{PER_ROW}])) u"),
                   SERIES, "elements"),
    StatementProbe(D.SET_RETURNING, "regexp_split_to_table_many",
                   template("SELECT count(*) FROM regexp_split_to_table(repeat('a,', {n}), ',') s"),
                   doubling(1 << 18, 1 << 24), "elements"),
    StatementProbe(D.SET_RETURNING, "generate_series_select_list",
                   template("SELECT count(*) FROM (SELECT generate_series(1, {n})) s"), SERIES, "rows"),
    StatementProbe(D.SET_RETURNING, "generate_subscripts_array_fill",
                   template("SELECT count(*) FROM generate_subscripts(array_fill(0, ARRAY[{n}]), 1) s"), SERIES,
                   "elements"),
]

# -- array casts -------------------------------------------------------------------------------------------

CAST_SIZES = doubling(1 << 20, 30_000_000)

ARRAY_CAST = [
    StatementProbe(D.ARRAY_CAST, "array_fill_numeric_cast",
                   template("SELECT cardinality(array_fill(0, ARRAY[{n}])::numeric[])"), CAST_SIZES, "elements"),
    StatementProbe(D.ARRAY_CAST, "array_fill_bigint_cast",
                   template("SELECT cardinality(array_fill(0, ARRAY[{n}])::bigint[])"), CAST_SIZES, "elements"),
    StatementProbe(D.ARRAY_CAST, "array_fill_text_cast_column",
                   template(f"SELECT cardinality(array_fill(0, ARRAY[{PER_ROW}])::text[]) {ONE_ROW}"), CAST_SIZES,
                   "elements"),
    StatementProbe(D.ARRAY_CAST, "text_array_to_int_cast",
                   template("SELECT cardinality(string_to_array(repeat('1,', {n}) || '1', ',')::int[])"), CAST_SIZES,
                   "elements"),
    StatementProbe(D.ARRAY_CAST, "array_fill_text_to_int_cast",
                   template("SELECT cardinality(array_fill('7'::text, ARRAY[{n}])::int[])"), CAST_SIZES, "elements"),
    StatementProbe(D.ARRAY_CAST, "stored_array_text_cast",
                   template("SELECT cardinality(v.list::text[]) FROM public.audit_values v WHERE v.size = {n}"),
                   stored(1 << 18, 1 << 24), "elements"),
]

# -- planner work ----------------------------------------------------------------------------------------------

PLANNER_SIZES = doubling(1 << 17, 5_000_000)


def in_list(count: int) -> str:
    return ", ".join(str(i % 1000) for i in range(count))


PLANNER = [
    StatementProbe(D.PLANNER, "any_array_fill",
                   template("SELECT count(*) FROM public.audit_rows r WHERE r.cat = ANY (array_fill(5, ARRAY[{n}]))"),
                   PLANNER_SIZES, "elements",
                   "WHERE cat = ANY (array_fill(5, ARRAY[5000000])): 2.1 s planning, 1.37 GB"),
    StatementProbe(D.PLANNER, "not_equal_all_array_fill",
                   template("SELECT count(*) FROM public.audit_rows r WHERE r.cat <> ALL (array_fill(5, ARRAY[{n}]))"),
                   PLANNER_SIZES, "elements"),
    StatementProbe(D.PLANNER, "less_than_any_array_fill",
                   template("SELECT count(*) FROM public.audit_rows r WHERE r.cat < ANY (array_fill(5, ARRAY[{n}]))"),
                   PLANNER_SIZES, "elements"),
    StatementProbe(D.PLANNER, "any_string_to_array",
                   template("SELECT count(*) FROM public.audit_rows r "
                            "WHERE r.cat = ANY (string_to_array(repeat('5,', {n}) || '5', ',')::int[])"),
                   PLANNER_SIZES, "elements"),
    StatementProbe(D.PLANNER, "any_series_array",
                   template("SELECT count(*) FROM public.audit_rows r WHERE r.cat = ANY (ARRAY(SELECT generate_series(1, {n})))"),
                   doubling(1 << 10, 1 << 16), "elements"),
    StatementProbe(D.PLANNER, "in_list_literal",
                   lambda n: f"SELECT count(*) FROM public.audit_rows r WHERE r.cat IN ({in_list(n)})",
                   doubling(1 << 10, 20_000), "elements (the query text stays under 100 KiB)"),
    StatementProbe(D.PLANNER, "any_array_literal",
                   lambda n: f"SELECT count(*) FROM public.audit_rows r WHERE r.cat = ANY ('{{{in_list(n)}}}'::int[])",
                   doubling(1 << 10, 20_000), "elements (the query text stays under 100 KiB)"),
]

STATEMENT_PROBES: tuple[StatementProbe, ...] = (
    *MANY_CALLS, *PRINTED_SIZE, *ESCAPING, *EXECUTOR, *MEMORY, *AGGREGATE, *WINDOW, *SET_RETURNING, *ARRAY_CAST,
    *PLANNER,
)
"""Every statement probe, grouped by dimension."""
