"""The catalogue of scripts/interrupt_audit.py: one probe per built-in worth timing, grouped by family.

The shapes hit each function's worst case (a needle that matches all but its
first character, a trim set whose match is its last character, polygons whose
bounding boxes overlap but whose edges never cross...). Probes of functions
expected to be linear go up to LINEAR_MAX units; the others stop long before.
"""

from __future__ import annotations

from collections.abc import Callable

from scripts.interrupt_probes import (
    LINEAR_MAX, Family, Probe, and_chain, as_bytea, distinct_words, jsonb_array, multirange_of, point_list,
    random_digits, run_of, xml_document,
)

# -- text --------------------------------------------------------------------------------------------

HAYSTACK = run_of("a", "", 0, factor="2 * ")
NEEDLE = "'b' || " + run_of("a", "", 1)
"""A needle that matches the haystack everywhere but at its first character: the worst case of a search."""
SUBJECT = HAYSTACK
PATTERN = "'%' || " + run_of("a", "b", 1)
"""A LIKE pattern whose literal part matches the subject everywhere until its last character."""
TRIM_SET = run_of("b", "a", 1)
"""A trim set whose only character in the string is its last one."""


def trim_probes(family: Family, argument_type: str, convert: Callable[[str], str] = str) -> list[Probe]:
    """ltrim, rtrim and btrim of a long string by a long set (the three share one loop per type)."""
    prefix = "" if argument_type == "text" else f"{argument_type}_"
    return [
        Probe(
            family,
            f"{prefix}{function}_long_set",
            f"{function}({convert(run_of('a', '', 0))}, {convert(TRIM_SET)})",
            (f"{function}({argument_type},{argument_type})",),
        )
        for function in ("ltrim", "rtrim", "btrim")
    ]


