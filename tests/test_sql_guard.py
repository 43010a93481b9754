"""The SQL guard and function policy: GetData runs one read-only SELECT over granted tables, nothing else.

Query-level tests build the policy from the live pg_catalog of the local
PostgreSQL (one read, as a pool does); the policy's rules are also tested on
a few hand-written catalog rows.
"""

from __future__ import annotations


import orjson
import pytest
from pglast import parser

from drivers.postgres.guard.model.catalog import Catalog as CatalogSnapshot
from drivers.postgres.guard.rules.function_policy import FunctionPolicy
from drivers.postgres.guard.policy import GuardPolicy as QueryPolicy
from drivers.postgres.guard.sql_guard import check_query, display_name, parse_query
from gateway.errors import QueryFailed, QueryRejected

GRANTED = frozenset({
    ("sales", "orders"),
    ("sales", "customers"),
    ("Sales", "Order Lines"),
    ("public", "items"),
    ("hr", "employees"),
})

@pytest.fixture(scope="module")
def live_catalog(policy: QueryPolicy) -> CatalogSnapshot:
    """The guard test database's catalog, as the ``policy`` fixture read it."""
    return policy.catalog


HOSTILE_QUERIES = [
    # More than one statement, or not a SELECT.
    ("select 1; select 2", "only one SELECT statement is allowed"),
    ("select * from sales.orders; drop table sales.orders", "only one SELECT statement is allowed"),
    ("select 1 --\n; select pg_sleep(10)", "only one SELECT statement is allowed"),
    ("select * from sales.orders /* ; */ ; delete from sales.orders", "only one SELECT statement is allowed"),
    ("insert into sales.orders values (1)", "found INSERT"),
    ("update sales.orders set id = 1", "found UPDATE"),
    ("delete from sales.orders", "found DELETE"),
    ("merge into sales.orders o using sales.customers c on true when matched then delete", "found MERGE"),
    ("explain select * from sales.orders", "found EXPLAIN"),
    ("explain analyze delete from sales.orders", "found EXPLAIN"),
    ("copy sales.orders to stdout", "found COPY"),
    ("copy (select 1) to '/tmp/stolen'", "found COPY"),
    ("set search_path = public", "found SET"),
    ("begin", "transaction control"),
    ("declare c cursor for select * from sales.orders", "DECLARE CURSOR"),
    ("create table sales.copy as select * from sales.orders", "CREATE TABLE AS"),
    ("do $$ begin perform 1; end $$", "found DO"),
    ("notify channel, 'x'", "found NOTIFY"),
    ("lock table sales.orders", "found LOCK"),
    ("call sales.proc()", "found CALL"),
    ("", "the query is empty"),
    ("  -- only a comment\n", "the query is empty"),
    ("select * from sales.orders where", "syntax error at end of input"),
    ("select 'unterminated", "unterminated quoted string"),
    ("select 1\x00; drop table sales.orders", "NUL character"),
    # Statements hidden inside a SELECT.
    ("select * into sales.stolen from sales.orders", "SELECT ... INTO is not allowed"),
    ("select 1 into temp t", "SELECT ... INTO is not allowed"),
    ("select * from sales.orders for update", "locking clause FOR UPDATE is not allowed"),
    ("select * from sales.orders for no key update", "locking clause FOR NO KEY UPDATE is not allowed"),
    ("select * from sales.orders for share", "locking clause FOR SHARE is not allowed"),
    ("select * from sales.orders for key share skip locked", "locking clause FOR KEY SHARE is not allowed"),
    ("select * from (select * from sales.orders for update) o", "locking clause FOR UPDATE"),
    ("with o as (select * from sales.orders for update) select * from o", "locking clause FOR UPDATE"),
    ("with d as (delete from sales.orders returning *) select * from d", "data-modifying statement in WITH"),
    ("with i as (insert into sales.orders values (1) returning *) select 1", "data-modifying statement in WITH"),
    ("with u as (update sales.orders set id = 2 returning id) select * from u", "data-modifying statement in WITH"),
    ("select * from (with d as (delete from sales.orders returning *) select * from d) x",
     "data-modifying statement in WITH"),
    ("values (default)", "DEFAULT is not allowed"),
    ("select * from sales.orders tablesample system (10)", "TABLESAMPLE is not allowed"),
    ("select $1", "$1 has no value"),
    ("select * from sales.orders where id = $2", "$2 has no value"),
    # Relations: unqualified, system catalogs, other schemas, shadowing, scoping.
    ("select * from orders", 'table "orders" is not schema-qualified'),
    ("select * from pg_authid", 'table "pg_authid" is not schema-qualified'),
    ('select * from "sales.orders"', 'table "sales.orders" is not schema-qualified'),
    ("select * from pg_catalog.pg_authid", 'table "pg_catalog.pg_authid" is not granted to this token'),
    ("select * from pg_catalog.pg_stat_activity", 'table "pg_catalog.pg_stat_activity" is not granted'),
    ("select * from information_schema.tables", 'table "information_schema.tables" is not granted'),
    ("select * from sales.secrets", 'table "sales.secrets" is not granted to this token'),
    ('select * from "SALES"."ORDERS"', 'table "SALES"."ORDERS" is not granted to this token'),
    ('select * from "sales"."Orders"', 'table "sales"."Orders" is not granted to this token'),
    ("select * from postgres.sales.orders", "cross-database references are not allowed"),
    ("table pg_authid", 'table "pg_authid" is not schema-qualified'),
    ("table pg_catalog.pg_shadow", 'table "pg_catalog.pg_shadow" is not granted'),
    ("select * from only pg_catalog.pg_class", 'table "pg_catalog.pg_class" is not granted'),
    ("with secrets as (select 1) select * from sales.secrets", 'table "sales.secrets" is not granted'),
    ("with x as (select * from pg_authid) select * from x", 'table "pg_authid" is not schema-qualified'),
    ("with pg_authid as (select * from pg_authid) select * from pg_authid",
     'table "pg_authid" is not schema-qualified'),
    ("with a as (select * from b), b as (select 1) select * from a", 'table "b" is not schema-qualified'),
    ("select * from (with x as (select 1) select * from x) inner_q, x", 'table "x" is not schema-qualified'),
    ("(with x as (select 1) select * from x) union all select * from x", 'table "x" is not schema-qualified'),
    ("select * from sales.orders where id in (select usesysid from pg_catalog.pg_user)",
     'table "pg_catalog.pg_user" is not granted'),
    ("select (select rolpassword from pg_catalog.pg_authid limit 1)", 'table "pg_catalog.pg_authid" is not granted'),
    ("select * from sales.orders o, lateral (select * from pg_catalog.pg_roles) r",
     'table "pg_catalog.pg_roles" is not granted'),
    ("select count(*) filter (where exists (select from pg_catalog.pg_authid)) from sales.orders",
     'table "pg_catalog.pg_authid" is not granted'),
    ("select row_number() over (order by (select 1 from pg_catalog.pg_class limit 1)) from sales.orders",
     'table "pg_catalog.pg_class" is not granted'),
    ("select * from sales.orders order by (select count(*) from pg_catalog.pg_class)",
     'table "pg_catalog.pg_class" is not granted'),
    ("select * from sales.orders limit (select count(*) from pg_catalog.pg_class)",
     'table "pg_catalog.pg_class" is not granted'),
    ("select id from sales.orders group by id having exists (select from pg_catalog.pg_proc)",
     'table "pg_catalog.pg_proc" is not granted'),
    ("values ((select relname from pg_catalog.pg_class limit 1))", 'table "pg_catalog.pg_class" is not granted'),
    ("select * from rows from (generate_series(1, (select count(*) from pg_catalog.pg_class)::int))",
     'table "pg_catalog.pg_class" is not granted'),
    ("select * from jsonb_to_record((select '{}'::jsonb from pg_catalog.pg_class limit 1)) as r(a int)",
     'table "pg_catalog.pg_class" is not granted'),
    ("select jsonb_agg(x order by (select 1 from hr.salaries)) from sales.orders x",
     'table "hr.salaries" is not granted'),
    ("select * from sales.orders join hr.salaries using (id)", 'table "hr.salaries" is not granted'),
    # Functions: SQL text, files, other servers, settings, identity, side effects.
    ("select pg_read_file('/etc/passwd')", 'function "pg_read_file" is not allowed'),
    ("select pg_catalog.pg_read_file('/etc/passwd')", 'function "pg_read_file" is not allowed'),
    ("select pg_read_file(filename => '/etc/passwd')", 'function "pg_read_file" is not allowed'),
    ('select "pg_read_file"(\'/etc/passwd\')', 'function "pg_read_file" is not allowed'),
    ('select U&"pg\\005fread\\005ffile"(\'/etc/passwd\')', 'function "pg_read_file" is not allowed'),
    ('select "PG_READ_FILE"(\'/etc/passwd\')', 'function "PG_READ_FILE" is not allowed'),
    ("select * from pg_ls_dir('.')", 'function "pg_ls_dir" is not allowed'),
    ("select query_to_xml('select * from pg_authid', true, true, '')", 'function "query_to_xml" is not allowed'),
    ("select * from ts_stat('select to_tsvector(rolname) from pg_authid')", 'function "ts_stat" is not allowed'),
    ("select current_setting('data_directory')", 'function "current_setting" is not allowed'),
    ("select set_config('search_path', 'public', false)", 'function "set_config" is not allowed'),
    ("select nextval('sales.order_seq')", 'function "nextval" is not allowed'),
    ("select setval('sales.order_seq', 1)", 'function "setval" is not allowed'),
    ("select pg_sleep(60)", 'function "pg_sleep" is not allowed'),
    ("select pg_advisory_lock(1)", 'function "pg_advisory_lock" is not allowed'),
    ("select lo_import('/etc/passwd')", 'function "lo_import" is not allowed'),
    ("select dblink('host=evil', 'select 1')", 'function "dblink" is not allowed'),
    ("select version()", 'function "version" is not allowed'),
    ("select inet_server_addr()", 'function "inet_server_addr" is not allowed'),
    ("select pg_backend_pid()", 'function "pg_backend_pid" is not allowed'),
    ("select has_table_privilege('sales.secrets', 'select')", 'function "has_table_privilege" is not allowed'),
    ("select txid_current()", 'function "txid_current" is not allowed'),
    ("select obj_description(1)", 'function "obj_description" is not allowed'),
    ("select to_regclass('pg_authid')", 'function "to_regclass" is not allowed'),
    ("select count(*) filter (where pg_sleep(1) is null) from sales.orders", 'function "pg_sleep" is not allowed'),
    ("select sum(id) over (partition by pg_backend_pid()) from sales.orders", 'function "pg_backend_pid"'),
    ("select public.evil()", 'function "public.evil" is not allowed: only built-in functions'),
    ("select postgres.pg_catalog.lower('a')", 'function "postgres.pg_catalog.lower" is not allowed'),
    ("select * from public.evil_srf()", 'function "public.evil_srf" is not allowed'),
    # PostgreSQL's functional notation: a.f and (expr).f call f(a) when there is no column f.
    ("select ('/etc/passwd'::text).pg_read_file", 'function "pg_read_file" is not allowed'),
    ("select ('data_directory'::text).current_setting", 'function "current_setting" is not allowed'),
    ("select ('pg_authid'::text).regclass", "its type regclass looks catalog objects up"),
    ("select ('pg_catalog'::text).regnamespace", "its type regnamespace looks catalog objects up"),
    # SQL value functions that name the account or settings.
    ("select current_user", "CURRENT_USER is not allowed"),
    ("select session_user", "SESSION_USER is not allowed"),
    ("select user", "USER is not allowed"),
    ("select current_role", "CURRENT_ROLE is not allowed"),
    ("select current_catalog", "CURRENT_CATALOG is not allowed"),
    ("select current_schema", "CURRENT_SCHEMA is not allowed"),
    # Types, casts, operators and collations outside pg_catalog, and catalog lookups by name.
    ("select 'pg_authid'::regclass", 'type "regclass" is not allowed'),
    ("select 'pg_authid'::pg_catalog.regclass::oid", 'type "regclass" is not allowed'),
    ("select cast('pg_catalog' as regnamespace)", 'type "regnamespace" is not allowed'),
    ("select 'postgres'::regrole", 'type "regrole" is not allowed'),
    ("select 'now'::regproc", 'type "regproc" is not allowed'),
    ("select 10::oid::regtype", 'type "regtype" is not allowed'),
    ("select '{pg_authid}'::regclass[]", 'type "regclass" is not allowed'),
    ("select '{pg_authid}'::_regclass", 'type "_regclass" is not allowed'),
    ("select to_tsvector('english'::regconfig, 'a')", 'type "regconfig" is not allowed'),
    ("select regclass 'pg_authid'", 'type "regclass" is not allowed'),
    ("select 'postgres=r/postgres'::aclitem", 'type "aclitem" is not allowed'),
    ("select 1::public.mytype", 'type "public.mytype" is not allowed'),
    ("select null::sales.orders", 'type "sales.orders" is not allowed'),
    ("select 'x'::information_schema.sql_identifier", 'type "information_schema.sql_identifier"'),
    ("select * from json_to_record('{}') as r(a public.mytype)", 'type "public.mytype" is not allowed'),
    ("select * from json_to_record('{}') as r(a regclass)", 'type "regclass" is not allowed'),
    ("select 1 operator(public.+) 1", 'operator "public.+" is not allowed'),
    ("select 1 where 1 operator(public.=) any(array[1])", 'operator "public.=" is not allowed'),
    ("select 1 where 1 operator(public.=) any(select 1)", 'operator "public.=" is not allowed'),
    ("select * from sales.orders order by id using operator(public.<)", 'operator "public.<" is not allowed'),
    ("select 'a' collate public.evil", 'collation "public.evil" is not allowed'),
    # Nesting deeper than anything a person writes must not crash the guard.
    ("select " + "(select " * 1000 + "1" + ")" * 1000, "nested too deeply"),
]


