"""DATA: built-in functions PostgreSQL cannot interrupt whose time grows faster than their inputs.

``statement_timeout``, the gateway's cancel and even ``pg_terminate_backend``
act only when the running backend checks for interrupts; these functions do
not while they run. Each entry names a function overload and the argument
positions (0-based) whose sizes multiply into its running time
(``costs.call_cost``: 5 ns per step of the product, one position counting as
its square). Wherever the analysed query runs such an overload (called by
name, behind an operator such as ``LIKE``, ``&&``, ``@>``, ``?|`` or ``-``, as
a cast or a type's input function), the row's budget is charged at the
bounded sizes of those arguments (``checks.py``, ``budget.py``).

Keys are ``name(type, ...)`` with pg_catalog type names (``text[]`` for an
array), or a bare ``name`` for every overload of the name; a rule holds for
every function with the same C symbol and argument count too
(``costs.cost_positions``). To extend the table from an audit finding, add its
implementing function (``pg_proc.proname``, ``pg_operator.oprcode``) with the
positions of the inputs that drive its cost. ``tests/test_sql_guard.py``
checks every key against the live catalog. Measurements are in
docs/security.md; scripts/interrupt_audit.py measures every family at
doubling sizes under a 1 s statement limit, and an entry here answers each
superlinear overrun it found that is not refused outright (XML parsing,
polygons and paths: ``function_policy.py``).
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