TEXT = [
    *trim_probes(Family.TEXT, "text"),
    Probe(Family.TEXT, "translate_long_set", f"translate({run_of('a', '', 0)}, {TRIM_SET}, 'c')",
          ("translate(text,text,text)",)),
    Probe(Family.TEXT, "strpos_long_needle", f"strpos({HAYSTACK}, {NEEDLE})",
          ("strpos(text,text)", "position(text,text)")),
    Probe(Family.TEXT, "replace_long_needle", f"replace({HAYSTACK}, {NEEDLE}, 'x')", ("replace(text,text,text)",)),
    Probe(Family.TEXT, "split_part_long_delimiter", f"split_part({HAYSTACK}, {NEEDLE}, 2)",
          ("split_part(text,text,integer)",)),
    Probe(Family.TEXT, "string_to_array_long_delimiter", f"string_to_array({HAYSTACK}, {NEEDLE})",
          ("string_to_array(text,text)",)),
    Probe(Family.TEXT, "like_long_pattern", f"{SUBJECT} LIKE {PATTERN}", ("textlike(text,text)", "like(text,text)"),
          operators=("~~",), syntax="LIKE"),
    Probe(Family.TEXT, "ilike_long_pattern", f"{SUBJECT} ILIKE {PATTERN}",
          ("texticlike(text,text)",), operators=("~~*",), syntax="ILIKE"),
    Probe(Family.TEXT, "bpchar_like_long_pattern", f"({SUBJECT})::bpchar LIKE {PATTERN}",
          ("bpcharlike(character,text)",), operators=("~~",), syntax="LIKE"),
    Probe(Family.TEXT, "similar_to_long_pattern", f"{SUBJECT} SIMILAR TO {PATTERN}",
          ("similar_to_escape(text)", "textregexeq(text,text)"), operators=("~",), syntax="SIMILAR TO"),
    Probe(Family.TEXT, "regexp_long_pattern",
          f"regexp_match({run_of('a', '', 0)}, repeat('a?', {{n1}}) || repeat('a', {{n1}}))",
          ("regexp_match(text,text)",), start=16, max_size=1 << 16,
          harmless="PostgreSQL refuses a pattern past its complexity limit ('regular expression is too complex') "
          "within about a second past the statement limit, whatever the query; overran in three audit runs of four"),
    Probe(Family.TEXT, "regexp_backreference", f"regexp_replace({run_of('a', 'b', 0)}, '^(a|aa)+\\1$', '')",
          ("regexp_replace(text,text,text)",), start=16, max_size=1 << 20),
    Probe(Family.TEXT, "normalize_nfc_combining_marks",
          "normalize('a' || repeat(U&'\\0301', {n0}) || repeat(U&'\\0316', {n0}), NFC)",
          ("normalize(text,text)",), syntax="NORMALIZE", unit="combining marks of each class", start=256),
    Probe(Family.TEXT, "normalize_nfd_combining_marks",
          "normalize('a' || repeat(U&'\\0301', {n0}) || repeat(U&'\\0316', {n0}), NFD)",
          ("normalize(text,text)",), syntax="NORMALIZE", unit="combining marks of each class", start=256),
    Probe(Family.TEXT, "is_normalized_combining_marks",
          "'a' || repeat(U&'\\0316', {n0}) || repeat(U&'\\0301', {n0}) IS NFC NORMALIZED",
          ("is_normalized(text,text)",), syntax="IS NORMALIZED", unit="combining marks of each class",
          start=256, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "starts_with_long", f"starts_with({run_of('a', '', 0)}, {run_of('a', 'b', 1)})",
          ("starts_with(text,text)",), start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "overlay_long", f"overlay({run_of('a', '', 0)} placing {run_of('b', '', 1)} from 2)",
          ("overlay(text,text,integer)",), start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "lpad_long", "lpad('x', {n1}, 'ab')", ("lpad(text,integer,text)",),
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "repeat_long", "repeat('ab', {n1})", ("repeat(text,integer)",),
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "format_many_references",
          "format(repeat('%1$s', {n0}), VARIADIC array_fill('x'::text, ARRAY[{n1}]))",
          ("format(text,\"any\")",), start=1 << 12, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "concat_ws_many", "concat_ws(',', VARIADIC array_fill('ab'::text, ARRAY[{n1}]))",
          ("concat_ws(text,\"any\")",), unit="elements", start=1 << 12, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "md5_long", f"md5({run_of('a', '', 0)})", ("md5(text)",),
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "upper_long", f"upper({run_of('a', '', 0)})", ("upper(text)",),
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "quote_literal_long", "quote_literal(repeat('''\\', {n0}))", ("quote_literal(text)",),
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "text_compare_long", f"{run_of('a', '', 0)} < {run_of('a', 'b', 1)}",
          ("text_lt(text,text)",), operators=("<",), start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "to_ascii_long", f"to_ascii({run_of('a', '', 0)}, 'LATIN1')", ("to_ascii(text,name)",),
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.TEXT, "unistr_long", "unistr(repeat('\\0041', {n0}))", ("unistr(text)",),
          unit="escapes", start=1 << 16, max_size=LINEAR_MAX),
]

# -- bytea and bit strings ---------------------------------------------------------------------------

BYTEA = [
    Probe(Family.BYTEA, "bytea_position_long_needle",
          f"position({as_bytea(run_of('a', 'b', 1))} IN {as_bytea(HAYSTACK)})", ("position(bytea,bytea)",),
          unit="bytes"),
    Probe(Family.BYTEA, "bytea_like_long_pattern", f"{as_bytea(SUBJECT)} LIKE {as_bytea(PATTERN)}",
          ("bytealike(bytea,bytea)", "like(bytea,bytea)"), operators=("~~",), syntax="LIKE", unit="bytes"),
    *trim_probes(Family.BYTEA, "bytea", as_bytea),
    Probe(Family.BYTEA, "bytea_overlay_long",
          f"overlay({as_bytea(run_of('a', '', 0))} placing {as_bytea(run_of('b', '', 1))} from 2)",
          ("overlay(bytea,bytea,integer)",), unit="bytes", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.BYTEA, "encode_base64_long", f"encode({as_bytea(run_of('a', '', 0))}, 'base64')",
          ("encode(bytea,text)",), unit="bytes", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.BYTEA, "decode_hex_long", "decode(repeat('61', {n0}), 'hex')", ("decode(text,text)",),
          unit="bytes", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.BYTEA, "sha256_long", f"sha256({as_bytea(run_of('a', '', 0))})", ("sha256(bytea)",),
          unit="bytes", start=1 << 16, max_size=LINEAR_MAX),
]

