"""Statement makers for expression syntax: predicates (ANY/ALL, IN, BETWEEN, LIKE, IS DISTINCT FROM, ``||``),
CASE/COALESCE/NULLIF/GREATEST/LEAST, arrays, rows, subscripts and field selection, casts and typed
literals, and SQL's special forms (AT TIME ZONE, EXTRACT, SUBSTRING, TRIM, COLLATE, CURRENT_DATE...).
"""

from __future__ import annotations

import random

from type_generation_calls import select
from type_palette import Palette

GROUPS: dict[str, tuple[str, ...]] = {
    "number": ("t.c_int2", "t.c_int4", "t.c_int8", "t.c_numeric", "t.c_numeric_10_2", "t.c_float4", "t.c_float8",
               "42", "3000000000", "1.5", "t.c_posint", "'7'", "NULL", "'1.5'::numeric(5,2)", "t.c_oid", "t.id"),
    "string": ("t.c_text", "t.c_varchar", "t.c_varchar_20", "t.c_char_5", "t.c_name", "t.c_label", "'abc'", "NULL",
               "'x'::varchar(20)", "'x'::char(3)", "'a'::\"char\"", "(t.c_text COLLATE \"C\")"),
    "datetime": ("t.c_date", "t.c_timestamp", "t.c_timestamptz", "'2024-01-01'", "NULL", "t.c_time", "t.c_time_3",
                 "t.c_timetz", "t.c_interval", "now()", "current_date", "'2024-01-01'::timestamp(2)"),
    "boolean": ("t.c_bool", "true", "'true'", "NULL", "(t.c_int4 > 1)", "(t.c_text IS NULL)"),
    "enum_domain": ("t.c_mood", "'ok'", "t.c_posint", "t.c_label", "NULL", "'sad'::tf.mood", "5::tf.posint"),
    "array": ("t.c_int4_array", "t.c_text_array", "'{1,2}'", "ARRAY[1.5]", "t.c_numeric_array", "NULL",
              "ARRAY[]::int8[]", "t.c_date_array", "t.c_jsonb_array", "t.c_int4range_array"),
    "json": ("t.c_jsonb", "t.c_json", "'{}'", "'{\"a\": 1}'::jsonb", "NULL", "to_jsonb(1)", "(t.c_jsonb -> 'a')"),
    "other": ("t.c_int4range", "t.c_int4multirange", "t.c_pair", "ROW(1, 'a')", "t.c_uuid", "t.c_inet", "t.c_cidr",
              "t.c_bytea", "t.c_bit_8", "t.c_varbit", "t.c_xml", "t.c_point", "t.c_money", "t.c_tsvector",
              "t.c_tsquery", "NULL", "t.c_numrange", "t.c_daterange", "t.c_macaddr", "t.c_box"),
}
ALL_VALUES = tuple(value for values in GROUPS.values() for value in values)


def related(rng: random.Random, count: int, same: float = 0.75) -> list[str]:
    """``count`` values, mostly from one group (so they may unify), sometimes from anywhere."""
    group = GROUPS[rng.choice(list(GROUPS))]
    return [rng.choice(group) if rng.random() < same else rng.choice(ALL_VALUES) for _ in range(count)]


