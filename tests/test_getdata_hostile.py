"""GetData against an adversary who knows PostgreSQL: every hostile query is refused over real HTTP, with no effect.

The threat model (issue 3): a user token holder must not read anything not
granted to the token (other tables, system catalogs, statistics), read server
files, settings or other sessions, reach another server, write, lock, create,
drop, notify or advance anything, run more than one query, or hold the
database. One scratch database and one gateway serve the whole table; after
each case and once more after all of them the database is compared with its
state before the first: table contents, sequences, catalog sizes, large
objects, locks, gateway sessions, and the gateway still answers a legitimate
query.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg2.extensions
import pytest
import pytest_asyncio
from aiohttp import ClientResponse
from aiohttp.test_utils import TestServer

from gateway.web.app import create_app, server_options
from openapi_contract import ContractCheckedClient
from support import (
    connect,
    database_from,
    error_of,
    gateway_config,
    grant,
    register_database,
    user_headers,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOKEN = "hostile-token-b41c9e"
"""The adversary's token: granted public.orders and sales.customers only."""

ARENA_SQL = """
CREATE SCHEMA sales;
CREATE SCHEMA hr;
CREATE TABLE public.orders (id serial PRIMARY KEY, customer_id integer, note text);
INSERT INTO public.orders (customer_id, note) VALUES (1, 'first'), (2, 'second');
CREATE TABLE public.secrets (id integer, secret text);
INSERT INTO public.secrets VALUES (1, 'the secret');
CREATE TABLE sales.customers (id integer PRIMARY KEY, name text);
INSERT INTO sales.customers VALUES (1, 'Ann'), (2, 'Bob');
CREATE TABLE hr.salaries (id integer, amount numeric);
INSERT INTO hr.salaries VALUES (1, 100000);
CREATE TABLE hr.orders (id integer);
CREATE SEQUENCE sales.invoice_seq;
CREATE VIEW hr.salary_view AS SELECT * FROM hr.salaries;
"""

GRANTED_TABLES = ("arena_public_orders", "arena_sales_customers")

LEGITIMATE_QUERY = (
    "select o.id, o.note, c.name from public.orders o join sales.customers c on c.id = o.customer_id order by o.id"
)
LEGITIMATE_DATA = [{"id": 1, "note": "first", "name": "Ann"}, {"id": 2, "note": "second", "name": "Bob"}]

# Everything a hostile query could change or leave behind, read in one statement (one snapshot).
STATE_SQL = """
SELECT
  (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM public.orders t) AS orders,
  (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM public.secrets t) AS secrets,
  (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM sales.customers t) AS customers,
  (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM hr.salaries t) AS salaries,
  (SELECT count(*) FROM hr.orders) AS hr_orders,
  (SELECT last_value::text || '/' || is_called::text FROM public.orders_id_seq) AS orders_id_seq,
  (SELECT last_value::text || '/' || is_called::text FROM sales.invoice_seq) AS invoice_seq,
  (SELECT count(*) FROM pg_catalog.pg_class) AS relations,
  (SELECT count(*) FROM pg_catalog.pg_proc) AS functions,
  (SELECT count(*) FROM pg_catalog.pg_namespace) AS schemas,
  (SELECT count(*) FROM pg_catalog.pg_description) AS comments,
  (SELECT md5(string_agg(coalesce(relacl::text, '-'), ',' ORDER BY oid)) FROM pg_catalog.pg_class) AS privileges,
  (SELECT count(*) FROM pg_catalog.pg_largeobject_metadata) AS large_objects,
  (SELECT count(*) FROM pg_catalog.pg_db_role_setting s JOIN pg_catalog.pg_database d ON d.oid = s.setdatabase
     WHERE d.datname = current_database()) AS database_settings,
  (SELECT count(*) FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
     WHERE l.pid <> pg_catalog.pg_backend_pid() AND a.backend_type = 'client backend'
       AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())) AS foreign_locks,
  (SELECT count(*) FROM pg_catalog.pg_stat_activity
     WHERE datname = current_database() AND application_name = 'dbgateway'
       AND state IS DISTINCT FROM 'idle') AS busy_gateway_sessions
"""


def _table(case_id: str, sql: str, table: str) -> Any:
    return pytest.param(sql, f"table {table} is not granted to this token", id=case_id)