BITSTRING = [
    Probe(Family.BITSTRING, "bit_position_long_needle",
          "position((repeat('0', {n1}) || '1')::varbit IN repeat('0', 2 * {n0})::varbit)",
          ("position(bit,bit)",), unit="bits"),
    Probe(Family.BITSTRING, "varbit_and_long", "repeat('1', {n0})::varbit & repeat('0', {n0})::varbit",
          ("bitand(bit,bit)",), operators=("&",), unit="bits", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.BITSTRING, "varbit_shift_long", "repeat('1', {n0})::varbit << 3", ("bitshiftleft(bit,integer)",),
          operators=("<<",), unit="bits", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.BITSTRING, "bit_count_long", "bit_count(repeat('1', {n0})::varbit)", ("bit_count(bit)",),
          unit="bits", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.BITSTRING, "varbit_substring_long", "substring(repeat('1', {n0})::varbit from 2)",
          ("substring(bit,integer)",), unit="bits", start=1 << 16, max_size=LINEAR_MAX),
]

# -- arrays ------------------------------------------------------------------------------------------


def int_array(value: int, argument: int) -> str:
    return f"array_fill({value}, ARRAY[{{n{argument}}}])"


ARRAYS = [
    Probe(Family.ARRAYS, "array_overlap", f"{int_array(1, 0)} && {int_array(2, 1)}",
          ("arrayoverlap(anyarray,anyarray)",), operators=("&&",), unit="elements"),
    Probe(Family.ARRAYS, "array_contains", f"({int_array(1, 0)} || 2) @> {int_array(2, 1)}",
          ("arraycontains(anyarray,anyarray)",), operators=("@>",), unit="elements"),
    Probe(Family.ARRAYS, "array_contained", f"{int_array(2, 0)} <@ ({int_array(1, 1)} || 2)",
          ("arraycontained(anyarray,anyarray)",), operators=("<@",), unit="elements"),
    Probe(Family.ARRAYS, "array_equal", f"({int_array(1, 0)} || 2) = ({int_array(1, 0)} || 3)",
          ("array_eq(anyarray,anyarray)",), operators=("=",), unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.ARRAYS, "array_position_long", f"array_position({int_array(1, 0)}, 2)",
          ("array_position(anycompatiblearray,anycompatible)",), unit="elements",
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.ARRAYS, "array_positions_long", f"array_positions({int_array(1, 0)}, 1)",
          ("array_positions(anycompatiblearray,anycompatible)",), unit="elements",
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.ARRAYS, "array_remove_long", f"array_remove({int_array(1, 0)}, 1)",
          ("array_remove(anycompatiblearray,anycompatible)",), unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.ARRAYS, "array_replace_long", f"array_replace({int_array(1, 0)}, 1, 2)",
          ("array_replace(anycompatiblearray,anycompatible,anycompatible)",), unit="elements",
          start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.ARRAYS, "any_long_array", f"2 = ANY({int_array(1, 1)})", ("int4eq(integer,integer)",),
          operators=("=",), syntax="= ANY", unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.ARRAYS, "array_to_string_long", "array_to_string(array_fill('ab'::text, ARRAY[{n0}]), ',')",
          ("array_to_string(anyarray,text)",), unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.ARRAYS, "array_input_long", "('{' || repeat('1,', {n0}) || '1}')::int[]",
          ("array_in(cstring,oid,integer)",), unit="elements", start=1 << 16, max_size=LINEAR_MAX),
]

# -- json and jsonb ----------------------------------------------------------------------------------

STRINGS_A_THEN_B = jsonb_array('"a"', '"b"', 0)
"""["a", "a", ..., "b"]: a key test for "b" walks the whole array."""