PREDICATES = (
    "{x} = ANY ({a})", "{x} < ALL ({a})", "{x} <> ANY ({a})", "{x} LIKE ANY ({a})", "{x} IN ({y}, {z})",
    "{x} NOT IN ({y})", "{x} BETWEEN {y} AND {z}", "{x} NOT BETWEEN SYMMETRIC {y} AND {z}", "{x} LIKE {y}",
    "{x} ILIKE {y} ESCAPE '!'", "{x} NOT LIKE {y}", "{x} SIMILAR TO {y}", "{x} NOT SIMILAR TO {y} ESCAPE '#'",
    "{x} IS DISTINCT FROM {y}", "{x} IS NOT DISTINCT FROM {y}", "{x} IS NULL", "{x} ISNULL", "{x} IS TRUE",
    "{x} IS NOT UNKNOWN", "{x} || {y}", "{x} || {y} || {z}", "NOT {x}", "{x} AND {y}", "{x} OR {y}",
    "{x} IS DOCUMENT", "{x} IS NORMALIZED", "{x} IS NOT NFKC NORMALIZED", "({x}, {y}) OVERLAPS ({z}, {y})",
    "({x}, {y}) = ({z}, {y})", "ROW({x}, {y}) < ROW({z}, {y})", "({x}, {y}) IS NULL", "{x} = {y}", "{x} < {y}",
    "{x} <> {y}", "{x} ~~ {y}", "{x} !~* {y}", "{x} = ANY ('{{1,2}}')", "{x} = ANY (ARRAY[{y}, {z}])",
    "{x} IN ({y}, {z}, {x})", "{x} = SOME ({a})", "{x} ~ {y}", "{x} IS DISTINCT FROM NULL",
)
CONCATENATIONS = (
    "t.c_text || t.c_text", "t.c_text || t.c_int4", "t.c_int4 || t.c_text", "'a' || 'b'", "'a' || 1", "1 || 'a'",
    "1 || 2", "t.c_int4_array || t.c_int4", "t.c_int4 || t.c_int4_array", "t.c_int4_array || t.c_int4_array",
    "t.c_int4_array || t.c_int8", "t.c_int4_array || 1.5", "t.c_int4_array || '{3}'", "'{3}' || t.c_int4_array",
    "t.c_int4_array || NULL", "t.c_jsonb || t.c_jsonb", "t.c_jsonb || '{}'", "t.c_json || t.c_json",
    "t.c_bytea || t.c_bytea", "t.c_varbit || t.c_bit_8", "t.c_tsvector || t.c_tsvector", "t.c_tsquery || t.c_tsquery",
    "t.c_varchar || t.c_varchar_20", "t.c_char_5 || t.c_char_5", "t.c_name || t.c_name", "t.c_text_array || 'x'",
    "t.c_text_array || t.c_text", "NULL || NULL", "t.c_mood || 'x'", "t.c_pair || 'x'", "t || 'x'",
    "t.c_int4_array || ARRAY[ARRAY[1]]", "t.c_jsonb_array || t.c_jsonb", "t.c_date_array || t.c_date",
    "t.c_label || t.c_label", "t.c_xml || t.c_xml", "t.c_numeric_array || t.c_int4", "t.c_int4range || 1",
)


def predicates(palette: Palette, rng: random.Random) -> list[str]:
    """Boolean and ``||`` syntax over related, unrelated, unknown and NULL operands."""
    statements = [select(text, rng) for text in CONCATENATIONS]
    arrays = ("t.c_int4_array", "t.c_text_array", "'{{1,2}}'", "ARRAY[{y}, {z}]", "t.c_numeric_array", "NULL")
    for template in PREDICATES:
        for _ in range(12):
            x, y, z = related(rng, 3, same=0.9)
            a = rng.choice(arrays).format(y=y, z=z)
            statements.append(select(template.format(x=x, y=y, z=z, a=a), rng))
    return statements


CONDITIONALS = (
    "CASE WHEN t.c_bool THEN {x} ELSE {y} END", "CASE WHEN t.c_bool THEN {x} WHEN t.id > 1 THEN {y} END",
    "CASE {x} WHEN {y} THEN {z} ELSE {x} END", "CASE WHEN {x} THEN {y} END", "COALESCE({x}, {y})",
    "COALESCE({x}, {y}, {z})", "NULLIF({x}, {y})", "GREATEST({x}, {y})", "LEAST({x}, {y}, {z})",
    "COALESCE(CASE WHEN t.c_bool THEN {x} END, {y})", "NULLIF(COALESCE({x}, {y}), {z})", "COALESCE({x})",
    "CASE WHEN t.c_bool THEN {x} WHEN t.c_bool THEN {y} ELSE {z} END", "GREATEST({x}, NULLIF({y}, {z}))",
)


def conditionals(palette: Palette, rng: random.Random) -> list[str]:
    """CASE (simple and searched), COALESCE, NULLIF, GREATEST, LEAST: unification of mixed branches."""
    statements: list[str] = []
    for template in CONDITIONALS:
        for _ in range(30):
            x, y, z = related(rng, 3, same=0.9)
            statements.append(select(template.format(x=x, y=y, z=z), rng))
    for fixed in ("CASE WHEN t.c_bool THEN 'a' ELSE 'b' END", "COALESCE(NULL, NULL)", "COALESCE('a', NULL)",
                  "CASE WHEN t.c_bool THEN NULL END", "COALESCE(t.c_posint, t.c_posint)", "COALESCE(t.c_posint, 1)",
                  "COALESCE(t.c_varchar_20, t.c_varchar_20)", "COALESCE(t.c_varchar_20, 'a'::varchar(30))",
                  "GREATEST(t.c_numeric_10_2, t.c_numeric_10_2)", "NULLIF(t.c_varchar_20, 'x')",
                  "CASE t.c_mood WHEN 'ok' THEN 1 END", "COALESCE(t.c_label, t.c_label)",
                  "COALESCE(t.c_label, 'x')", "LEAST(t.c_char_5, t.c_char_5)", "COALESCE(t.c_time_3, t.c_time_3)"):
        statements.append(select(fixed, rng))
    return statements