def _statement(case_id: str, sql: str, found: str) -> Any:
    return pytest.param(sql, f"only one SELECT statement is allowed, found {found}", id=case_id)


def _function(case_id: str, sql: str, name: str) -> Any:
    return pytest.param(sql, f'function "{name}" is not allowed', id=case_id)


def _refused(case_id: str, sql: str, fragment: str) -> Any:
    return pytest.param(sql, fragment, id=case_id)


HOSTILE_QUERIES = [
    # Tables, views and sequences not granted to the token, reached directly or from inside a query.
    _table("ungranted_same_schema", "select * from public.secrets", '"public.secrets"'),
    _table("ungranted_other_schema", "select * from hr.salaries", '"hr.salaries"'),
    _table("ungranted_view", "select * from hr.salary_view", '"hr.salary_view"'),
    _table("ungranted_table_statement", "table hr.salaries", '"hr.salaries"'),
    _table("ungranted_only", "select * from only public.secrets", '"public.secrets"'),
    _table("ungranted_in_join", "select * from public.orders o join hr.salaries s on s.id = o.id", '"hr.salaries"'),
    _table("ungranted_in_where_subquery",
           "select * from public.orders where note in (select secret from public.secrets)", '"public.secrets"'),
    _table("ungranted_in_any_subquery",
           "select * from public.orders where note = any (select secret from public.secrets)", '"public.secrets"'),
    _table("ungranted_scalar_subquery", "values ((select secret from public.secrets limit 1))", '"public.secrets"'),
    _table("ungranted_in_lateral",
           "select a from public.orders, lateral (select secret from public.secrets) as x(a)", '"public.secrets"'),
    _table("ungranted_in_union", "select note from public.orders union select secret from public.secrets",
           '"public.secrets"'),
    _table("ungranted_in_cte", "with s as (select * from hr.salaries) select * from s", '"hr.salaries"'),
    _table("cte_named_like_ungranted_used_qualified",
           "with secrets as (select 1) select * from public.secrets", '"public.secrets"'),
    _table("ungranted_in_order_by",
           "select * from public.orders order by (select count(*) from public.secrets)", '"public.secrets"'),
    _table("ungranted_system_columns", "select xmin, ctid, tableoid from public.secrets", '"public.secrets"'),
    _table("same_name_other_schema", "select * from hr.orders", '"hr.orders"'),
    _table("odd_case_identifiers", 'select * from "PUBLIC"."ORDERS"', '"PUBLIC"."ORDERS"'),
    _table("unicode_escaped_identifier", 'select * from public.U&"\\0073ecrets"', '"public.secrets"'),
    _table("ungranted_sequence_relation", "select * from public.orders_id_seq", '"public.orders_id_seq"'),
    _table("ungranted_standalone_sequence", "select last_value from sales.invoice_seq", '"sales.invoice_seq"'),
    # System catalogs and statistics views.
    _table("catalog_pg_authid", "select rolname, rolpassword from pg_catalog.pg_authid", '"pg_catalog.pg_authid"'),
    _table("catalog_pg_shadow", "select * from pg_catalog.pg_shadow", '"pg_catalog.pg_shadow"'),
    _table("catalog_pg_class", "select relname from pg_catalog.pg_class", '"pg_catalog.pg_class"'),
    _table("catalog_pg_proc_sources", "select prosrc from pg_catalog.pg_proc", '"pg_catalog.pg_proc"'),
    _table("catalog_pg_stat_activity", "select query from pg_catalog.pg_stat_activity",
           '"pg_catalog.pg_stat_activity"'),
    _table("catalog_pg_settings", "select * from pg_catalog.pg_settings", '"pg_catalog.pg_settings"'),
    _table("catalog_pg_stats", "select * from pg_catalog.pg_stats", '"pg_catalog.pg_stats"'),
    _table("catalog_pg_stat_user_tables", "select * from pg_catalog.pg_stat_user_tables",
           '"pg_catalog.pg_stat_user_tables"'),
    _table("catalog_pg_largeobject", "select * from pg_catalog.pg_largeobject", '"pg_catalog.pg_largeobject"'),
    _table("information_schema_tables", "select * from information_schema.tables", '"information_schema.tables"'),
    _table("catalog_in_union", "select 1 union all select count(*) from pg_catalog.pg_authid",
           '"pg_catalog.pg_authid"'),
    _table("catalog_in_lateral",
           "select * from public.orders o natural join lateral (select * from pg_catalog.pg_roles) r",
           '"pg_catalog.pg_roles"'),
    # Names without a schema never resolve: not even to a granted table of the same name.
    _refused("unqualified_granted_name", "select * from orders", 'table "orders" is not schema-qualified'),
    _refused("unqualified_ungranted_name", "select * from secrets", 'table "secrets" is not schema-qualified'),
    _refused("unqualified_catalog", "select * from pg_authid", 'table "pg_authid" is not schema-qualified'),
    _refused("quoted_dotted_name", 'select * from "public.orders"', 'table "public.orders" is not schema-qualified'),
    _refused("cross_database_name", "select * from postgres.public.orders",
             "cross-database references are not allowed"),
    # Functions that run SQL given as text.
    _function("query_to_xml", "select query_to_xml('select * from public.secrets', true, true, '')", "query_to_xml"),
    _function("xpath_over_query_to_xml",
              "select xpath('/row', query_to_xml('select * from public.secrets', true, false, ''))", "query_to_xml"),
    _function("ts_stat", "select * from ts_stat('select to_tsvector(secret) from public.secrets')", "ts_stat"),
    _function("ts_rewrite", "select ts_rewrite('a'::tsquery, 'select 1')", "ts_rewrite"),
    _function("table_to_xml", "select table_to_xml('public.secrets', true, true, '')", "table_to_xml"),
    _function("database_to_xml", "select database_to_xml(true, true, '')", "database_to_xml"),
    _function("cursor_to_xml", "select cursor_to_xml('dbgw_cursor', 1, true, true, '')", "cursor_to_xml"),
    # Server files.
    _function("pg_read_file", "select pg_read_file('/etc/passwd')", "pg_read_file"),
    _function("pg_read_file_qualified", "select pg_catalog.pg_read_file('/etc/passwd')", "pg_read_file"),
    _function("pg_read_file_unicode_escaped", "select U&\"pg\\005fread\\005ffile\"('/etc/passwd')", "pg_read_file"),
    _function("pg_read_file_functional_notation", "select ('/etc/passwd'::text).pg_read_file", "pg_read_file"),
    _function("pg_read_file_in_from", "select * from rows from (pg_read_file('/etc/passwd'))", "pg_read_file"),
    _function("pg_read_binary_file", "select pg_read_binary_file('/etc/passwd')", "pg_read_binary_file"),
    _function("pg_ls_dir_in_from", "select * from pg_ls_dir('.')", "pg_ls_dir"),
    _function("pg_stat_file_lateral", "select * from generate_series(1, 3), lateral pg_stat_file('/etc/passwd')",
              "pg_stat_file"),
    _function("lo_import", "select lo_import('/etc/passwd')", "lo_import"),
    _function("lo_export", "select lo_export(1, '/tmp/dbgw_stolen')", "lo_export"),
    _statement("copy_from_program", "copy public.orders from program 'id'", "COPY"),
    _statement("copy_to_file", "copy public.secrets to '/tmp/dbgw_stolen'", "COPY"),
    _statement("copy_to_stdout", "copy (select * from public.secrets) to stdout", "COPY"),
    # Other servers.
    _function("dblink", "select dblink('host=10.0.0.1', 'select 1')", "dblink"),
    _function("dblink_connect", "select dblink_connect('host=10.0.0.1')", "dblink_connect"),
    _refused("user_schema_dblink", "select public.dblink('host=10.0.0.1', 'select 1')",
             'function "public.dblink" is not allowed: only built-in functions'),
    _refused("user_schema_function_in_from", "select * from public.evil_srf()",
             'function "public.evil_srf" is not allowed: only built-in functions'),
    # Settings, environment, identity and other sessions.
    _function("current_setting", "select current_setting('data_directory')", "current_setting"),
    _function("current_setting_functional_notation", "select ('data_directory'::text).current_setting",
              "current_setting"),
    _function("set_config", "select set_config('statement_timeout', '0', false)", "set_config"),
    _function("set_config_qualified", "select pg_catalog.set_config('search_path', 'public', false)", "set_config"),
    _function("inet_server_addr", "select inet_server_addr()", "inet_server_addr"),
    _function("inet_client_addr", "select inet_client_addr()", "inet_client_addr"),
    _function("version", "select version()", "version"),
    _function("current_database", "select current_database()", "current_database"),
    _function("current_schemas", "select current_schemas(true)", "current_schemas"),
    _function("current_query", "select current_query()", "current_query"),
    _function("pg_backend_pid", "select pg_backend_pid()", "pg_backend_pid"),
    _function("pg_postmaster_start_time", "select pg_postmaster_start_time()", "pg_postmaster_start_time"),
    _function("pg_stat_get_activity", "select * from pg_stat_get_activity(null)", "pg_stat_get_activity"),
    _function("pg_get_viewdef", "select pg_get_viewdef('hr.salary_view')", "pg_get_viewdef"),
    _function("has_table_privilege", "select has_table_privilege('public.secrets', 'select')", "has_table_privilege"),
    _function("obj_description", "select obj_description(1)", "obj_description"),
    _refused("current_user", "select current_user", "CURRENT_USER is not allowed"),
    _refused("session_user", "select session_user", "SESSION_USER is not allowed"),
    _statement("show_setting", "show data_directory", "SHOW"),
    # Data-modifying statements, top level and inside WITH.
    _refused("with_delete", "with x as (delete from public.orders returning *) select * from x",
             "data-modifying statement in WITH is not allowed"),
    _refused("with_insert", "with x as (insert into public.orders (note) values ('x') returning id) select * from x",
             "data-modifying statement in WITH is not allowed"),
    _refused("with_update", "with x as (update sales.customers set name = 'x' returning id) select 1",
             "data-modifying statement in WITH is not allowed"),
    _refused("nested_with_delete",
             "select * from (with d as (delete from public.secrets returning *) select * from d) x",
             "data-modifying statement in WITH is not allowed"),
    _statement("insert", "insert into public.orders (note) values ('x')", "INSERT"),
    _statement("update", "update public.orders set note = 'x'", "UPDATE"),
    _statement("delete", "delete from public.orders", "DELETE"),
    _statement("merge", "merge into public.orders o using sales.customers c on o.id = c.id when matched then delete",
               "MERGE"),
    _statement("truncate", "truncate public.orders", "TRUNCATE"),
    _refused("select_into", "select * into public.stolen from public.orders",
             "SELECT ... INTO is not allowed: it creates a table"),
    _refused("select_into_temp", "select 1 into temp t", "SELECT ... INTO is not allowed: it creates a table"),
    _statement("create_table_as", "create table public.stolen as select * from public.orders", "CREATE TABLE AS"),
    # Row locks.
    _refused("for_update", "select * from public.orders for update", "locking clause FOR UPDATE is not allowed"),
    _refused("for_no_key_update", "select * from public.orders for no key update",
             "locking clause FOR NO KEY UPDATE is not allowed"),
    _refused("for_share", "select * from public.orders for share", "locking clause FOR SHARE is not allowed"),
    _refused("for_key_share", "select * from public.orders for key share nowait",
             "locking clause FOR KEY SHARE is not allowed"),
    _refused("for_update_in_subquery", "select * from (select * from public.orders for update) o",
             "locking clause FOR UPDATE is not allowed"),
    # More than one statement, hidden by comments and quoting.
    _statement("second_statement", "select 1; drop table public.orders", "2 statements"),
    _statement("line_comment_then_statement", "select 1 --\n; delete from public.orders", "2 statements"),
    _statement("block_comment_then_statement", "select 1 /* ; */ ; delete from public.orders", "2 statements"),
    _statement("dollar_quote_then_statement", "select $$;$$; drop table public.orders", "2 statements"),
    _statement("escape_string_then_statement", "select E'\\';' ; delete from public.orders", "2 statements"),
    _statement("tagged_dollar_quote_then_statement", "select $x$ $$ ; $x$; truncate public.orders", "2 statements"),
    _refused("nul_character", "select 1\x00; drop table public.orders", "NUL character"),
    # Sequences.
    _function("nextval", "select nextval('public.orders_id_seq')", "nextval"),
    _function("nextval_functional_notation", "select ('sales.invoice_seq'::text).nextval", "nextval"),
    _function("setval", "select setval('sales.invoice_seq', 1000)", "setval"),
    _function("currval", "select currval('sales.invoice_seq')", "currval"),
    _function("lastval", "select lastval()", "lastval"),
    # Advisory locks, notifications, table locks.
    _function("pg_advisory_lock", "select pg_advisory_lock(1)", "pg_advisory_lock"),
    _function("pg_try_advisory_lock", "select pg_try_advisory_lock(1)", "pg_try_advisory_lock"),
    _function("pg_advisory_xact_lock", "select pg_advisory_xact_lock(1)", "pg_advisory_xact_lock"),
    _function("pg_advisory_lock_shared", "select pg_advisory_lock_shared(1)", "pg_advisory_lock_shared"),
    _function("pg_notify", "select pg_notify('channel', 'payload')", "pg_notify"),
    _statement("notify", "notify channel, 'payload'", "NOTIFY"),
    _statement("listen", "listen channel", "LISTEN"),
    _statement("unlisten", "unlisten *", "UNLISTEN"),
    _statement("lock_table", "lock table public.orders in access exclusive mode", "LOCK"),
    # Schema changes.
    _statement("create_table", "create table public.x (id integer)", "CREATE"),
    _statement("create_function", "create function public.f() returns integer language sql as 'select 1'",
               "CREATE FUNCTION"),
    _statement("create_schema", "create schema evil", "CREATE SCHEMA"),
    _statement("create_extension", "create extension dblink", "CREATE EXTENSION"),
    _statement("drop_table", "drop table public.orders", "DROP"),
    _statement("alter_table", "alter table public.orders add column extra integer", "ALTER TABLE"),
    _statement("comment_on", "comment on table public.orders is 'owned'", "COMMENT"),
    _statement("grant", "grant select on public.secrets to public", "GRANT"),
    _statement("alter_system", "alter system set work_mem = '1GB'", "ALTER SYSTEM"),
    # Session and transaction control.
    _statement("set", "set search_path = public", "SET"),
    _statement("set_local", "set local statement_timeout = 0", "SET"),
    _statement("reset_all", "reset all", "SET"),
    _statement("set_role", "set role postgres", "SET"),
    _statement("set_session_authorization", "set session authorization postgres", "SET"),
    _statement("begin", "begin", "transaction control"),
    _statement("commit", "commit", "transaction control"),
    _statement("declare_cursor", "declare c cursor with hold for select * from public.secrets", "DECLARE CURSOR"),
    _statement("fetch_gateway_cursor", "fetch all from dbgw_cursor", "FETCH"),
    _statement("prepare", "prepare p as delete from public.orders", "PREPARE"),
    _statement("execute", "execute p", "EXECUTE"),
    _statement("discard_all", "discard all", "DISCARD"),
    # Procedural code and utility commands.
    _statement("do_block", "do $$ begin delete from public.orders; end $$", "DO"),
    _statement("call", "call public.p()", "CALL"),
    _statement("explain_analyze", "explain analyze delete from public.orders", "EXPLAIN"),
    _statement("explain", "explain select * from public.secrets", "EXPLAIN"),
    _statement("vacuum", "vacuum full public.orders", "VACUUM"),
    _statement("checkpoint", "checkpoint", "CHECK POINT"),
    # Holding the database or other sessions.
    _function("pg_sleep", "select pg_sleep(60)", "pg_sleep"),
    _function("pg_sleep_in_filter", "select count(*) filter (where pg_sleep(1) is null) from public.orders",
              "pg_sleep"),
    _function("pg_sleep_for", "select pg_sleep_for('1 minute')", "pg_sleep_for"),
    _function("pg_terminate_backend", "select pg_terminate_backend(1)", "pg_terminate_backend"),
    _function("pg_cancel_backend", "select pg_cancel_backend(1)", "pg_cancel_backend"),
    _function("pg_reload_conf", "select pg_reload_conf()", "pg_reload_conf"),
    # Transaction ids and snapshots.
    _function("txid_current", "select txid_current()", "txid_current"),
    _function("pg_current_xact_id", "select pg_current_xact_id()", "pg_current_xact_id"),
    _function("pg_export_snapshot", "select pg_export_snapshot()", "pg_export_snapshot"),
    # Large objects.
    _function("lo_creat", "select lo_creat(-1)", "lo_creat"),
    _function("lo_create", "select lo_create(0)", "lo_create"),
    _function("lo_from_bytea", "select lo_from_bytea(0, '\\x00')", "lo_from_bytea"),
    _function("lo_get", "select lo_get(1)", "lo_get"),
    # Catalog lookups through types and casts, and row types of ungranted tables.
    _refused("cast_to_regclass", "select 'public.secrets'::regclass::oid", 'type "regclass" is not allowed'),
    _refused("tableoid_to_regclass", "select tableoid::regclass from public.orders", 'type "regclass" is not allowed'),
    _refused("cast_to_regtype", "select 'hr.salaries'::pg_catalog.regtype", 'type "regtype" is not allowed'),
    _refused("regclass_functional_notation", "select ('public.secrets'::text).regclass",
             "its type regclass looks catalog objects up"),
    _function("regclass_function", "select regclass('public.secrets')", "regclass"),
    _function("to_regclass", "select to_regclass('public.secrets')", "to_regclass"),
    _refused("row_type_cast_ungranted", "select null::public.secrets",
             'type "public.secrets" is not allowed: only built-in types'),
    _refused("row_constructor_cast_ungranted", "select row(1, 2)::hr.salaries",
             'type "hr.salaries" is not allowed: only built-in types'),
    _refused("row_type_expansion_ungranted", "select (s).* from (select null::public.secrets as s) x",
             'type "public.secrets" is not allowed'),
    # XML parsing (libxml2 cannot be interrupted), here with an external entity that names a server file.
    _refused("xml_external_entity", "select xpath('/foo/text()', xmlparse(document '<!DOCTYPE foo [<!ENTITY xxe SYSTEM "
             "\"file:///etc/passwd\">]><foo>&xxe;</foo>')) as x", "XMLPARSE is not allowed"),
    # Parameters the gateway never binds.
    _refused("parameter_placeholder", "select * from public.orders where id = $1", "$1 has no value"),
]

