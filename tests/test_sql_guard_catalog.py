"""The SQL guard's catalog rules: types a query may name, operators, and arguments of non-interruptible built-ins.

Every test builds the policy from the live pg_catalog of the local
PostgreSQL (as a pool does) and calls ``check_query`` directly; the HTTP
side is in test_getdata_runaway.py.
"""

from __future__ import annotations

import pytest

from drivers.postgres.cost_bounded_functions import COST_BOUNDED_FUNCTIONS, SIZE_BOUNDED_BY_ARGUMENTS
from drivers.postgres.plain_arguments import literal_bytes
from drivers.postgres.query_policy import QueryPolicy, resolve_signatures
from drivers.postgres.type_matching import ANY_TYPE, UNKNOWN, UNKNOWN_TEXT
from drivers.postgres.sql_guard import check_query
from gateway.errors import QueryRejected
from support import connect

GRANTED = frozenset({("s", "t"), ("s", "u")})


def refusal(sql: str, policy: QueryPolicy) -> str:
    with pytest.raises(QueryRejected) as caught:
        check_query(sql, GRANTED, policy)
    return caught.value.message


PLAIN_TYPES = [
    "int", "integer", "smallint", "bigint", "numeric(10,2)", "decimal", "real", "double precision", "float8",
    "varchar(20)", "character varying", "char(3)", "text", "name", '"char"', "bytea", "bit(3)", "bit varying(5)",
    "boolean", "date", "time", "time with time zone", "timestamp", "timestamptz", "timestamp(3) with time zone",
    "interval", "interval day", "uuid", "json", "jsonb", "jsonpath", "inet", "cidr", "macaddr", "macaddr8", "money",
    "point", "polygon", "path", "box", "circle", "line", "lseg", "tsvector", "tsquery", "int4range", "daterange",
    "tstzrange", "int4multirange", "nummultirange", "oid", "tid", "xid", "xid8", "cid", "pg_lsn",
    "int[]", "text[][]", "_int4", "jsonb[]", "daterange[]", "pg_catalog.int4", "pg_catalog.text",
]
REFUSED_TYPES = [
    ("pg_catalog.pg_class", "row type of a catalog relation"),
    ("pg_catalog.pg_sequences", "row type of a catalog relation"),
    ("pg_catalog.pg_type[]", "row type of a catalog relation"),
    ("pg_catalog._pg_sequences", "an array of pg_sequences"),
    ("pg_class", "row type of a catalog relation"),
    ("information_schema.tables", "only built-in types"),
    ("regclass", "looks up catalog objects"),
    ("pg_catalog.regtype", "looks up catalog objects"),
    ("regconfig[]", "looks up catalog objects"),
    ("aclitem", "looks up catalog objects"),
    ("_aclitem", "looks up catalog objects"),
    ("pg_node_tree", "internal plumbing"),
    ("int2vector", "internal plumbing"),
    ("oidvector", "internal plumbing"),
    ("txid_snapshot", "internal plumbing"),
    ("pg_snapshot", "internal plumbing"),
    ("refcursor", "internal plumbing"),
    ("gtsvector", "internal plumbing"),
    ("pg_ndistinct", "internal plumbing"),
    ("cstring", "internal plumbing"),
    ("internal", "internal plumbing"),
    ("anyelement", "internal plumbing"),
    ("record", "internal plumbing"),
    ("unknown", "internal plumbing"),
    ("xml", "parses text with libxml2"),
    ("xml[]", "parses text with libxml2"),
    ('"Int4"', "not a built-in data type"),
    ("no_such_type", "not a built-in data type"),
]