JSON = [
    Probe(Family.JSON, "jsonb_contains_arrays", f"{jsonb_array('1', '2', 0)} @> {jsonb_array('2', '2', 1)}",
          ("jsonb_contains(jsonb,jsonb)",), operators=("@>",), unit="elements"),
    Probe(Family.JSON, "jsonb_contained_arrays", f"{jsonb_array('2', '2', 0)} <@ {jsonb_array('1', '2', 1)}",
          ("jsonb_contained(jsonb,jsonb)",), operators=("<@",), unit="elements"),
    Probe(Family.JSON, "jsonb_exists_any_array", f"{STRINGS_A_THEN_B} ?| array_fill('c'::text, ARRAY[{{n1}}])",
          ("jsonb_exists_any(jsonb,text[])",), operators=("?|",), unit="elements"),
    Probe(Family.JSON, "jsonb_exists_all_array", f"{STRINGS_A_THEN_B} ?& array_fill('b'::text, ARRAY[{{n1}}])",
          ("jsonb_exists_all(jsonb,text[])",), operators=("?&",), unit="elements"),
    Probe(Family.JSON, "jsonb_delete_keys", f"{STRINGS_A_THEN_B} - array_fill('c'::text, ARRAY[{{n1}}])",
          ("jsonb_delete(jsonb,text[])",), operators=("-",), unit="elements"),
    Probe(Family.JSON, "jsonb_exists_long_array", f"{STRINGS_A_THEN_B} ? 'b'", ("jsonb_exists(jsonb,text)",),
          operators=("?",), unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.JSON, "jsonb_delete_path_deep",
          "(repeat('[', {n0}) || repeat(']', {n0}))::jsonb #- array_fill('0'::text, ARRAY[{n1}])",
          ("jsonb_delete_path(jsonb,text[])",), operators=("#-",), unit="levels", start=256, max_size=1 << 20),
    Probe(Family.JSON, "jsonb_set_deep",
          "jsonb_set((repeat('[', {n0}) || repeat(']', {n0}))::jsonb, array_fill('0'::text, ARRAY[{n1}]), '1')",
          ("jsonb_set(jsonb,text[],jsonb,boolean)",), unit="levels", start=256, max_size=1 << 20),
    Probe(Family.JSON, "jsonb_path_filter_pairs", f"jsonb_path_exists({jsonb_array('1', '1', 0)}, '$[*] ? (@ > $[*])')",
          ("jsonb_path_exists(jsonb,jsonpath,jsonb,boolean)",), unit="elements", start=256),
    Probe(Family.JSON, "jsonpath_long_path", "jsonb_path_query_array('{}', ('$' || repeat('.a', {n1}))::jsonpath)",
          ("jsonb_path_query_array(jsonb,jsonpath,jsonb,boolean)", "jsonpath_in(cstring)"), unit="steps",
          start=1 << 12, max_size=LINEAR_MAX),
    Probe(Family.JSON, "json_parse_long", "('[' || repeat('1,', {n0}) || '1]')::json", ("json_in(cstring)",),
          unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.JSON, "jsonb_parse_long", "('[' || repeat('1,', {n0}) || '1]')::jsonb", ("jsonb_in(cstring)",),
          unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.JSON, "jsonb_parse_duplicate_keys", "('{' || repeat('\"a\":1,', {n0}) || '\"a\":2}')::jsonb",
          ("jsonb_in(cstring)",), unit="keys", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.JSON, "jsonb_pretty_long", f"jsonb_pretty({jsonb_array('[1]', '1', 0)})", ("jsonb_pretty(jsonb)",),
          unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.JSON, "jsonb_strip_nulls_long", f"jsonb_strip_nulls({jsonb_array('null', '1', 0)})",
          ("jsonb_strip_nulls(jsonb)",), unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.JSON, "jsonb_compare_long", f"{jsonb_array('1', '1', 0)} < {jsonb_array('1', '2', 0)}",
          ("jsonb_lt(jsonb,jsonb)",), operators=("<",), unit="elements", start=1 << 16, max_size=LINEAR_MAX),
    Probe(Family.JSON, "json_field_long_object", "('{' || repeat('\"a\":1,', {n0}) || '\"b\":2}')::json -> 'b'",
          ("json_object_field(json,text)",), operators=("->",), unit="keys", start=1 << 16, max_size=LINEAR_MAX),
]

# -- full text search --------------------------------------------------------------------------------

TSQUERY_CHAINS = {"and": "&", "or": "|", "phrase": "<->"}