@pytest.mark.parametrize(("sql", "fragment"), HOSTILE_QUERIES)
def test_hostile_query_is_rejected(sql: str, fragment: str, policy: QueryPolicy) -> None:
    """Every hostile query is refused, and the message says what and why."""
    with pytest.raises(QueryRejected) as caught:
        check_query(sql, GRANTED, policy)
    assert fragment in caught.value.message
    assert caught.value.status == 400 and caught.value.code == "query_rejected"


DATABASE_ERRORS = [
    ("select o.nextval from sales.orders o", "column o.nextval does not exist"),
    ("select sales.orders.currval from sales.orders", "column orders.currval does not exist"),
    ("select nope from sales.orders", 'column "nope" does not exist'),
    ("select lower(1, 2, 3) from sales.orders", "function lower(integer, integer, integer) does not exist"),
]


@pytest.mark.parametrize(("sql", "fragment"), DATABASE_ERRORS)
def test_what_the_database_would_refuse_is_its_error(sql: str, fragment: str, policy: QueryPolicy) -> None:
    """A query PostgreSQL's own analysis refuses never reaches it: the guard answers the database's error,
    400 query_failed, in PostgreSQL's words."""
    with pytest.raises(QueryFailed) as caught:
        check_query(sql, GRANTED, policy)
    assert fragment in caught.value.message
    assert caught.value.status == 400 and caught.value.code == "query_failed"