class TestTypes:
    @pytest.mark.parametrize("type_name", PLAIN_TYPES)
    def test_plain_data_types_may_be_named(self, type_name: str, policy: QueryPolicy) -> None:
        """Built-in data types and their arrays pass as casts, typed literals and column definitions."""
        check_query(f"select null::{type_name}, cast(null as {type_name})", GRANTED, policy)
        check_query(f"select * from json_to_record('{{}}') as r(a {type_name})", GRANTED, policy)

    @pytest.mark.parametrize(("type_name", "why"), REFUSED_TYPES)
    def test_catalog_and_plumbing_types_are_refused(self, type_name: str, why: str, policy: QueryPolicy) -> None:
        """Row types of catalog relations, reg*/aclitem, internal plumbing, pseudo-types and xml are refused."""
        assert why in refusal(f"select null::{type_name}", policy)
        assert why in refusal(f"select * from jsonb_to_recordset('[]') as r(a {type_name})", policy)

    def test_row_type_field_cannot_list_relations(self, policy: QueryPolicy) -> None:
        """The probe of issue 8: a regtype field of a catalog row type next to an OID names any relation."""
        sql = "select g, coalesce((null::pg_catalog.pg_sequences).data_type, g)::text from generate_series(1, 9) g"
        assert 'type "pg_catalog.pg_sequences" is not allowed' in refusal(sql, policy)

    def test_unreachable_types_are_exactly_lookup_and_plumbing(self, policy: QueryPolicy) -> None:
        """A value in an allowed query can have no reg*, aclitem or plumbing type (the operator analysis relies on it)."""
        unreachable = {policy.catalog.type_name(oid) for oid in set(policy.catalog.types) - policy.reachable
                       if policy.catalog.types[oid].kind != "p" and not policy.catalog.types[oid].relation}
        unreachable = {name.removesuffix("[]") for name in unreachable}
        assert {"aclitem", "regclass", "regtype", "regconfig", "oidvector", "pg_node_tree"} <= unreachable
        assert not unreachable & {"int4", "text", "jsonb", "polygon", "path", "xml", "tid", "xid", "pg_lsn"}


OPERATORS_ALLOWED = [
    "select a = b, a <> b, a < b, a >= b, a || b from s.t",
    "select t.a = u.b from s.t join s.u using (id)",
    "select * from s.t natural join s.u",
    "select point_col <-> point '(1,2)', point '(0,0)' <-> point_col from s.t",
    "select sum(x) - sum(y), price * qty, price / 2, now() - interval '1 day' from s.t",
    "select 'a' = 'b', null = null, 'a' || 'b'",
    "select x = any(array[1, 2]), x in (1, 2, 3), x not in ('a', 'b'), x between 1 and 2, "
    "x between symmetric 2 and 1, x is distinct from y, nullif(x, y) from s.t",
    "select case x when 'a' then 1 when 'b' then 2 end from s.t",
    "select x from s.t order by x using <",
    "select (a, b) = (c, d), (a, b) < (1, 2) from s.t",
    "select * from s.t where (a, b) in (select c, d from s.u)",
    "select * from s.t where a > all (select c from s.u)",
    "select doc @> '{\"k\": 1}', doc <@ '{\"k\": 1, \"j\": 2}', doc ? 'k', doc - 'k', doc #> '{a}' from s.t",
    "select tags && array['a'], tags @> array['a'], array['a'] <@ tags from s.t",
    "select during && tstzrange('2024-01-01', '2024-02-01'), during @> now() from s.t",
    "select to_tsvector('english', body) @@ to_tsquery('english', 'cat & dog') from s.t",
    "select box_col && box '((0,0),(1,1))', circle_col @> point '(1,1)', poly_col @> point '(1,1)' from s.t",
    "select poly_col <-> point '(1,2)', path_col <-> point '(1,2)' from s.t",
    "select -x, @x, |/ x from s.t",
]
OPERATORS_REFUSED = [
    ("select a <-> b from s.t", 'operator "<->" is not allowed here: it could run'),
    ("select a && b from s.t", "poly_overlap(polygon, polygon)"),
    ("select a @> b from s.t", "poly_contain(polygon, polygon)"),
    ("select a <@ b from s.t", "poly_contained(polygon, polygon)"),
    ("select a ~= b from s.t", "poly_same(polygon, polygon)"),
    ("select a ?# b from s.t", "path_inter(path, path)"),
    ("select polygon(box '((0,0),(1,1))') <-> polygon(box '((0,0),(1,1))')",
     "it runs poly_distance(polygon, polygon), which is not allowed"),
    ("select path '[(0,0),(1,1)]' <-> path '[(2,2),(3,3)]'", "it runs path_distance(path, path)"),
    ("select poly_col @> '((0,0),(1,1),(1,0))' from s.t", "poly_contain(polygon, polygon)"),
    ("select a operator(pg_catalog.<->) b from s.t", 'operator "<->" is not allowed here'),
    ("select a <-> any(array[polygon '((0,0),(1,1),(1,0))']) from s.t", "poly_distance(polygon, polygon)"),
    ("select * from s.t where a && any (select b from s.u)", "poly_overlap(polygon, polygon)"),
    ("select case a when b then 1 end, a <-> b from s.t", 'operator "<->" is not allowed here'),
    ("select '{x=r/postgres}' @> 'x=r/postgres'", "aclcontains(aclitem[], aclitem)"),
    ("select poly_col @> '((0x10,0),(1,1),(1,0))' from s.t", "poly_contain(polygon, polygon)"),
]