FULLTEXT = [
    Probe(Family.FULLTEXT, "to_tsvector_long", "to_tsvector('simple', repeat('ab ', {n1}))",
          ("to_tsvector(regconfig,text)",), unit="words", start=1 << 14, max_size=LINEAR_MAX),
    *[
        Probe(Family.FULLTEXT, f"to_tsquery_{name}_chain",
              f"to_tsquery('simple', repeat('a {operator} ', {{n1}}) || 'a')", ("to_tsquery(regconfig,text)",),
              unit="operands", start=1 << 10)
        for name, operator in TSQUERY_CHAINS.items()
    ],
    Probe(Family.FULLTEXT, "to_tsquery_phrase_of_ors",
          "to_tsquery('simple', repeat('(a | b) <-> ', {n1}) || 'c')", ("to_tsquery(regconfig,text)",),
          unit="operands", start=16),
    Probe(Family.FULLTEXT, "tsquery_input_and_chain", "(repeat('a & ', {n0}) || 'a')::tsquery", ("tsqueryin(cstring)",),
          unit="operands", start=1 << 10),
    Probe(Family.FULLTEXT, "plainto_tsquery_long", "plainto_tsquery('simple', repeat('a ', {n1}))",
          ("plainto_tsquery(regconfig,text)",), unit="words", start=1 << 10),
    Probe(Family.FULLTEXT, "phraseto_tsquery_long", "phraseto_tsquery('simple', repeat('a ', {n1}))",
          ("phraseto_tsquery(regconfig,text)",), unit="words", start=1 << 10),
    Probe(Family.FULLTEXT, "websearch_to_tsquery_long", "websearch_to_tsquery('simple', repeat('a or ', {n1}) || 'a')",
          ("websearch_to_tsquery(regconfig,text)",), unit="words", start=1 << 10),
    Probe(Family.FULLTEXT, "ts_rank_many_terms",
          f"ts_rank(to_tsvector('simple', {distinct_words(0, ' ')}), {distinct_words(1, ' & ')}::tsquery)",
          ("ts_rank(tsvector,tsquery)",), unit="distinct words", start=256, max_size=1 << 20, small=2),
    Probe(Family.FULLTEXT, "ts_rank_cd_many_terms",
          f"ts_rank_cd(to_tsvector('simple', {distinct_words(0, ' ')}), {distinct_words(1, ' | ')}::tsquery)",
          ("ts_rank_cd(tsvector,tsquery)",), unit="distinct words", start=256, max_size=1 << 20, small=2),
    Probe(Family.FULLTEXT, "ts_headline_long_document", "ts_headline('simple', repeat('a b ', {n1}), 'a & c'::tsquery)",
          ("ts_headline(regconfig,text,tsquery)",), unit="words", start=256),
    Probe(Family.FULLTEXT, "tsvector_match_many_terms",
          f"to_tsvector('simple', {distinct_words(0, ' ')}) @@ ({distinct_words(1, ' & ')} || ' & x')::tsquery",
          ("ts_match_vq(tsvector,tsquery)",), operators=("@@",), unit="distinct words", start=256,
          max_size=1 << 20, small=2),
    Probe(Family.FULLTEXT, "tsquery_contains",
          f"{and_chain('a', 'b', 0)} @> {and_chain('b', 'b', 1)}",
          ("tsq_mcontains(tsquery,tsquery)",), operators=("@>",), unit="operands"),
    Probe(Family.FULLTEXT, "ts_rewrite_long",
          f"ts_rewrite({and_chain('a', 'a', 0)}, {and_chain('a', 'b', 1)}, 'c'::tsquery)",
          ("ts_rewrite(tsquery,tsquery,tsquery)",), unit="operands"),
    Probe(Family.FULLTEXT, "setweight_filter_long",
          f"setweight(to_tsvector('simple', {distinct_words(0, ' ')}), 'A', array_fill('w1'::text, ARRAY[{{n2}}]))",
          ("setweight(tsvector,\"char\",text[])",), unit="words", start=256, max_size=1 << 20, small=2),
    Probe(Family.FULLTEXT, "tsvector_concat_long",
          f"to_tsvector('simple', {distinct_words(0, ' ')}) || to_tsvector('simple', {distinct_words(1, ' ')})",
          ("tsvector_concat(tsvector,tsvector)",), operators=("||",), unit="distinct words", start=256,
          max_size=1 << 20, small=2),
]

# -- XML ---------------------------------------------------------------------------------------------

QUADRATIC_XPATH = "//b[count(following::b) < 0]"
"""For each <b>, count the ones after it: quadratic in the document, and never true, so nothing stops early."""