# PostgreSQL's own analysis refuses these: the database's error, whether the guard's type model answers it
# (in PostgreSQL's words) or the database does (nothing runs either way).
DATABASE_REFUSED = [
    # ".current_user" is not a one-argument function call (current_user takes none), so PostgreSQL
    # reads it as a column of a text value and refuses.
    pytest.param("select ('x'::text).current_user", "column notation .current_user applied to type text",
                 id="zero_argument_function_as_column"),
]

# Quoting tricks that are only strings or comments: one harmless SELECT whose answer shows nothing else ran.
ONLY_TEXT = [
    pytest.param("select 'x'';drop table public.orders;--' as s", [{"s": "x';drop table public.orders;--"}],
                 id="doubled_quote_in_string"),
    pytest.param("select U&'\\0027; drop table public.orders' as s", [{"s": "'; drop table public.orders"}],
                 id="unicode_escaped_quote_in_string"),
    pytest.param("select E'\\'; delete from public.orders; --' as s", [{"s": "'; delete from public.orders; --"}],
                 id="escaped_quote_in_escape_string"),
    pytest.param("select $q$'; truncate public.orders; --$q$ as s", [{"s": "'; truncate public.orders; --"}],
                 id="dollar_quoted_string"),
    pytest.param("select 1 as one /* /* */ ; delete from public.orders */", [{"one": 1}],
                 id="nested_block_comment"),
    pytest.param("select 1 as one -- ; delete from public.orders", [{"one": 1}], id="trailing_line_comment"),
    # A CTE named like an ungranted table shadows it: the rows are the granted table's, not public.secrets'.
    pytest.param("with secrets as (select note from public.orders) select * from secrets order by note",
                 [{"note": "first"}, {"note": "second"}], id="cte_shadows_ungranted_name"),
]