class TestOperators:
    @pytest.mark.parametrize("sql", OPERATORS_ALLOWED)
    def test_operator_with_no_refused_implementation_passes(self, sql: str, policy: QueryPolicy) -> None:
        """Comparisons, arithmetic, containment with a literal, typed geometry: no refused implementation possible."""
        check_query(sql, GRANTED, policy)

    @pytest.mark.parametrize(("sql", "fragment"), OPERATORS_REFUSED)
    def test_operator_that_could_run_a_refused_function_is_refused(
        self, sql: str, fragment: str, policy: QueryPolicy
    ) -> None:
        """An operator is refused when PostgreSQL could pick an implementation whose function is refused."""
        assert fragment in refusal(sql, policy)

    def test_untyped_operands_get_a_hint_to_cast(self, policy: QueryPolicy) -> None:
        """When the operands' types are unknown, the message says to cast one; the cast then passes."""
        assert "cast an operand to the type you mean (for example ::" in refusal("select a <-> b from s.t", policy)
        check_query("select a <-> b::point from s.t", GRANTED, policy)
        check_query("select a::int[] && b from s.t", GRANTED, policy)

    def test_possible_implementations_are_narrowed_by_operand_types(self, policy: QueryPolicy) -> None:
        """The analysis excludes what PostgreSQL cannot pick, never what it could."""
        catalog = policy.catalog
        point, polygon, text = (frozenset({catalog.type_oids[n]}) for n in ("point", "polygon", "text"))

        def names(operator: str, *operands: frozenset[int]) -> set[str]:
            return {catalog.functions[o.function].name for o in policy.possible_operators(operator, operands)}

        assert "poly_distance" not in names("<->", ANY_TYPE, point)
        assert "poly_distance" in names("<->", ANY_TYPE, ANY_TYPE)
        assert names("<->", polygon, polygon) == {"poly_distance"}
        assert "poly_contain" not in names("@>", ANY_TYPE, frozenset({UNKNOWN_TEXT}))
        assert "poly_contain" in names("@>", ANY_TYPE, frozenset({UNKNOWN}))
        assert names("~~", text, text) == {"textlike"}
        assert "aclitemeq" not in names("=", ANY_TYPE, ANY_TYPE)
        assert names("=", frozenset({UNKNOWN_TEXT}), frozenset({UNKNOWN_TEXT})) <= {"texteq", "bpchareq", "nameeq",
                                                                                    "nameeqtext", "texteqname"}