LEGITIMATE_QUERIES = [
    ("select * from sales.orders", {("sales", "orders")}),
    ("SELECT * FROM Sales.Orders", {("sales", "orders")}),
    ('select "Qty" from "Sales"."Order Lines" as "L"', {("Sales", "Order Lines")}),
    ("select o.id, c.name from sales.orders o join sales.customers c on c.id = o.customer_id",
     {("sales", "orders"), ("sales", "customers")}),
    ("select * from sales.orders o left join public.items i on i.order_id = o.id "
     "full join hr.employees e on e.id = o.clerk_id cross join sales.customers",
     {("sales", "orders"), ("public", "items"), ("hr", "employees"), ("sales", "customers")}),
    ("select * from sales.orders natural join sales.customers", {("sales", "orders"), ("sales", "customers")}),
    ("select * from sales.orders join sales.customers using (customer_id) as j",
     {("sales", "orders"), ("sales", "customers")}),
    ("with recent as (select * from sales.orders where created > now() - interval '1 day') "
     "select count(*) from recent", {("sales", "orders")}),
    ("with orders as (select * from sales.orders) select * from orders", {("sales", "orders")}),
    ("with a as (select 1 as x), b as (select x from a) select * from b join sales.orders o on o.id = b.x",
     {("sales", "orders")}),
    ("with recursive r(n) as (select 1 union all select n + 1 from r where n < 10) select * from r", set()),
    ("with recursive chain as (select id, manager_id from hr.employees where id = 1 "
     "union all select e.id, e.manager_id from hr.employees e join chain c on e.id = c.manager_id) "
     "select * from chain", {("hr", "employees")}),
    ("with recursive r(n) as (select 1 union all select n + 1 from r where n < 3) "
     "search depth first by n set ord cycle n set is_cycle using path select * from r", set()),
    ("select id from sales.orders union select id from sales.customers "
     "intersect select id from hr.employees except select 1",
     {("sales", "orders"), ("sales", "customers"), ("hr", "employees")}),
    ("select * from sales.orders o, lateral (select * from public.items i where i.order_id = o.id limit 3) i",
     {("sales", "orders"), ("public", "items")}),
    ("select o.id, e.value from sales.orders o cross join lateral jsonb_array_elements(o.items) e",
     {("sales", "orders")}),
    ("select id, row_number() over (partition by customer_id order by created), lag(total) over w "
     "from sales.orders window w as (order by created rows between 1 preceding and current row)",
     {("sales", "orders")}),
    ("select count(*) filter (where status = 'paid'), sum(total) filter (where total > 0), avg(total) "
     "from sales.orders", {("sales", "orders")}),
    ("select customer_id, status, sum(total) from sales.orders "
     "group by grouping sets ((customer_id), (status), ()) having sum(total) > 10", {("sales", "orders")}),
    ("select customer_id, status from sales.orders group by rollup (customer_id), cube (status)",
     {("sales", "orders")}),
    ("values (1, 'a'), (2, 'b') order by 1", set()),
    ("select * from (values (1), (2)) v(x) join sales.orders o on o.id = v.x", {("sales", "orders")}),
    ("select distinct on (customer_id) * from sales.orders order by customer_id, created desc "
     "limit 10 offset 5", {("sales", "orders")}),
    ("select * from sales.orders order by id fetch first 3 rows with ties", {("sales", "orders")}),
    ("select case when total > 100 then 'big' else 'small' end, coalesce(note, ''), nullif(status, ''), "
     "greatest(a, b), least(a, b), (1, 2) from sales.orders", {("sales", "orders")}),
    ("select tags[1], tags[1:2], id = any(array[1, 2]), id > all('{1,2}'::int[]), id in (1, 2), "
     "id between 1 and 9, note like 'a%', note ilike 'a%', note similar to 'a%', note is not distinct from 'x', "
     "exists (select 1 from sales.customers c where c.id = o.customer_id) from sales.orders o",
     {("sales", "orders"), ("sales", "customers")}),
    ("select id::text, total::numeric(10, 2), created::date, '2024-01-01'::timestamptz, cast(id as bigint), "
     "interval '1 day', date '2024-01-01', 'a'::varchar(3), '{}'::jsonb from sales.orders", {("sales", "orders")}),
    ("select (o.address).city, (o.address).* from sales.orders o", {("sales", "orders")}),
    ("table sales.orders", {("sales", "orders")}),
    ("select * from only sales.orders", {("sales", "orders")}),
    ("select pg_catalog.lower(name), upper(name) operator(pg_catalog.||) 'x' from sales.customers",
     {("sales", "customers")}),
    ("select jsonb_build_object('id', id, 'total', total) from sales.orders", {("sales", "orders")}),
    ("select * from rows from (generate_series(1, 3), unnest(array['a', 'b'])) with ordinality as t(n, s, i)",
     set()),
    ("select * from json_to_record('{\"a\": 1}') as r(a int, b text collate \"C\")", set()),
    ("select current_date, current_timestamp(0), localtime, localtimestamp", set()),
    ("select string_agg(name, ',' order by name), percentile_cont(0.5) within group (order by total) "
     "from sales.customers", {("sales", "customers")}),
    ("select extract(year from created), created at time zone 'UTC', substring(note from 1 for 3), "
     "trim(both ' ' from note), date_trunc('day', created), to_char(created, 'YYYY') from sales.orders",
     {("sales", "orders")}),
    ("select format('%s-%s', id, total) from sales.orders", {("sales", "orders")}),
    ("select o.version, o.name from sales.orders o", {("sales", "orders")}),
    ("select * from sales.orders where note collate \"C\" < 'b' collate pg_catalog.\"default\"",
     {("sales", "orders")}),
    ("select * from sales.orders; -- trailing comment", {("sales", "orders")}),
]