ARRAYS = (
    "ARRAY[{x}, {y}]", "ARRAY[{x}]", "ARRAY[ARRAY[{x}, {y}], ARRAY[{y}, {x}]]", "ARRAY[[{x}], [{y}]]",
    "ROW({x}, {y})", "ROW({x})", "({x}, {y}, {z})", "ARRAY[ROW({x}, {y})]", "ARRAY[{x}, {y}, {z}]",
)
FIXED_ARRAYS = (
    "ARRAY[]::int4[]", "ARRAY[]", "ARRAY[]::text[]", "ARRAY[NULL]", "ARRAY['a', 'b']", "ARRAY['a', NULL]",
    "ARRAY[t.c_varchar_20, t.c_varchar_20]", "ARRAY[t.c_numeric_10_2]", "ARRAY[t.c_int4_array, t.c_int4_array]",
    "ARRAY[t.c_int4_array, '{1}']", "ARRAY[t.c_posint]", "ARRAY[t.c_mood]", "ARRAY[t.c_pair]", "ARRAY[t]",
    "t.c_int4_array[1]", "t.c_int4_array[1:2]", "t.c_int4_array[:2]", "t.c_int4_array[1][1]", "t.c_int4_array[1:2][1]",
    "t.c_text_array[t.c_int2]", "t.c_text_array[t.c_int8]", "t.c_text_array['1']", "t.c_text_array[1.5]",
    "t.c_text_array[t.c_text]", "t.c_jsonb['a']", "t.c_jsonb['a']['b']", "t.c_jsonb[1]", "t.c_jsonb[t.c_text]",
    "t.c_jsonb[t.c_int4]", "t.c_jsonb[1:2]", "t.c_json['a']", "t.c_text[1]", "t.c_int4range[1]", "t.c_point[0]",
    "t.c_lseg[0]", "t.c_box[0]", "t.c_name[0]", "t.c_bit_8[1]", "(t.c_pair).a", "(t.c_pair).b", "(t.c_pair).c",
    "(t.c_pair).*", "(t).c_int4", "(t).*", "t.c_pair.a", "(ROW(1, 'a')).f1", "(ROW(1, 'a')::tf.pair).b",
    "('(1,x)'::tf.pair).a", "(t.c_int4_array)[1]", "(ARRAY[1, 2])[1]", "(ARRAY[1.5, 2])[1:1]",
    "(ARRAY['a'])[1]", "('{1,2}'::int8[])[1]", "(t.c_jsonb_array)[1]['a']", "(t.c_date_array)[1]",
    "(t.c_int4range_array)[1]", "t.c_numeric_array[1]", "(t.c_numeric_10_2)[1]", "ROW(t.*)", "ROW(t.c_pair.*)",
    "(ROW(t.c_int4, t.c_text)).f2", "ARRAY[ARRAY[1], ARRAY[1.5]]", "ARRAY[ARRAY[]::int4[]]", "ARRAY[[1, 2], [3]]",
    "t.c_int4_array[t.c_posint]", "(t.c_text_array)[1:1][1]", "t.c_jsonb[NULL]", "t.c_int4_array[NULL]",
    "t.c_int4_array[1:]", "t.c_int4_array[:]",
)


def arrays_and_rows(palette: Palette, rng: random.Random) -> list[str]:
    """ARRAY[...] (nested, empty, mixed), ROW(...), subscripts, slices, jsonb subscripts, field selection."""
    statements = [select(text, rng) for text in FIXED_ARRAYS]
    for template in ARRAYS:
        for _ in range(25):
            x, y, z = related(rng, 3)
            statements.append(select(template.format(x=x, y=y, z=z), rng))
    return statements