XML = [
    Probe(Family.XML, "xpath_following_preceding",
          f"xpath('count(//b/following::b/preceding::b)', {xml_document(1)})",
          ("xpath(text,xml)", "xpath(text,xml,text[])"), unit="elements", start=256, max_size=1 << 20),
    Probe(Family.XML, "xpath_exists_quadratic", f"xpath_exists('{QUADRATIC_XPATH}', {xml_document(1)})",
          ("xpath_exists(text,xml)", "xpath_exists(text,xml,text[])"), unit="elements", start=256,
          max_size=1 << 20),
    Probe(Family.XML, "xmlexists_quadratic", f"XMLEXISTS('{QUADRATIC_XPATH}' PASSING BY VALUE ({xml_document(1)}))",
          ("xmlexists(text,xml)",), syntax="XMLEXISTS", unit="elements", start=256, max_size=1 << 20),
    Probe(Family.XML, "xmltable_quadratic",
          f"(SELECT count(*) FROM XMLTABLE('{QUADRATIC_XPATH}' PASSING ({xml_document(1)}) COLUMNS x text PATH '.'))",
          (), syntax="XMLTABLE", unit="elements", start=256, max_size=1 << 20),
    Probe(Family.XML, "xml_parse_long", "('<a>' || repeat('<b/>', {n0}) || '</a>')::xml", ("xml_in(cstring)",),
          syntax="XMLPARSE", unit="elements", start=1 << 14, max_size=LINEAR_MAX),
    Probe(Family.XML, "xml_parse_many_attributes",
          "('<a ' || (SELECT string_agg('a' || i || '=\"\"', ' ') FROM generate_series(1, {n0}) i) || '/>')::xml",
          ("xml_in(cstring)",), syntax="XMLPARSE", unit="attributes", start=256, max_size=1 << 22),
    Probe(Family.XML, "xml_parse_deep", "(repeat('<a>', {n0}) || repeat('</a>', {n0}))::xml", ("xml_in(cstring)",),
          syntax="XMLPARSE", unit="levels", start=64, max_size=1 << 22),
    Probe(Family.XML, "xml_is_well_formed_long",
          "xml_is_well_formed('<a>' || repeat('<b/>', {n0}) || '</a>')", ("xml_is_well_formed(text)",),
          unit="elements", start=1 << 14, max_size=LINEAR_MAX),
    Probe(Family.XML, "xmlagg_many_rows", "(SELECT xmlagg('<b/>'::xml) FROM generate_series(1, {n0}))",
          ("xmlagg(xml)", "xmlconcat2(xml,xml)"), unit="rows", start=1 << 10, max_size=LINEAR_MAX),
    Probe(Family.XML, "xmlelement_escape_long", "xmlelement(name a, repeat('<', {n1}))", (),
          syntax="XMLELEMENT", unit="characters", start=1 << 16, max_size=LINEAR_MAX),
]

# -- geometry ----------------------------------------------------------------------------------------

GEOMETRY = [
    Probe(Family.GEOMETRY, "poly_distance",
          f"poly_distance({point_list('polygon', '(0,0)', '(1,1)', 0)}, {point_list('polygon', '(9,9)', '(8,8)', 1)})",
          ("poly_distance(polygon,polygon)",), operators=("<->",), unit="points", start=256),
    Probe(Family.GEOMETRY, "path_distance",
          f"path_distance({point_list('path', '(0,0)', '(1,1)', 0)}, {point_list('path', '(9,9)', '(8,8)', 1)})",
          ("path_distance(path,path)",), operators=("<->",), unit="points", start=256),
    Probe(Family.GEOMETRY, "poly_overlap",
          f"{point_list('polygon', '(0,0)', '(10,10)', 0)} && {point_list('polygon', '(1,0)', '(2,0)', 1)}",
          ("poly_overlap(polygon,polygon)",), operators=("&&",), unit="points", start=256),
    Probe(Family.GEOMETRY, "poly_contain",
          f"{point_list('polygon', '(0,0)', '(0,10),(10,10),(10,0)', 0)} @> "
          f"{point_list('polygon', '(5,5)', '(6,6)', 1)}",
          ("poly_contain(polygon,polygon)",), operators=("@>",), unit="points", start=256),
    Probe(Family.GEOMETRY, "poly_contained",
          f"{point_list('polygon', '(5,5)', '(6,6)', 0)} <@ "
          f"{point_list('polygon', '(0,0)', '(0,10),(10,10),(10,0)', 1)}",
          ("poly_contained(polygon,polygon)",), operators=("<@",), unit="points", start=256),
    Probe(Family.GEOMETRY, "poly_same",
          f"{point_list('polygon', '(0,0)', '(1,1)', 0)} ~= {point_list('polygon', '(0,0)', '(2,2)', 1)}",
          ("poly_same(polygon,polygon)",), operators=("~=",), unit="points", start=256),
    Probe(Family.GEOMETRY, "path_inter",
          f"{point_list('path', '(0,0)', '(10,10)', 0)} ?# {point_list('path', '(1,0)', '(2,0)', 1)}",
          ("path_inter(path,path)",), operators=("?#",), unit="points", start=256),
    Probe(Family.GEOMETRY, "polygon_parse_long", point_list("polygon", "(0,0)", "(1,1)", 0), ("poly_in(cstring)",),
          unit="points", start=1 << 14, max_size=1 << 24),
    Probe(Family.GEOMETRY, "point_in_polygon_long",
          f"point '(0.5,0.5)' <@ {point_list('polygon', '(0,0)', '(1,1)', 1)}",
          ("pt_contained_poly(point,polygon)",), operators=("<@",), unit="points", start=1 << 14, max_size=1 << 24),
    Probe(Family.GEOMETRY, "circle_to_polygon_many_points", "polygon({n0}, circle '((0,0),1)')",
          ("polygon(integer,circle)",), unit="points", start=1 << 14, max_size=1 << 25, small=2),
]