@pytest.mark.parametrize(("sql", "relations"), LEGITIMATE_QUERIES)
def test_legitimate_query_passes_with_its_relations(sql: str, relations: set, policy: QueryPolicy) -> None:
    """A legitimate read-only query passes and reports exactly the relations it reads."""
    parsed = check_query(sql, GRANTED, policy)
    assert parsed.relations == relations


class TestParsedQuery:
    def test_statement_text_is_trimmed_for_a_cursor(self) -> None:
        """The text loses surrounding whitespace, leading comments and the trailing ';'."""
        parsed = parse_query("  -- why\n select 1 ;  -- done\n")
        assert parsed.sql == "select 1"

    def test_text_embeds_as_one_cursor_declaration(self) -> None:
        """``DECLARE ... FOR`` + sql + newline is one statement, even when sql ends in a line comment."""
        for sql in ("select * from sales.orders -- note", "select 'é' /* ; */", "table sales.orders;"):
            text = parse_query(sql).sql
            statements = orjson.loads(parser.parse_sql_json("DECLARE c NO SCROLL CURSOR FOR " + text + "\n"))
            assert [list(s["stmt"]) for s in statements["stmts"]] == [["DeclareCursorStmt"]]

    def test_functions_are_reported_without_schema(self) -> None:
        """Called functions are listed by bare name; syntax-only forms (coalesce, greatest) are not functions."""
        parsed = parse_query("select pg_catalog.lower(a), count(*), coalesce(a, b), greatest(1, 2) from s.t")
        assert parsed.functions == {"lower", "count"}

    def test_parse_is_cached(self) -> None:
        """A repeated query text is parsed once."""
        sql = "select id from sales.orders where id = 424242"
        parse_query(sql)
        hits = parse_query.cache_info().hits
        assert parse_query(sql) is parse_query(sql)
        assert parse_query.cache_info().hits == hits + 2

    def test_check_on_a_cached_parse_is_cheap(self, policy: QueryPolicy) -> None:
        """check_query on a text checked before reuses that decision (the same object): only the grant check, set
        operations, runs again, never the parse and analysis."""
        sql = "select o.id, lower(c.name), count(*) from sales.orders o join sales.customers c using (id) group by 1, 2"
        first = check_query(sql, GRANTED, policy)
        assert all(check_query(sql, GRANTED, policy) is first for _ in range(100))