TARGETS = (
    "int2", "int4", "integer", "int", "int8", "bigint", "smallint", "numeric", "numeric(5,2)", "decimal(4)",
    "dec(10, 3)", "float4", "real", "float8", "double precision", "float(10)", "float(30)", "money", "text",
    "varchar", "varchar(3)", "character varying(10)", "char", "char(3)", "character(2)", "bpchar", "name", "\"char\"",
    "bytea", "bool", "boolean", "date", "time", "time(2)", "time(1) with time zone", "timetz", "timestamp",
    "timestamp(0)", "timestamp(3) with time zone", "timestamptz(2)", "interval", "interval(2)",
    "interval day to second(1)", "interval year", "interval hour to minute", "uuid", "json", "jsonb", "xml",
    "inet", "cidr", "macaddr", "bit", "bit(4)", "bit varying(5)", "varbit", "point", "box", "circle", "tsvector",
    "tsquery", "int4range", "numrange", "int4multirange", "oid", "regclass", "regtype", "regproc", "pg_lsn",
    "int4[]", "integer[3]", "text[]", "varchar(5)[]", "numeric(4,1)[]", "jsonb[]", "tf.posint", "tf.label",
    "tf.mood", "tf.pair", "tf.t", "tf.u", "national character(4)", "nchar(2)", "int4 array", "char(2) array[2]",
    "pg_catalog.int4", "pg_catalog.varchar(4)", "anyelement", "record", "unknown", "cstring", "void",
    "timestamp without time zone", "time(3) without time zone", "numeric(1000, 2)", "varchar(0)",
)


def casts(palette: Palette, rng: random.Random) -> list[str]:
    """CAST and ``::`` to many types, typmods included; typed literals (``date '...'``); unknown literals."""
    statements: list[str] = []
    for target in TARGETS:
        for source in rng.sample(ALL_VALUES, 4):
            spelled = rng.choice(["{x}::{t}", "CAST({x} AS {t})"])
            statements.append(select(spelled.format(x=source, t=target), rng))
        oid = _target_oid(palette, target)
        literal = palette.literal(oid) if oid else "'abc'"
        statements.append(select(f"{literal or 'NULL'}::{target}", rng))
        if "[" not in target and "array" not in target and not target.startswith("interval ") and rng.random() < 0.6:
            statements.append(select(f"{target} {literal or chr(39) * 2}", rng))
    for text in ("interval '1' day", "interval '1:30' hour to minute", "interval '1.5' second(1)",
                 "time(1) '12:00:00.25'", "timestamp(2) with time zone '2024-01-01 00:00:00.123+00'",
                 "numeric(5,2) '1.5'", "varchar(3) 'abcd'", "bit(3) '101'", "char(2) 'abc'", "int4 '42'",
                 "float8 '1e3'", "tf.mood 'ok'", "tf.posint '3'", "pg_catalog.date '2024-01-01'",
                 "'1 day'::interval hour", "'42'::int4::int8::numeric(10,1)", "'x'::text::varchar(1)::char(4)"):
        statements.append(select(text, rng))
    return statements


SQL_NAMES = {
    "int": "int4", "integer": "int4", "smallint": "int2", "bigint": "int8", "real": "float4", "decimal": "numeric",
    "dec": "numeric", "double precision": "float8", "character varying": "varchar", "char": "bpchar",
    "character": "bpchar", "nchar": "bpchar", "national character": "bpchar", "boolean": "bool",
    "bit varying": "varbit", "timestamp without time zone": "timestamp", "time without time zone": "time",
}
"""SQL's spellings of type names, to the ``typname`` whose literal the palette knows."""


def _target_oid(palette: Palette, target: str) -> int | None:
    simple = target.split("(")[0].strip().removeprefix("pg_catalog.")
    simple = SQL_NAMES.get(simple, simple).split(" ")[0]
    if target.startswith("float("):
        simple = "float4" if int(target[6:-1]) <= 24 else "float8"
    try:
        return palette.oid(simple)
    except KeyError:
        return None