# -- ranges and multiranges --------------------------------------------------------------------------

MULTIRANGE_OPERATORS = (
    ("intersect", "*", "multirange_intersect"),
    ("union", "+", "multirange_union"),
    ("minus", "-", "multirange_minus"),
    ("overlaps", "&&", "multirange_overlaps_multirange"),
    ("contains", "@>", "multirange_contains_multirange"),
)
"""Operators between two multiranges of n disjoint ranges each, interleaved so that none merges early."""

RANGES = [
    Probe(Family.RANGES, "multirange_parse_long", "('{' || repeat('[1,2),', {n0}) || '[1,2)}')::int4multirange",
          ("multirange_in(cstring,oid,integer)",), unit="ranges", start=1 << 12, max_size=LINEAR_MAX),
    Probe(Family.RANGES, "multirange_parse_disjoint",
          "('{' || (SELECT string_agg(format('[%s,%s)', 2 * i, 2 * i + 1), ',') FROM generate_series(1, {n0}) i)"
          " || '}')::int4multirange",
          ("multirange_in(cstring,oid,integer)",), unit="ranges", start=1 << 10, max_size=1 << 24),
    *[
        Probe(Family.RANGES, f"multirange_{name}", f"{multirange_of(0, 0)} {operator} {multirange_of(1, 1)}",
              (f"{function}(anymultirange,anymultirange)",), operators=(operator,), unit="ranges",
              start=1 << 10, max_size=1 << 24)
        for name, operator, function in MULTIRANGE_OPERATORS
    ],
    Probe(Family.RANGES, "multirange_constructor_many",
          "int4multirange(VARIADIC (SELECT array_agg(int4range(2 * i, 2 * i + 1)) FROM generate_series(1, {n0}) i))",
          ("int4multirange(int4range[])",), unit="ranges", start=1 << 10, max_size=1 << 24),
    Probe(Family.RANGES, "multirange_output_long", f"({multirange_of(0, 0)})::text",
          ("multirange_out(anymultirange)",), unit="ranges", start=1 << 10, max_size=1 << 24),
]

# -- numeric -----------------------------------------------------------------------------------------


def nines(argument: int, factor: str = "") -> str:
    return f"repeat('9', {factor}{{n{argument}}})::numeric"