class TestMessages:
    def test_names_are_quoted_as_postgresql_needs(self) -> None:
        """Simple names read as "schema.table"; a name with capitals, spaces or dots quotes each part."""
        assert display_name("sales", "orders") == '"sales.orders"'
        assert display_name("Sales", "Order Lines") == '"Sales"."Order Lines"'
        assert display_name("sales", "a.b") == '"sales"."a.b"'
        assert display_name('we"ird') == '"we""ird"'

    def test_ungranted_quoted_table_is_named_unambiguously(self, policy: QueryPolicy) -> None:
        """The message for a mixed-case table shows the exact identifiers."""
        with pytest.raises(QueryRejected, match=r'table "Sales"\."Secret Lines" is not granted to this token'):
            check_query('select * from "Sales"."Secret Lines"', GRANTED, policy)

    def test_syntax_error_carries_pglast_message_and_position(self) -> None:
        """A parse error is a QueryRejected with PostgreSQL's wording and the character position."""
        with pytest.raises(QueryRejected, match=r'syntax error at or near "form" \(at character 10\)'):
            parse_query("select * form sales.orders")


# Hand-written pg_type rows: oid, typname, typtype, typrelid, typelem, typarray, typlen, typcategory,
# typbasetype, input function (as CATALOG_SNAPSHOT_SQL returns them).
TYPE_ROWS = [
    (23, "int4", "b", 0, 0, 1007, 4, "N", 0, "int4in"),
    (1007, "_int4", "b", 0, 23, 0, -1, "A", 0, "array_in"),
    (25, "text", "b", 0, 0, 1009, -1, "S", 0, "textin"),
    (1009, "_text", "b", 0, 25, 0, -1, "A", 0, "array_in"),
    (2205, "regclass", "b", 0, 0, 2210, 4, "N", 0, "regclassin"),
    (2210, "_regclass", "b", 0, 2205, 0, -1, "A", 0, "array_in"),
    (2206, "regtype", "b", 0, 0, 0, 4, "N", 0, "regtypein"),
    (3734, "regconfig", "b", 0, 0, 0, 4, "N", 0, "regconfigin"),
    (1033, "aclitem", "b", 0, 0, 0, 12, "U", 0, "aclitemin"),
    (2281, "internal", "p", 0, 0, 0, 8, "P", 0, "internal_in"),
    (83, "pg_class", "c", 1259, 0, 0, -1, "C", 0, "record_in"),
    (2283, "anyelement", "p", 0, 0, 0, 4, "P", 0, "anyelement_in"),
]