SPECIAL = (
    "{d} AT TIME ZONE 'UTC'", "{d} AT TIME ZONE INTERVAL '1 hour'", "{d} AT TIME ZONE t.c_text",
    "EXTRACT(year FROM {d})", "EXTRACT(epoch FROM {d})", "date_part('hour', {d})", "date_trunc('day', {d})",
    "SUBSTRING({s} FROM 2 FOR 3)", "SUBSTRING({s} FROM 2)", "SUBSTRING({s} FOR 2)", "SUBSTRING({s}, 2, 1)",
    "SUBSTRING({s} FROM 'a.')", "SUBSTRING({s} SIMILAR 'a%' ESCAPE '#')", "POSITION({s} IN {s})",
    "OVERLAY({s} PLACING {s} FROM 2 FOR 1)", "OVERLAY({s} PLACING {s} FROM 2)", "TRIM(BOTH 'x' FROM {s})",
    "TRIM(LEADING FROM {s})", "TRIM({s})", "TRIM(TRAILING {s} FROM {s})", "TRIM({s}, 'x')", "{s} COLLATE \"C\"",
    "{s} COLLATE \"POSIX\" || 'x'", "NORMALIZE({s})", "NORMALIZE({s}, NFKD)", "COLLATION FOR ({s})",
    "{s} COLLATE pg_catalog.\"default\"",
)
SPECIAL_FIXED = (
    "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIME(2)", "CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP(0)", "LOCALTIME",
    "LOCALTIME(3)", "LOCALTIMESTAMP", "LOCALTIMESTAMP(1)", "CURRENT_USER", "SESSION_USER", "USER", "CURRENT_ROLE",
    "CURRENT_SCHEMA", "CURRENT_CATALOG", "XMLELEMENT(NAME a, t.c_text)", "XMLCONCAT(t.c_xml, t.c_xml)",
    "XMLFOREST(t.c_int4, t.c_text AS b)", "XMLPARSE(CONTENT t.c_text)", "XMLPARSE(DOCUMENT '<a/>')",
    "XMLSERIALIZE(CONTENT t.c_xml AS text)", "XMLSERIALIZE(DOCUMENT t.c_xml AS varchar(30))", "XMLPI(NAME php)",
    "XMLROOT(t.c_xml, VERSION '1.0')", "XMLEXISTS('//a' PASSING t.c_xml)", "t.c_int4 COLLATE \"C\"",
    "EXTRACT(day FROM '2024-01-01')", "EXTRACT(hour FROM t.c_interval)", "EXTRACT(nosuchfield FROM t.c_date)",
    "EXTRACT(year FROM t.c_int4)", "'2024-01-01' AT TIME ZONE 'UTC'", "t.c_int4 AT TIME ZONE 'UTC'",
    "SUBSTRING(t.c_bytea FROM 1 FOR 1)", "SUBSTRING(t.c_varbit FROM 1 FOR 1)", "POSITION(t.c_bytea IN t.c_bytea)",
    "POSITION(t.c_varbit IN t.c_bit_8)", "OVERLAY(t.c_bytea PLACING t.c_bytea FROM 1)", "TRIM(BOTH t.c_bytea FROM t.c_bytea)",
    "POSITION('a' IN 'abc')", "SUBSTRING('abc' FROM 1)", "SUBSTRING(t.c_int4 FROM 1)", "TRIM(t.c_int4)",
    "t.c_varchar_20 COLLATE \"C\"", "t.c_char_5 COLLATE \"C\"", "(t.c_text COLLATE \"C\") < (t.c_text COLLATE \"POSIX\")",
    "t.c_text_array COLLATE \"C\"", "t.c_label COLLATE \"C\"", "'a' COLLATE \"C\"", "t.c_text COLLATE \"nope\"",
    "OVERLAY(t.c_varbit PLACING t.c_bit_8 FROM 1 FOR 2)", "EXTRACT(century FROM t.c_timestamptz)",
    "(SELECT u.note_c || u.note_posix FROM tf.u LIMIT 1)", "(SELECT u.note_c < u.note_posix FROM tf.u LIMIT 1)",
    "(SELECT u.note_c || u.note FROM tf.u LIMIT 1)", "(SELECT u.note_c COLLATE \"POSIX\" || u.note_posix FROM tf.u LIMIT 1)",
)


def special_syntax(palette: Palette, rng: random.Random) -> list[str]:
    """SQL's special forms over date/time and string values of many kinds."""
    datetimes = ("t.c_date", "t.c_time", "t.c_time_3", "t.c_timetz", "t.c_timestamp", "t.c_timestamptz", "t.c_interval",
                 "'2024-01-01 12:00'", "now()", "NULL", "t.c_text", "LOCALTIMESTAMP", "'12:00'::time(2)")
    strings = ("t.c_text", "t.c_varchar", "t.c_varchar_20", "t.c_char_5", "t.c_name", "'abc'", "t.c_label", "NULL",
               "t.c_bytea", "t.c_int4", "t.c_varbit", "t.c_mood", "t.c_jsonb")
    statements = [select(text, rng) for text in SPECIAL_FIXED]
    for template in SPECIAL:
        for _ in range(10):
            statements.append(select(template.format(d=rng.choice(datetimes), s=rng.choice(strings)), rng))
    return statements
