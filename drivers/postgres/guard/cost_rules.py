"""DATA: built-in functions PostgreSQL cannot interrupt whose time grows faster than their inputs.

``statement_timeout``, the gateway's cancel and even ``pg_terminate_backend``
act only when the running backend checks for interrupts; these functions do
not while they run. Each entry names a function overload and the argument
positions (0-based) whose sizes multiply into its running time. Wherever the
guard sees that such an overload may run (called by name, or as the function
behind an operator such as ``LIKE``, ``&&``, ``@>``, ``?|`` or ``-``), every
argument in those positions must be *bounded* (``plain_arguments.py``): a
literal of at most ``max_bounded_literal_bytes``, or one column of a granted
table, possibly passed through a function of ``SIZE_BOUNDED_BY_ARGUMENTS``.

Keys are ``name(type, ...)`` with pg_catalog type names (``text[]`` for an
array), or a bare ``name`` for every overload of the name. To extend the
table from an audit finding, add its implementing function (``pg_proc.proname``,
``pg_operator.oprcode``) with the positions of the inputs that drive its cost.
``tests/test_sql_guard.py`` checks every key against the live catalog.
Measurements are in docs/security.md; scripts/interrupt_audit.py (issue 8's
audit) measures every family at doubling sizes under a 1 s statement limit,
and an entry here answers each superlinear overrun it found that is not
refused outright (XML parsing, polygons and paths: ``function_policy.py``).
"""

from __future__ import annotations

COST_BOUNDED_FUNCTIONS: dict[str, tuple[int, ...]] = {
    # Trimming with a set of characters: every character trimmed scans the set.
    # ltrim(repeat('a', 128000), repeat('b', 128000) || 'a') ran 48.6 s.
    "ltrim(text, text)": (0, 1),
    "rtrim(text, text)": (0, 1),
    "btrim(text, text)": (0, 1),
    "ltrim(bytea, bytea)": (0, 1),
    "rtrim(bytea, bytea)": (0, 1),
    "btrim(bytea, bytea)": (0, 1),
    # Every character of the string scans the set, and a match walks the replacement set.
    "translate(text, text, text)": (0, 1, 2),
    # Substring search: the string against the needle (the result of replace is
    # as large as string/needle times replacement).
    "strpos(text, text)": (0, 1),
    "position(text, text)": (0, 1),
    "position(bytea, bytea)": (0, 1),
    "position(bit, bit)": (0, 1),
    "replace(text, text, text)": (0, 1, 2),
    "split_part(text, text, int4)": (0, 1),
    "string_to_array(text, text)": (0, 1),
    "string_to_array(text, text, text)": (0, 1, 2),
    "string_to_table(text, text)": (0, 1),
    "string_to_table(text, text, text)": (0, 1, 2),
    # LIKE / ILIKE and their negations (~~, ~~*, !~~, !~~*): the pattern's
    # wildcards are retried at every position of the string.
    "textlike": (0, 1),
    "textnlike": (0, 1),
    "texticlike": (0, 1),
    "texticnlike": (0, 1),
    "bpcharlike": (0, 1),
    "bpcharnlike": (0, 1),
    "bpchariclike": (0, 1),
    "bpcharicnlike": (0, 1),
    "namelike": (0, 1),
    "namenlike": (0, 1),
    "nameiclike": (0, 1),
    "nameicnlike": (0, 1),
    "bytealike": (0, 1),
    "byteanlike": (0, 1),
    # Array overlap and containment (&&, @>, <@): every element against every element.
    # Two arrays of 60 000 integers: 6.8 s.
    "arrayoverlap": (0, 1),
    "arraycontains": (0, 1),
    "arraycontained": (0, 1),
    # jsonb containment (@>, <@), key tests (?|, ?&) and key deletion (- text[]).
    # Containment of two large computed arrays: 30 s.
    "jsonb_contains": (0, 1),
    "jsonb_contained": (0, 1),
    "jsonb_exists_any": (0, 1),
    "jsonb_exists_all": (0, 1),
    "jsonb_delete(jsonb, text[])": (0, 1),
    # tsquery construction from text grows faster than the text.
    "to_tsquery(text)": (0,),
    "to_tsquery(regconfig, text)": (1,),
    "plainto_tsquery(text)": (0,),
    "plainto_tsquery(regconfig, text)": (1,),
    "phraseto_tsquery(text)": (0,),
    "phraseto_tsquery(regconfig, text)": (1,),
    "websearch_to_tsquery(text)": (0,),
    "websearch_to_tsquery(regconfig, text)": (1,),
    "tsqueryin": (0,),
    # text @@ text and text @@ tsquery: to_tsvector(left) @@ plainto_tsquery(right) built at run time,
    # the right operand's tsquery construction as costly as plainto_tsquery's.
    "ts_match_tt": (1,),
    "ts_match_tq": (1,),
    # Unicode normalisation reorders combining marks one pair at a time.
    "normalize(text, text)": (0,),
    "is_normalized(text, text)": (0,),
    # Multirange text input (a cast of text to int4multirange and friends): the
    # audit found it linear, but 512 KiB of ranges already run 1.3 s past the limit.
    "multirange_in": (0,),
    # Ranking: every query term against the document's lexemes (audit: 4.8 s at
    # 32 768 terms, 1 s limit).
    "ts_rank(tsvector, tsquery)": (0, 1),
    "ts_rank(tsvector, tsquery, int4)": (0, 1),
    "ts_rank(float4[], tsvector, tsquery)": (1, 2),
    "ts_rank(float4[], tsvector, tsquery, int4)": (1, 2),
    # Date/time parsing with a format: the format against the text (audit: 5 s at
    # 65 536 fields). to_date runs the same code.
    "to_timestamp(text, text)": (0, 1),
    "to_date(text, text)": (0, 1),
    # Unicode escapes and array replacement grow faster than their input (audit:
    # unistr 1.8 s at 16 Mi escapes, array_replace 2.2 s at 32 Mi elements).
    "unistr(text)": (0,),
    "array_replace": (0,),
    # Red team: builders that sort or merge every element against the others without checking for
    # interrupts. jsonb_object/json_object pair two key and value arrays; a multirange constructor
    # (VARIADIC ranges, one C function for every multirange type) and range_agg over multiranges
    # merge the ranges one by one.
    "jsonb_object(text[], text[])": (0, 1),
    "json_object(text[], text[])": (0, 1),
    "int4multirange(int4range[])": (0,),
    "int8multirange(int8range[])": (0,),
    "nummultirange(numrange[])": (0,),
    "datemultirange(daterange[])": (0,),
    "tsmultirange(tsrange[])": (0,),
    "tstzmultirange(tstzrange[])": (0,),
    "range_agg(anymultirange)": (0,),
}
"""Function overload -> argument positions whose sizes multiply into its running time."""