NUMERIC = [
    Probe(Family.NUMERIC, "numeric_multiply", f"{nines(0)} * {nines(1)}", ("numeric_mul(numeric,numeric)",),
          operators=("*",), unit="digits", start=1 << 10, max_size=1 << 16),
    Probe(Family.NUMERIC, "numeric_divide", f"{nines(0, '2 * ')} / repeat('7', {{n1}})::numeric",
          ("numeric_div(numeric,numeric)",), operators=("/",), unit="digits", start=1 << 10, max_size=1 << 16),
    Probe(Family.NUMERIC, "numeric_modulo", f"mod({nines(0, '2 * ')}, repeat('7', {{n1}})::numeric)",
          ("mod(numeric,numeric)", "numeric_mod(numeric,numeric)"), operators=("%",), unit="digits",
          start=1 << 10, max_size=1 << 16,
          harmless="numeric's own size limit caps the operands (131 072 digits before the point): at its largest "
          "the modulo overran by 0.9 s (1.9 s under a 1 s limit); refusing computed operands of '/' and 'mod' "
          "would refuse sum(a) / sum(b)"),
    Probe(Family.NUMERIC, "numeric_power_integer", "power(2::numeric, {n1})", ("power(numeric,numeric)",),
          operators=("^",), unit="exponent", start=1 << 10, max_size=1 << 19),
    Probe(Family.NUMERIC, "numeric_sqrt_huge", f"sqrt({nines(0)})", ("sqrt(numeric)",), unit="digits",
          start=1 << 10, max_size=1 << 17),
    Probe(Family.NUMERIC, "numeric_ln_huge", f"ln({nines(0)})", ("ln(numeric)",), unit="digits",
          start=1 << 10, max_size=1 << 17),
    Probe(Family.NUMERIC, "numeric_log_huge", f"log({nines(0)}, {nines(1)})", ("log(numeric,numeric)",),
          unit="digits", start=1 << 10, max_size=1 << 17),
    Probe(Family.NUMERIC, "factorial_large", "factorial({n0})", ("factorial(bigint)",), unit="n",
          start=1 << 10, max_size=1 << 16),
    Probe(Family.NUMERIC, "numeric_gcd_random", f"gcd({random_digits(0, 'x')}, {random_digits(1, 'y')})",
          ("gcd(numeric,numeric)",), unit="32-digit blocks", start=8, max_size=1 << 12),
    Probe(Family.NUMERIC, "numeric_lcm_random", f"lcm({random_digits(0, 'x')}, {random_digits(1, 'y')})",
          ("lcm(numeric,numeric)",), unit="32-digit blocks", start=8, max_size=1 << 12),
    Probe(Family.NUMERIC, "numeric_input_output", f"({nines(0)})::text", ("numeric_in(cstring,oid,integer)",
          "numeric_out(numeric)"), unit="digits", start=1 << 10, max_size=1 << 18),
    Probe(Family.NUMERIC, "numeric_to_char_long_format", "to_char(1::numeric, repeat('9', {n1}))",
          ("to_char(numeric,text)",), unit="format characters", start=1 << 10, max_size=LINEAR_MAX),
    Probe(Family.NUMERIC, "to_number_long", "to_number(repeat('9', {n0}), repeat('9', {n1}))",
          ("to_number(text,text)",), unit="digits", start=1 << 10, max_size=LINEAR_MAX),
]

# -- other: date/time formatting and parsing, aggregates --------------------------------------------

OTHER = [
    Probe(Family.OTHER, "to_char_timestamp_long_format", "to_char(timestamp '2020-01-01', repeat('YYYY', {n1}))",
          ("to_char(timestamp without time zone,text)",), unit="format fields", start=1 << 12, max_size=LINEAR_MAX),
    Probe(Family.OTHER, "to_timestamp_long_format", "to_timestamp(repeat('2020', {n0}), repeat('YYYY', {n1}))",
          ("to_timestamp(text,text)",), unit="format fields", start=1 << 12, max_size=LINEAR_MAX),
    Probe(Family.OTHER, "timestamp_input_long", "('2020-01-01' || repeat(' ', {n0}))::timestamp",
          ("timestamp_in(cstring,oid,integer)",), unit="characters", start=1, max_size=1 << 20),
    Probe(Family.OTHER, "interval_input_long", "('1 day' || repeat(' ', {n0}))::interval",
          ("interval_in(cstring,oid,integer)",), unit="fields", start=1, max_size=1 << 20),
    Probe(Family.OTHER, "string_agg_many_rows", "(SELECT string_agg('x', ',') FROM generate_series(1, {n0}))",
          ("string_agg(text,text)",), unit="rows", start=1 << 14, max_size=LINEAR_MAX),
]

PROBES: tuple[Probe, ...] = (
    *TEXT, *BYTEA, *BITSTRING, *ARRAYS, *JSON, *FULLTEXT, *XML, *GEOMETRY, *RANGES, *NUMERIC, *OTHER,
)
"""Every probe, grouped by family; the first of each family is the one --quick runs."""