def type_row(row: tuple) -> list:
    """One pg_type row as the guard's CATALOG_SQL returns it, from (oid, name, typtype, typrelid, typelem,
    typarray, typlen, typcategory, typbasetype, typinput)."""
    oid, name, kind, relation, element, array, length, category, base, input_function = row
    subscript = "array_subscript_handler" if category == "A" else None
    return [oid, name, "pg_catalog", kind, category, False, length, element, array, relation, base, -1, False,
            input_function, "", subscript, name, ","]


def function_row(
    oid: int, name: str, arguments: tuple = (25,), result: int = 25, *, volatility: str = "i", kind: str = "f",
    all_arguments: tuple | None = None,
) -> list:
    """One pg_proc row as the guard's CATALOG_SQL returns it."""
    modes = ["i"] * len(arguments) + ["o"] * (len(all_arguments) - len(arguments)) if all_arguments else None
    return [oid, name, "pg_catalog", kind, volatility, result, list(arguments),
            list(all_arguments) if all_arguments else None, modes, None, 0, 0, False, None, True, False, None, 0]


def policy_of(*functions: list, allow: tuple = (), deny: tuple = ()) -> FunctionPolicy:
    catalog = CatalogSnapshot.from_rows(types=[type_row(row) for row in TYPE_ROWS], functions=functions)
    return FunctionPolicy.from_catalog(catalog, allow=allow, deny=deny)