COSTS_ALLOWED = [
    "select * from s.t where name like '%STEEL'",
    "select * from s.t where lower(name) like '%x%' and name ilike 'a%' and name not like 'b%' escape '!'",
    "select replace(col, 'a', 'b'), strpos(col, 'x'), position('x' in col), split_part(col, ',', 2) from s.t",
    "select ltrim(col, 'xy'), btrim(col), trim(both 'x' from col), translate(col, 'ab', 'cd') from s.t",
    "select normalize(col), col is nfc normalized, to_tsquery('english', 'a & b') from s.t",
    "select doc @> '{\"k\": 1}', tags @> array['x', 'y'], doc ?| array['a'], doc - array['a'] from s.t",
    "select jsonb_delete(doc, 'a', 'b'), doc::jsonb ?& '{a,b}' from s.t",
    "select t.name like '%' || u.code || '%' from s.t, s.u",
    "select coalesce(name, '') like '%x%', upper(substr(name, 1, 3)) like 'AB%' from s.t",
    "select name like case when flag then 'a%' else 'b%' end from s.t",
    "select tags[1] like 'a%', (rec).field like 'a%' from s.t",
    "select strpos(col, 'x') from s.t where length(repeat(col, 1000)) > 0",
    "select ltrim(col, length(repeat('a', 100000))::text) from s.t",
    "select c_count from (select t.id, count(*) from s.t left join s.u on t.id = u.id and code not like '%x%' "
    "group by t.id) as c (id, c_count)",
    "select (select count(*) from s.u where u.code like t.name) from s.t",
    "with w as (select * from s.t where name like 'x%') select * from w",
    "select * from s.t, lateral (select * from s.u where u.code like t.name) l",
    "select col::int4multirange, '{[1,2)}'::int4multirange, '1e3'::numeric from s.t",
    "select int4multirange(t.col), int4multirange(int4range(1, 2)), int4multirange('{[1,2)}') from s.t t",
    "select doc @> jsonb_build_object('id', t.id), tags && string_to_array('a,b', ',') from s.t t",
    "select ts_rank(to_tsvector('english', body), to_tsquery('english', 'cat')), "
    "ts_rank('{0.1,0.2,0.4,1}', to_tsvector(body), plainto_tsquery('cat dog')) from s.t",
    "select to_timestamp(col, 'YYYY-MM-DD'), to_date(col, 'YYYY'), array_replace(tags, 'a', 'b') from s.t",
    "select col similar to '%(b|d)%', col !~ lower(col) from s.t",
]
COSTS_REFUSED = [
    ("select ltrim(repeat('a', 128000), repeat('b', 128000) || 'a')", "argument 1"),
    ("select ltrim(col, string_agg(name, '')) from s.t group by col", "string_agg() computes a value"),
    ("select strpos(col, lpad('x', 100000, 'y')) from s.t", "lpad() computes a value"),
    ("select col like (select max(name) from s.u) from s.t", "a sub-select computes a value"),
    ("select t.name like x.p from s.t, (select '%' as p) x", "column x.p may not be a stored column"),
    ("with x as (select repeat('a', 100000) p) select t.name like x.p from s.t, x",
     "column x.p may not be a stored column"),
    ("select t.name like v.p from s.t, (values ('a')) v(p)", "column v.p may not be a stored column"),
    ("select t.name like g from s.t, generate_series(1, 3) g", "column g may not be a stored column"),
    ("select name like p from s.t, (select 'x' as p) x", "may not be a stored column"),
    ("select x.name like 'a%' from (select name from s.t) x", "column x.name may not be a stored column"),
    ("select name like 'a' from s.t, (select 1) x", "column name may not be a stored column"),
    ("select t.name like t.name || u.code from s.t, s.u", "it combines 2 columns"),
    ("select array[t.a, t.b]::text[] && tags from s.t", "it combines 2 columns"),
    ("select name like '" + "x" * 1025 + "' from s.t", "1025 bytes of literal text"),
    ("select name like 'x'::char(5000) from s.t", "bytes of literal text"),
    ("select strpos(col, 1e5000::text) from s.t", "bytes of literal text"),
    ("select strpos(col, (select string_agg(code, '') from s.u)) from s.t", "a sub-select"),
    ("select (string_agg(col, ''))::int4multirange from s.t", "a cast to int4multirange is not allowed here"),
    ("select int4multirange(string_agg(col, '')) from s.t", "a cast to int4multirange is not allowed here"),
    ("select doc @> jsonb_build_object('a', t.a, 'b', t.b) from s.t t", "it combines 2 columns"),
    ("select to_tsquery(string_agg(col, ' & ')) from s.t", 'function "to_tsquery" is not allowed here'),
    ("select (repeat('a & ', 100000) || 'a')::tsquery", "a cast to tsquery is not allowed here"),
    ("select jsonb_delete(doc, variadic array_agg(col)) from s.t group by doc", 'function "jsonb_delete"'),
    ("select jsonb_delete(doc, 'a', repeat('b', 100000)) from s.t", "arguments 2 and after"),
    ("select doc - (select array_agg(code) from s.u) from s.t", 'operator "-" (could run jsonb_delete)'),
    ("select normalize(repeat(U&'\\0301', 100000)) from s.t", 'function "normalize" is not allowed here'),
    ("select ts_rank(to_tsvector('simple', (select string_agg(code, ' ') from s.u)), 'a'::tsquery)",
     'function "ts_rank" is not allowed here'),
    ("select to_timestamp(repeat('2020', 65536), repeat('YYYY', 65536))", 'function "to_timestamp"'),
    ("select to_date(col, repeat('YYYY', 100)) from s.t", 'function "to_date"'),
    ("select unistr(repeat('\\0041', 100))", 'function "unistr" is not allowed here'),
    ("select array_replace(array_agg(id), 1, 2) from s.t", 'function "array_replace" is not allowed here'),
    ("select x.a && x.b from (select array_agg(id) a, array_agg(id) b from s.t) x", 'operator "&&"'),
    ("select a::int[] && b::int[] from (select array_agg(id) a, array_agg(id) b from s.t) x", "arrayoverlap"),
]


