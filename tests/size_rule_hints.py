"""What some arguments of the size-ruled functions must look like for the server to accept a call, and the
hand-written worst cases of each rule.

``HINTS[function][position]`` replaces the type's palette for that argument (texts, read as the argument's
type): a pattern for a regular expression, a template for ``format`` or ``to_char``, an encoding name.
``WORST`` holds, by rule, select-list expressions (or whole SELECTs) built to make the result as large as the
function can make it from its input: nesting that compounds escaping, counts that fill a few kilobytes,
templates that repeat one argument.
"""

from __future__ import annotations

from size_rule_values import (
    FLAG_TEXTS, FORMAT_TEMPLATES, REPLACEMENT_TEXTS, TO_CHAR_FORMATS, pattern_texts, sql_literal,
)

_ENCODINGS = ("UTF8", "LATIN1", "SQL_ASCII", "EUC_JP", "SJIS", "GB18030", "WIN1252", "MULE_INTERNAL", "BIG5", "UHC",
              "EUC_TW", "JOHAB", "KOI8R", "WIN866")
_COUNTS = ("0", "1", "2", "3", "-1", "7", "100", "1000", "3000")
_SMALL_COUNTS = ("0", "1", "2", "3", "-1", "5", "40", "700")
_HEADLINE_OPTIONS = ("", "StartSel=<<<<<<<<<<<<<<<<<<<<, StopSel=>>>>>>>>>>>>>>>>>>>>", "MaxWords=1000, MinWords=999",
                     "HighlightAll=true, StartSel=" + "x" * 60 + ", StopSel=" + "y" * 60,
                     'MaxFragments=100, FragmentDelimiter="' + "~" * 60 + '", MaxWords=3, MinWords=1')


def _patterns() -> tuple[str, ...]:
    import random

    return tuple(pattern_texts(random.Random(19)))


_PATTERNS = _patterns()