class Arena:
    """The module's database, gateway and the state every case must leave unchanged."""

    def __init__(self, database: str, client: ContractCheckedClient, observer: psycopg2.extensions.connection) -> None:
        self.database = database
        self.client = client
        self.observer = observer
        self.baseline = self.state()
        self.sent: set[str] = set()

    def state(self) -> dict[str, Any]:
        """One consistent snapshot of everything STATE_SQL reads."""
        with self.observer.cursor() as cursor:
            cursor.execute(STATE_SQL)
            names = [column.name for column in cursor.description]
            return dict(zip(names, cursor.fetchone()))

    def assert_unchanged(self) -> None:
        assert self.state() == self.baseline

    async def send(self, sql: str) -> ClientResponse:
        """The query as the adversary sends it: POST /GetData with a JSON body."""
        self.sent.add(sql)
        return await self.client.post(
            "/GetData", json={"local_database_name": "arena", "query": sql}, headers=user_headers(TOKEN)
        )


@pytest.fixture(scope="module")
def arena_database() -> Iterator[str]:
    with database_from(ARENA_SQL) as name:
        yield name


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def arena(arena_database: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Arena]:
    """One gateway for the whole table, the adversary's grants, and an observer session on the database."""
    config = gateway_config(tmp_path_factory.mktemp("hostile"))
    server = TestServer(create_app(config, log_stream=io.StringIO()))
    await server.start_server(**server_options(config))
    client = ContractCheckedClient(server)
    await client.start_server()
    observer = connect(arena_database)
    try:
        await register_database(client, "arena", arena_database)
        for table in GRANTED_TABLES:
            await grant(client, TOKEN, table)
        # The pool opens on first use: open it now so the baseline sees the gateway's idle sessions too.
        response = await client.get(
            "/GetData", params={"local_database_name": "arena", "query": LEGITIMATE_QUERY}, headers=user_headers(TOKEN)
        )
        assert response.status == 200, await response.text()
        yield Arena(arena_database, client, observer)
    finally:
        observer.close()
        await client.close()