class TestFunctionPolicyRules:
    def test_volatility_and_kind_decide(self) -> None:
        """Immutable/stable functions, aggregates and window functions pass; volatile ones and procedures do not."""
        policy = policy_of(
            function_row(1, "lower"), function_row(2, "now", volatility="s"), function_row(3, "count", kind="a"),
            function_row(4, "row_number", kind="w"), function_row(5, "volatile_fn", volatility="v"),
            function_row(6, "proc", kind="p"),
        )
        assert policy.allowed == {"lower", "now", "count", "row_number"}
        assert policy.refusal_reason("volatile_fn") == "it is volatile"

    def test_volatile_functions_that_only_read_pass(self) -> None:
        """random(), clock_timestamp(), gen_random_uuid() read and write nothing: allowed though volatile."""
        policy = policy_of(function_row(1, "random", (), 701, volatility="v"),
                           function_row(2, "clock_timestamp", (), 1184, volatility="v"),
                           function_row(3, "setseed", (701,), 2278, volatility="v"))
        assert policy.allowed == {"random", "clock_timestamp"}

    def test_one_volatile_overload_disqualifies_the_name(self) -> None:
        """The rule is by name: every overload must qualify."""
        policy = policy_of(function_row(1, "ts_rewrite"), function_row(2, "ts_rewrite", volatility="v"),
                           function_row(3, "lower"))
        assert policy.allowed == {"lower"}

    def test_extensions_and_catalog_typed_signatures_are_refused(self) -> None:
        """Functions added after initdb and signatures with catalog-lookup, internal or row types are refused."""
        policy = policy_of(
            function_row(16500, "ext_fn"),
            function_row(10, "takes_regclass", (2205,)),
            function_row(11, "takes_regtype", (2206,)),
            function_row(12, "returns_regconfig", (25,), 3734),
            function_row(13, "out_regtype", (25,), 25, all_arguments=(25, 2206)),
            function_row(14, "takes_aclitem", (1033,)),
            function_row(15, "takes_internal", (2281,)),
            function_row(16, "returns_pg_class_row", (23,), 83),
            function_row(17, "takes_regclass_array", (2210,)),
            function_row(18, "takes_regconfig", (3734, 25)),
            function_row(19, "ok_fn", (1007, 2283)),
        )
        assert policy.allowed == {"takes_regconfig", "ok_fn"}
        assert "regtype" in policy.refusal_reason("out_regtype")
        assert "row type" in policy.refusal_reason("returns_pg_class_row")

    def test_allow_and_deny_options_deny_wins(self) -> None:
        """Operator allow adds names, deny removes them, and deny wins over allow; overrides are reported."""
        policy = policy_of(function_row(1, "lower"), function_row(2, "version", volatility="s"),
                           function_row(3, "upper"), allow=("pg_catalog.version", "Upper"), deny=("lower", "upper"))
        assert policy.allowed == {"version"}
        assert dict(policy.overridden) == {
            "version": "it reveals the database account, the session, the server or its settings"
        }

    def test_configured_name_in_another_schema_is_an_error(self) -> None:
        """An operator option naming a function outside pg_catalog is a configuration error."""
        with pytest.raises(ValueError, match="public.f"):
            policy_of(allow=("public.f",))