HINTS: dict[str, dict[int, tuple[str, ...]]] = {
    "regexp_replace": {1: _PATTERNS, 2: REPLACEMENT_TEXTS, 3: FLAG_TEXTS + ("1", "0"), 4: _SMALL_COUNTS, 5: FLAG_TEXTS},
    "regexp_match": {1: _PATTERNS, 2: FLAG_TEXTS},
    "regexp_matches": {1: _PATTERNS, 2: FLAG_TEXTS},
    "regexp_split_to_array": {1: _PATTERNS, 2: FLAG_TEXTS},
    "regexp_split_to_table": {1: _PATTERNS, 2: FLAG_TEXTS},
    "regexp_substr": {1: _PATTERNS, 2: ("1", "2", "1000"), 3: ("0", "1", "2"), 4: FLAG_TEXTS, 5: ("0", "1", "2", "9")},
    "substring": {1: _PATTERNS + ("%#\"a#\"%", "#\"%#\""), 2: ("#", "\\", "")},
    "format": {0: FORMAT_TEMPLATES},
    "to_char": {1: TO_CHAR_FORMATS},
    "convert": {1: _ENCODINGS, 2: _ENCODINGS},
    "convert_from": {1: _ENCODINGS},
    "convert_to": {1: _ENCODINGS},
    "to_ascii": {1: ("LATIN1", "LATIN2", "LATIN9", "WIN1250")},
    "encode": {1: ("hex", "escape", "base64")},
    "decode": {0: ("", "00", "5c5c5c", "ff" * 500, "\\\\" * 500, "\\000" * 300, "YWJj", "QUJD" * 300, "a b\nc"),
               1: ("hex", "escape", "base64")},
    "normalize": {1: ("NFC", "NFD", "NFKC", "NFKD")},
    "like_escape": {1: ("\\", "", '"', "ΐ", "𝄞", "$")},
    "similar_escape": {1: ("\\", "", "#", "ΐ")},
    "similar_to_escape": {1: ("\\", "", "#", "ΐ")},
    "repeat": {1: _COUNTS},
    "lpad": {1: _COUNTS},
    "rpad": {1: _COUNTS},
    "chr": {0: ("1", "65", "233", "8364", "119070", "1114111", "0")},
    "current_setting": {0: ("search_path", "TimeZone", "DateStyle", "server_version", "lc_collate", "x.y")},
    "array_fill": {1: ("{3}", "{0}", "{2,3}", "{1,1,1,1,1,1}", "{40,40}", "{700}"),
                   2: ("{1}", "{-2147483648}", "{-2147483648,-2147483648}", "{2147483000,5}",
                       "{-2147483648,-2147483648,-2147483648,-2147483648,-2147483648,-2147483648}")},
    # Spans and steps that make at most some thousands of rows (1e300 only as a step).
    "generate_series": {0: ("0", "1", "-3", "0.5", "-0.25"), 1: ("0", "3", "100", "1000", "-2"),
                        2: ("1", "2", "-1", "0.01", "0.5", "7", "1e300")},
    "polygon": {0: ("2", "3", "100", "1000")},
    "bit": {1: ("0", "1", "64", "3000")},
    "varbit": {1: ("0", "1", "64", "3000")},
    "bpchar": {1: ("0", "5", "8", "68", "3004")},
    "varchar": {1: ("0", "5", "8", "68", "3004")},
    "setweight": {1: ("A", "B", "C", "D")},
    "ts_filter": {1: ("{a}", "{a,b,c,d}", "{}")},
    "ts_headline": {2: _HEADLINE_OPTIONS, 3: _HEADLINE_OPTIONS},
    "jsonb_set_lax": {4: ("raise_exception", "use_json_null", "delete_key", "return_target")},
    "jsonb_path_query": {2: ("{}", '{"x": 1e300}', '{"x": "' + "\\\\" * 200 + '"}')},
    "json_to_tsvector": {1: ('["all"]', '["string", "numeric", "key", "boolean"]', '["key"]')},
    "jsonb_to_tsvector": {1: ('["all"]', '["string", "numeric", "key", "boolean"]', '["key"]')},
    "tsquery_phrase": {2: ("0", "1", "16384")},
    "percentile_disc": {0: ("0", "0.5", "1", "{0,0.5,1}", "{0,0,0,0,0,0,0,0,0,0,0,0}", "{}")},
    "percentile_cont": {0: ("0", "0.5", "1", "{0,0.5,1}", "{0,0,0,0,0,0,0,0,0,0,0,0}", "{}")},
    "lag": {1: ("0", "1", "2")},
    "lead": {1: ("0", "1", "2")},
    "nth_value": {1: ("1", "2", "5")},
    "int2_avg_accum": {0: ("{0,0}", "{-9223372036854775808,9223372036854775807}")},
    "int2_avg_accum_inv": {0: ("{0,0}", "{-9223372036854775808,9223372036854775807}")},
    "int4_avg_accum": {0: ("{0,0}", "{-9223372036854775808,9223372036854775807}")},
    "int4_avg_accum_inv": {0: ("{0,0}", "{-9223372036854775808,9223372036854775807}")},
    "int4_avg_combine": {0: ("{0,0}", "{-9223372036854775808,9223372036854775807}"),
                         1: ("{0,0}", "{-9223372036854775808,9223372036854775807}")},
    "interval_accum": {0: ("{0,0}", '{"-178000000 years -2147483648 days -2562047788:00:54.775808",0}')},
    "interval_accum_inv": {0: ("{0,0}", '{"-178000000 years -2147483648 days -2562047788:00:54.775808",5}')},
    "interval_combine": {0: ("{0,0}", '{"-178000000 years",1}'), 1: ("{0,0}", '{"-1 day -00:00:00.000001",1}')},
}
for _name in ("float4_accum", "float8_accum", "float8_combine"):
    HINTS[_name] = {0: ("{0,0,0}", "{1e308,-1.7976931348623157e308,5e-324}", "{-1.2345678901234567e-300,1,2}")}
HINTS["float8_combine"][1] = HINTS["float8_combine"][0]
for _name in ("float8_regr_accum", "float8_regr_combine"):
    HINTS[_name] = {0: ("{0,0,0,0,0,0}",
                        "{1e308,-1.7976931348623157e308,5e-324,1e308,-1e308,-1.2345678901234567e-300}")}
HINTS["float8_regr_combine"][1] = HINTS["float8_regr_combine"][0]

_BACKSLASHES = "repeat('\\', 300)"
_TO_JSON_NESTED = [f"to_json({'to_json(' * depth}{_BACKSLASHES}{')::text' * depth})" for depth in range(1, 7)]