async def assert_rejected(arena: Arena, sql: str, fragment: str) -> None:
    response = await arena.send(sql)
    body = await error_of(response)
    assert (response.status, body["error"]) == (400, "query_rejected"), body
    assert fragment in body["message"], body["message"]


@pytest.mark.parametrize(("sql", "fragment"), HOSTILE_QUERIES)
async def test_hostile_query_is_rejected(arena: Arena, sql: str, fragment: str) -> None:
    """The guard refuses the query with 400 query_rejected saying what and why, and the database is untouched."""
    await assert_rejected(arena, sql, fragment)
    arena.assert_unchanged()


@pytest.mark.parametrize(("sql", "fragment"), DATABASE_REFUSED)
async def test_query_the_database_refuses_is_query_failed(arena: Arena, sql: str, fragment: str) -> None:
    """What PostgreSQL's analysis refuses is 400 query_failed with its message, with no effect."""
    response = await arena.send(sql)
    body = await error_of(response)
    assert (response.status, body["error"]) == (400, "query_failed"), body
    assert fragment in body["message"]
    arena.assert_unchanged()


@pytest.mark.parametrize(("sql", "data"), ONLY_TEXT)
async def test_quoting_trick_is_one_harmless_select(arena: Arena, sql: str, data: list[dict[str, Any]]) -> None:
    """A statement hidden in a string or comment is just text: one SELECT answers, nothing else runs."""
    response = await arena.send(sql)
    text = await response.text()
    assert response.status == 200, text
    assert (await response.json(content_type=None))[0]["data"] == data
    arena.assert_unchanged()