class TestCostBoundedArguments:
    @pytest.mark.parametrize("sql", COSTS_ALLOWED)
    def test_bounded_arguments_pass(self, sql: str, policy: QueryPolicy) -> None:
        """Literals, one column of a table, size-bounded functions of those and fixed-length values pass."""
        check_query(sql, GRANTED, policy)

    @pytest.mark.parametrize(("sql", "fragment"), COSTS_REFUSED)
    def test_computed_arguments_are_refused(self, sql: str, fragment: str, policy: QueryPolicy) -> None:
        """A cost-driving argument computed in the query (or of a sub-select, CTE, VALUES, function) is refused."""
        assert fragment in refusal(sql, policy)

    def test_message_says_why_and_how_to_fix(self, policy: QueryPolicy) -> None:
        """The refusal names the function, says PostgreSQL cannot interrupt it and how to write the argument."""
        message = refusal("select ltrim(col, repeat('b', 10)) from s.t", policy)
        assert message == (
            'function "ltrim" is not allowed here: PostgreSQL cannot interrupt ltrim while it runs and its time '
            "grows with the product of its inputs' sizes; write argument 2 as a literal of at most 1024 bytes "
            "or a column of a granted table (repeat() computes a value in the query)"
        )
        assert "its time grows faster than its input's size" in refusal(
            "select normalize(repeat(col, 2)) from s.t", policy)

    def test_literal_size_counts_exponents(self) -> None:
        """A number's exponent counts as the digits it stands for."""
        assert literal_bytes("abc") == 3
        assert literal_bytes("é") == 2
        assert literal_bytes("1e5000") == 5006
        assert literal_bytes("2.5E+10") == 17

    def test_every_table_entry_names_a_function_of_the_catalog(self, policy: QueryPolicy) -> None:
        """Each key of the cost and size tables resolves to at least one overload of the live catalog."""
        for table in (COST_BOUNDED_FUNCTIONS, SIZE_BOUNDED_BY_ARGUMENTS):
            missing = [key for key in table if not resolve_signatures(policy.catalog, {key: (0,)})]
            assert missing == []

    def test_every_concatenation_is_size_bounded(self, policy: QueryPolicy) -> None:
        """Every implementation of || adds its operands' sizes, as the plain-argument rule assumes."""
        implementations = policy.catalog.operators[("||", 2)]
        assert all(operator.function in policy.size_bounded for operator in implementations)

    def test_casts_to_nameable_types_use_allowed_functions(self, policy: QueryPolicy) -> None:
        """A cast to a type a query may name never runs a function the policy refuses."""
        connection = connect()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT casttarget::oid, castfunc::oid FROM pg_catalog.pg_cast WHERE castfunc <> 0")
                rows = cursor.fetchall()
        finally:
            connection.close()
        refused = {policy.catalog.functions[function].name for target, function in rows
                   if target in policy.nameable and not policy.functions.allows(policy.catalog.functions[function].name)}
        assert refused == set()