WORST: dict[str, list[str]] = {
    "to_json": _TO_JSON_NESTED + ["to_json(repeat(chr(1), 500))",
                                  "to_json(ARRAY[repeat('\\', 200), repeat('\"', 200)])",
                                  "to_json(ROW(repeat(chr(1), 200), repeat('\\', 200)))"],
    "to_jsonb": [f"to_jsonb({'to_jsonb(' * depth}{_BACKSLASHES}{')::text' * depth})" for depth in range(1, 5)]
    + ["to_jsonb(0)", "to_jsonb(1::int2)", "to_jsonb('{}'::int[])", "to_jsonb(repeat(chr(31), 400))"],
    "json_build_array": ["json_build_array(" + ", ".join([_BACKSLASHES] * 4) + ")",
                         "json_build_array(json_build_array(json_build_array(" + _BACKSLASHES + ")::text)::text)"],
    "jsonb_build_array": ["jsonb_build_array(" + ", ".join(["0"] * 100) + ")", "jsonb_build_array(" + ", ".join(
        ["'[]'::jsonb"] * 60) + ")", "jsonb_build_array(repeat(chr(1), 300), 1e300)"],
    "jsonb_build_object": ["jsonb_build_object(" + ", ".join(f"'{i}', 0" for i in range(50)) + ")",
                           "jsonb_build_object(repeat(chr(1), 200), repeat('\\', 200))"],
    "json_build_object": ["json_build_object(repeat(chr(1), 200), repeat('\"', 200), 1, NULL)"],
    "quote_literal": ["quote_literal(repeat('\\', 1000))", "quote_literal(quote_literal(repeat('''', 300)))"],
    "quote_ident": ["quote_ident(repeat('\"', 1000))", "quote_ident(quote_ident(quote_ident(repeat('\"', 100))))"],
    "repeat": ["repeat('ΐ𝄞', 1000)", "repeat(repeat('\\', 10), 300)"],
    "lpad": ["lpad('', 3000, '𝄞')", "lpad('x', 3000)", "lpad(repeat('ΐ', 4000), 3000, 'a')", "lpad('a', 2000, 'ab𝄞')"],
    "rpad": ["rpad('', 3000, '𝄞')", "rpad('x', 3000, 'ΐ')", "rpad(repeat('𝄞', 100), 50)"],
    "format": ["format('%s%s%s%s', VARIADIC ARRAY[repeat('\\', 300), 'b', 'c', 'd'])",
               "format('%1$L%1$L%1$L%1$L', repeat('\\', 500))", "format('%2000s', '𝄞')",
               "format('%1$I%1$I', repeat('\"', 300))", "format('%L', NULL)", "format('%s', ARRAY[repeat('\"', 300)])"],
    "regexp_replace": ["regexp_replace(repeat('a', 1000), '', '\\&\\&\\&', 'g')",
                       "regexp_replace(repeat('ab', 200), '(a)(b)', '\\1\\2\\1\\2\\2\\1', 'g')",
                       "regexp_replace('aaaa', 'a', repeat('\\&', 300), 'g')"],
    "replace": ["replace(repeat('a', 1000), 'a', repeat('𝄞', 5))", "replace(repeat('ab', 500), 'b', repeat('\\', 40))"],
    "translate": ["translate(repeat('a', 2000), 'a', '𝄞')", "translate(repeat('abc', 500), 'abc', 'ΐ𝄞€')"],
    "concat_ws": ["concat_ws(repeat('𝄞', 300), 1, 2, 3, 4, 5, 6, 7)", "concat_ws(',', VARIADIC ARRAY['a', 'b'])"],
    "concat": ["concat(ARRAY[repeat('\\', 300)], ROW(repeat('\"', 300)), 1e300)"],
    # Six lower bounds of -2147483648 print six dimensions ([-2147483648:-2147483648] each).
    "array_fill": ["array_fill(1, ARRAY[1,1,1,1,1,1], '{" + ",".join(["-2147483648"] * 6) + "}'::int[])",
                   "array_fill(repeat('\\', 10), ARRAY[40, 40])",
                   "array_fill(NULL::text, ARRAY[700])", "array_fill(''::text, ARRAY[700])"],
    "array_append": ["array_append(ARRAY[]::text[], repeat('\\', 1000))", "array_append('{}'::text[], '')"],
    "array_prepend": ["array_prepend(repeat('\"', 1000), '{}'::text[])"],
    "array_cat": ["array_cat('[-2147483648:-2147483648]={\"\"}'::text[], '[5:5]={\"\"}'::text[])"],
    "array_to_string": ["array_to_string(array_fill('a'::text, ARRAY[300]), repeat('𝄞', 10))",
                        "array_to_string('{NULL,NULL,NULL}'::text[], ',', repeat('\\', 100))"],
    "string_to_array": ["string_to_array(repeat('\"', 1000), NULL)", "string_to_array(repeat(',', 1000), ',')",
                        "string_to_array(repeat('a', 500), '', 'a')"],
    "regexp_split_to_array": ["regexp_split_to_array(repeat('\\', 500), '')"],
    "to_tsvector": ["to_tsvector('simple', repeat('a ', 1500))", "to_tsvector(repeat('ab''cd ', 300))"],
    "setweight": ["setweight(to_tsvector('simple', repeat('a ', 1500)), 'A')"],
    "unnest": ["unnest('a:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20'::tsvector)",
               "unnest(ARRAY[repeat('\\', 300)])", "unnest('{}'::int[])"],
    "normalize": ["normalize(repeat(U&'\\FDFA', 300), NFKD)", "normalize(repeat(U&'\\0390', 300), NFD)"],
    "upper": ["upper(repeat('ΐ', 1000))", "upper(repeat('ŉ', 1000))", "upper(repeat('ß', 1000))", "upper('ɐȿɑɫ')"],
    "initcap": ["initcap(repeat('ŉ ', 600))", "initcap(repeat('ı', 1000))", "initcap('ɐ ȿ ɑ ɫ')"],
    "lower": ["lower(repeat('İ', 1000))", "lower(repeat('Ⱥ', 1000))"],
    "bpchar": ["bpchar('a'::bpchar, 3004, true)", "bpchar(''::bpchar, 1004, false)"],
    "encode": ["encode(decode(repeat('00', 1000), 'hex'), 'escape')",
               "encode(decode(repeat('ff', 999), 'hex'), 'base64')"],
    "to_char": ["to_char(-1e300, 'FM' || repeat('9', 400) || '.' || repeat('9', 400))", "to_char(3888, 'RN')",
                "to_char(interval '-178000000 years', 'YYYY HH24 DDD SSSS')",
                "to_char(timestamptz '4713-01-01 00:00:00 BC', 'TMDay TMMonth TZ OF YYYY')"],
    "jsonb_pretty": ["jsonb_pretty('" + "[" * 100 + "]" * 100 + "')",
                     "jsonb_pretty('[" + ",".join(["{}"] * 300) + "]')"],
    "polygon": ["polygon(1000, circle '<(-1.2345678901234567e-300,-1.2345678901234567e-300),1e308>')"],
    "path_add_pt": ["path_add_pt(path '[(0,0),(0,0),(0,0)]', point '(-1.2345678901234567e-300,1e-300)')"],
    "pg_size_pretty": ["pg_size_pretty(-1e300::numeric)", "pg_size_pretty((-9223372036854775808)::int8)"],
    "cash_words": ["cash_words('-92233720368547758.08'::money)", "cash_words('-77777777777777777.77'::money)"],
    "generate_series": ["generate_series(1, 3000)", "generate_series(-1e300, -1e300, 1)",
                        "generate_series(0.0000000000001, 0.0000000000003, 0.0000000000001)",
                        "generate_series(timestamp '2000-01-01', '2000-01-02', '1 hour')"],
    "ts_headline": ["ts_headline(repeat('a ', 1000), 'a', 'HighlightAll=true, StartSel=" + "<" * 50 + "')"],
    "string_agg": ["SELECT string_agg(repeat('\\', 100), repeat('𝄞', 5)) FROM generate_series(1, 50)"],
    "array_agg": ["SELECT array_agg(repeat('\\', 100)) FROM generate_series(1, 50)",
                  "SELECT array_agg(''::text) FROM generate_series(1, 500)",
                  "SELECT array_agg(true) FROM generate_series(1, 500)"],
    "json_agg": ["SELECT json_agg(repeat(chr(1), 100)) FROM generate_series(1, 50)",
                 "SELECT json_agg(ROW()) FROM generate_series(1, 500)",
                 "SELECT json_agg('{}'::int[]) FROM generate_series(1, 500)"],
    "jsonb_agg": ["SELECT jsonb_agg(0) FROM generate_series(1, 500)",
                  "SELECT jsonb_agg('[]'::jsonb) FROM generate_series(1, 500)"],
    "jsonb_object_agg": ["SELECT jsonb_object_agg(g::text, 0) FROM generate_series(1, 500) AS g"],
    "percentile_disc": [("SELECT percentile_disc('{0,0,0,0,0,0,0,0,0,0}'::float8[]) WITHIN GROUP "
                         "(ORDER BY repeat('\\', 50)) FROM generate_series(1, 5)")],
    "xmlagg": ["SELECT xmlagg('<a/>'::xml) FROM generate_series(1, 500)"],
    "jsonb_path_query": ["jsonb_path_query('0', '$x', jsonb_build_object('x', repeat('\\', 500)))",
                         "jsonb_path_query('{\"a\": {\"b\": {}}}', '$.**.keyvalue()')"],
    "jsonb_path_query_first": ["jsonb_path_query_first('0', '$x', jsonb_build_object('x', repeat('\\', 500)))"],
    "jsonb_path_query_array": ["jsonb_path_query_array('[1]', '$[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]')",
                               "jsonb_path_query_array('[[[[[[1]]]]]]', ('$' || repeat('[0,0,0,0]', 6))::jsonpath)"],
    "to_tsquery": ["to_tsquery('simple', 'a-b-c-d-e-f')", "to_tsquery('english', repeat('!', 30) || 'a')"],
    "plainto_tsquery": ["plainto_tsquery('simple', repeat('a-b ', 300))"],
    "phraseto_tsquery": ["phraseto_tsquery('simple', repeat('a-b ', 300))"],
    "websearch_to_tsquery": ["websearch_to_tsquery('simple', repeat('-a ', 300))",
                             "websearch_to_tsquery('simple', repeat('a-b ', 300))"],
    "multirange_minus": [
        "multirange_minus('{(,)}'::nummultirange, '{[1e300,1e301),[-1e-300,0),[1,2)}'::nummultirange)"],
    "range_intersect": ["range_intersect('(,)'::numrange, '[1e300,1e301]'::numrange)"],
    "rows:jsonb_path_query": [
        "SELECT 1 FROM jsonb_path_query('[1]', '$[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]') AS f",
        "SELECT 1 FROM jsonb_path_query('[[[[[[1]]]]]]', ('$' || repeat('[0,0,0,0]', 6))::jsonpath) AS f",
        "SELECT 1 FROM jsonb_path_query('[[[[[[[[[1]]]]]]]]]', '$.**.**.**') AS f",
        "SELECT 1 FROM jsonb_path_query('{\"a\": {\"b\": 1}}', '$.keyvalue().keyvalue().keyvalue()') AS f",
        "SELECT 1 FROM jsonb_path_query('0', '$x[*]', jsonb_build_object('x', array_fill(0, ARRAY[300]))) AS f"],
    "rows:json_populate_recordset": [
        "SELECT 1 FROM json_populate_recordset(NULL::public.size_rule_pair, '[{},{},{},{},{},{},{},{},{},{}]') AS f"],
    "rows:jsonb_populate_recordset": [
        "SELECT 1 FROM jsonb_populate_recordset(NULL::public.size_rule_pair, '[{},{},{},{},{},{},{},{},{},{}]') AS f",
        "SELECT 1 FROM jsonb_populate_recordset(ROW('a', 1, '1')::public.size_rule_pair, '[{}, {}]') AS f"],
    "rows:json_to_recordset": ["SELECT 1 FROM json_to_recordset('[{},{},{},{},{}]') AS f(a text)"],
    "rows:jsonb_to_recordset": ["SELECT 1 FROM jsonb_to_recordset('[{},{},{},{},{}]') AS f(a text)"],
    "range_agg": ["SELECT range_agg(int4range(g, g, '[]')) FROM generate_series(1, 500, 2) AS g"],
}
# Floats and json numbers print without their exponent in jsonb.
WORST["to_jsonb"] += ["to_jsonb('{5e-324,1e-300,-2.2250738585072014e-308}'::float8[])",
                      "to_jsonb(ROW(1.4e-45::float4))",
                      "to_jsonb(ROW('[1e300]'::json, 5e-324::float8))", "to_jsonb('[[[[[[[[[[1e1000]]]]]]]]]]'::json)"]
# Control characters, six bytes each in JSON, as literals (whose size is exact, unlike repeat(chr(1), n)'s).
_CONTROLS = sql_literal("\x01" * 500)
WORST["to_json"].append(f"to_json({_CONTROLS}::text)")
WORST["json_build_object"].append(f"json_build_object({_CONTROLS}::text, {_CONTROLS}::text)")
WORST["json_agg"].append(f"SELECT json_agg({_CONTROLS}::text) FROM generate_series(1, 20)")