async def test_regtype_coercion_reveals_nothing_about_ungranted_tables(arena: Arena) -> None:
    """A literal coerced to regtype must not tell whether an ungranted table exists."""
    await assert_rejected(
        arena, "select x::oid from (select pg_typeof(1) union all select 'hr.salaries') as t(x)", "pg_typeof"
    )


async def test_nothing_changed_after_the_whole_table(arena: Arena) -> None:
    """After every hostile query (any not yet sent is sent now) the database is as before and GetData still works."""
    for param in HOSTILE_QUERIES:
        sql, fragment = param.values
        if sql not in arena.sent:
            await assert_rejected(arena, sql, fragment)
    for param in [*DATABASE_REFUSED, *ONLY_TEXT]:
        if param.values[0] not in arena.sent:
            response = await arena.send(param.values[0])
            assert response.status in (200, 400)
    assert len(HOSTILE_QUERIES) >= 60
    assert arena.sent >= {param.values[0] for param in HOSTILE_QUERIES}
    arena.assert_unchanged()
    assert arena.state()["busy_gateway_sessions"] == 0 and arena.state()["foreign_locks"] == 0
    assert arena.state()["large_objects"] == 0
    response = await arena.send(LEGITIMATE_QUERY)
    assert response.status == 200, await response.text()
    assert (await response.json(content_type=None))[0]["data"] == LEGITIMATE_DATA
    assert arena.client.contract_problems == []