class TestTextSearchConfigurations:
    @pytest.mark.parametrize("sql", [
        "select to_tsvector('english', body), to_tsquery('simple', 'a'), ts_lexize('english_stem', 'cats') from s.t",
        "select to_tsvector(body), to_tsvector(null, body), websearch_to_tsquery('english', q) from s.t",
        "select ts_headline('english', body, to_tsquery('english', 'a'), 'MaxWords=10') from s.t",
    ])
    def test_bare_names_pass(self, sql: str, policy: QueryPolicy) -> None:
        """A built-in configuration by its bare name (or the session default) passes."""
        check_query(sql, GRANTED, policy)

    @pytest.mark.parametrize("sql", [
        "select to_tsvector('public.english', body) from s.t",
        "select to_tsvector('\"English\"', body) from s.t",
        "select to_tsvector('12345', body) from s.t",
        "select to_tsvector(12345, body) from s.t",
        "select to_tsvector(cfg, body) from s.t",
        "select ts_lexize('public.dict', 'x')",
        "select to_tsvector(body, config => 'public.english') from s.t",
    ])
    def test_anything_else_is_refused(self, sql: str, policy: QueryPolicy) -> None:
        """A qualified name, a number, a computed value or a named argument could look other schemas or OIDs up."""
        assert "text search configuration" in refusal(sql, policy)


class TestXml:
    @pytest.mark.parametrize(("sql", "construct"), [
        ("select * from xmltable('/a' passing xmlelement(name a) columns a int)", "XMLTABLE"),
        ("select xmlparse(document '<a/>')", "XMLPARSE"),
        ("select xmlelement(name a) is document", "IS DOCUMENT"),
        ("select xmlserialize(document xmlelement(name a) as text)", "XMLSERIALIZE(DOCUMENT"),
        ("select xpath('/a', xmlelement(name a))", 'function "xpath"'),
        ("select xmlexists('/a' passing by ref xmlelement(name a))", 'function "xmlexists"'),
        ("select xml_is_well_formed('<a/>')", 'function "xml_is_well_formed"'),
        ("select '<a/>'::xml", 'type "xml"'),
    ])
    def test_parsing_xml_is_refused(self, sql: str, construct: str, policy: QueryPolicy) -> None:
        """XML that PostgreSQL would parse with libxml2 is refused."""
        assert construct in refusal(sql, policy)

    def test_building_xml_passes(self, policy: QueryPolicy) -> None:
        """xmlelement, xmlforest, xmlconcat, xmlagg, xmlcomment, xmlroot and XMLSERIALIZE(CONTENT) parse nothing."""
        check_query(
            "select xmlelement(name a, xmlattributes(id as i), name), xmlforest(id, name), "
            "xmlconcat(xmlcomment('c'), xmlpi(name p)), xmlagg(xmlelement(name b, name)), "
            "xmlroot(xmlelement(name a), version '1.0'), xmlserialize(content xmlelement(name a) as text) from s.t",
            GRANTED, policy,
        )