EVERY_ARGUMENT: tuple[int, ...] = (-1,)
"""Positions meaning all the arguments, however many (a VARIADIC function such as jsonb_build_object)."""

SIZE_BOUNDED_BY_ARGUMENTS: dict[str, tuple[int, ...]] = {
    # The result is no larger than the argument in these positions (give or take a
    # case mapping's or an escape's small factor), so a bounded argument stays bounded.
    "lower": (0,),
    "upper": (0,),
    "initcap": (0,),
    "btrim(text)": (0,),
    "ltrim(text)": (0,),
    "rtrim(text)": (0,),
    "substr": (0,),
    "substring": (0,),
    "left": (0,),
    "right": (0,),
    "like_escape": (0, 1),
    "similar_to_escape": (0, 1),
    # Text search: a tsvector or tsquery is no larger than the text it was made of.
    "to_tsvector(text)": (0,),
    "to_tsvector(regconfig, text)": (1,),
    "to_tsvector(json)": (0,),
    "to_tsvector(regconfig, json)": (1,),
    "to_tsvector(jsonb)": (0,),
    "to_tsvector(regconfig, jsonb)": (1,),
    "to_tsquery(text)": (0,),
    "to_tsquery(regconfig, text)": (1,),
    "plainto_tsquery(text)": (0,),
    "plainto_tsquery(regconfig, text)": (1,),
    "phraseto_tsquery(text)": (0,),
    "phraseto_tsquery(regconfig, text)": (1,),
    "websearch_to_tsquery(text)": (0,),
    "websearch_to_tsquery(regconfig, text)": (1,),
    # Splitting: the pieces hold the input's bytes, plus a few bytes of array overhead per piece.
    "string_to_array": (0,),
    "regexp_split_to_array": (0,),
    # Conversions and constructors of JSON: as large as the values they hold, plus punctuation.
    "to_jsonb": (0,),
    "to_json": (0,),
    "jsonb_build_object": EVERY_ARGUMENT,
    "jsonb_build_array": EVERY_ARGUMENT,
    "json_build_object": EVERY_ARGUMENT,
    "json_build_array": EVERY_ARGUMENT,
    # Concatenation (||): as large as both operands together. The guard still
    # allows at most one column reference in a bounded argument.
    "textcat": (0, 1),
    "textanycat": (0, 1),
    "anytextcat": (0, 1),
    "byteacat": (0, 1),
    "bitcat": (0, 1),
    "array_cat": (0, 1),
    "array_append": (0, 1),
    "array_prepend": (0, 1),
    "jsonb_concat": (0, 1),
    "tsvector_concat": (0, 1),
    "tsquery_or": (0, 1),
    # Range constructors: two bounds and a flags string, so int4multirange(int4range(1, 2), ...) of
    # literals stays bounded.
    "int4range": EVERY_ARGUMENT,
    "int8range": EVERY_ARGUMENT,
    "numrange": EVERY_ARGUMENT,
    "daterange": EVERY_ARGUMENT,
    "tsrange": EVERY_ARGUMENT,
    "tstzrange": EVERY_ARGUMENT,
}
"""Function overload -> argument positions that carry its result's size (keys as above)."""