class TestLiveCatalogPolicy:
    ALLOWED = (
        "lower", "upper", "count", "sum", "avg", "max", "min", "now", "generate_series", "unnest",
        "jsonb_build_object", "jsonb_agg", "string_agg", "row_number", "rank", "date_trunc", "to_char",
        "extract", "timezone", "substring", "btrim", "similar_to_escape", "to_tsvector", "to_tsquery",
        "ts_headline", "pg_size_pretty", "length", "round", "format", "array_agg", "percentile_cont",
        "xmlagg", "xmlcomment", "polygon", "point", "area", "npoints", "ltrim", "replace", "strpos",
        "jsonb_delete", "normalize",
    )
    REFUSED = (
        "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "query_to_xml", "table_to_xml",
        "database_to_xml", "cursor_to_xml", "ts_stat", "ts_rewrite", "pg_sleep", "set_config", "nextval",
        "setval", "currval", "current_setting", "lo_import", "lo_get", "pg_advisory_lock", "dblink", "version",
        "inet_server_addr", "inet_client_addr", "pg_backend_pid", "pg_postmaster_start_time", "pg_conf_load_time",
        "pg_settings_get_flags", "pg_stat_get_activity", "has_table_privilege", "pg_get_viewdef",
        "pg_get_functiondef", "pg_relation_size", "pg_describe_object", "txid_current", "pg_current_xact_id",
        "to_regclass", "regclass", "regclassin", "obj_description", "col_description", "format_type",
        "current_database", "current_user", "session_user", "setseed", "acldefault", "pg_timezone_names",
        # return a catalog-lookup type: a literal beside the result would be resolved by name
        "pg_typeof", "get_current_ts_config", "to_regtype",
        # take one: a literal argument is resolved by a catalog lookup (an existence and OID oracle)
        "regtypesend", "regtypeout", "regclasssend", "aclitemout", "aclcontains", "makeaclitem",
        # cannot be interrupted, time quadratic in polygons and paths
        "poly_distance", "path_distance", "poly_contain", "poly_contained", "poly_overlap", "poly_same", "path_inter",
        # parse XML with libxml2
        "xpath", "xpath_exists", "xmlexists", "xml_is_well_formed", "xml_is_well_formed_document",
        "xml_is_well_formed_content", "xml",
    )

    def test_live_catalog_allows_plain_functions(self, policy: QueryPolicy) -> None:
        """Built from the real pg_catalog, the policy allows everyday functions."""
        assert [name for name in self.ALLOWED if not policy.functions.allows(name)] == []

    def test_live_catalog_refuses_dangerous_functions(self, policy: QueryPolicy) -> None:
        """Built from the real pg_catalog, the policy refuses every function on the threat list."""
        assert [name for name in self.REFUSED if policy.functions.allows(name)] == []
        pg_functions = {name for name in policy.functions.allowed if name.startswith("pg_")}
        assert pg_functions - {n for n in pg_functions if n.startswith("pg_lsn_")} == {"pg_size_pretty", "pg_size_bytes"}

    def test_no_allowed_function_takes_or_returns_a_catalog_lookup_type(self, policy: QueryPolicy) -> None:
        """Among allowed overloads only regconfig/regdictionary arguments remain of the reg*/aclitem family."""
        catalog = policy.catalog
        found = set()
        for name in policy.functions.allowed:
            for overload in catalog.functions_by_name.get(name, ()):
                outputs = {overload.result, *overload.all_arguments} - set(overload.arguments)
                for oid in {*overload.arguments, *outputs}:
                    type_name = catalog.type_display(oid).removesuffix("[]")
                    if type_name.startswith("reg") or type_name == "aclitem":
                        found.add((type_name, oid in outputs))
        assert found <= {("regconfig", False), ("regdictionary", False)}

    def test_live_options_allow_and_deny(self, live_catalog: CatalogSnapshot) -> None:
        """Operator options change the live allowlist, deny winning over allow."""
        policy = FunctionPolicy.from_catalog(
            live_catalog, allow=["version", "current_database"], deny=["lower", "current_database"]
        )
        assert policy.allows("version")
        assert not policy.allows("lower")
        assert not policy.allows("current_database")

    def test_live_policy_accepts_syntax_forms_and_column_names(self, policy: QueryPolicy) -> None:
        """coalesce/greatest/least/nullif and SQL-syntax functions pass; a column named version is no call."""
        sql = (
            "select coalesce(o.note, ''), greatest(1, 2), least(1, 2), nullif(o.note, ''), o.version, "
            "extract(year from o.created), o.created at time zone 'UTC', position('a' in o.note), "
            "overlay(o.note placing 'x' from 1), o.note similar to 'a%', trim(o.note) from sales.orders o"
        )
        assert check_query(sql, GRANTED, policy).relations == {("sales", "orders")}

    def test_live_policy_refuses_functional_notation_calls(self, policy: QueryPolicy) -> None:
        """``(expr).f`` cannot smuggle a call of a denied one-argument function: it is read as the call, and
        refused; where no such call exists (nextval takes regclass) it is the column PostgreSQL says is missing."""
        for sql in ("select ('x'::text).pg_read_file", "select ('server_version'::text).current_setting"):
            with pytest.raises(QueryRejected, match="is not allowed"):
                check_query(sql, GRANTED, policy)
        with pytest.raises(QueryFailed, match="column o.nextval does not exist"):
            check_query("select o.nextval from sales.orders o", GRANTED, policy)
