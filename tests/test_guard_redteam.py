"""The red team's holes in the SQL guard, each sent as the adversary would: over real HTTP to GetData.

Every hostile query here was accepted by the guard before its fix (each ran, or would have run, on the
database); now each is refused before it reaches the database with the gateway's own 400 JSON error
(``query_rejected``). The sizes are small on purpose: the guard's rules do not depend on size (a
computed value is unbounded whatever it holds), and a hole then shows as a quick 200 instead of a
stalled backend. Legitimate neighbours of each hole keep working. docs/security.md explains each rule.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from gateway.web.app import create_app, server_options
from support import database_from, error_of, gateway_config, grant, register_database, user_headers

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOKEN = "redteam-token-5e0a71"
SETUP_SQL = """
CREATE TABLE public.docs (id integer PRIMARY KEY, body text, doc jsonb);
INSERT INTO public.docs VALUES (1, 'alpha beta', '{"q": "alpha"}'), (2, 'gamma', '{"q": "gamma"}');
"""


@pytest.fixture(scope="module")
def redteam_database() -> Iterator[str]:
    with database_from(SETUP_SQL) as name:
        yield name


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(redteam_database: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[TestClient]:
    """One gateway for the module: database "rt", table public.docs granted to TOKEN."""
    config = gateway_config(tmp_path_factory.mktemp("redteam"))
    server = TestServer(create_app(config, log_stream=io.StringIO()))
    await server.start_server(**server_options(config))
    test_client = TestClient(server)
    await test_client.start_server()
    try:
        await register_database(test_client, "rt", redteam_database)
        await grant(test_client, TOKEN, "rt_public_docs")
        yield test_client
    finally:
        await test_client.close()


async def _send(client: TestClient, sql: str) -> Any:
    return await client.post("/GetData", json={"local_database_name": "rt", "query": sql}, headers=user_headers(TOKEN))


async def refused(client: TestClient, sql: str, fragment: str, *, error: str = "query_rejected") -> str:
    """Assert the guard refuses ``sql`` (400 ``error``: query_rejected, or query_failed for what PostgreSQL's
    analysis would refuse) with ``fragment`` in its message."""
    response = await _send(client, sql)
    assert response.status == 400, (response.status, await response.text())
    body = await error_of(response)
    assert body["error"] == error, body
    assert fragment in body["message"], body["message"]
    return str(body["message"])


async def answered(client: TestClient, sql: str) -> Any:
    """Assert ``sql`` runs and return its rows."""
    response = await _send(client, sql)
    text = await response.text()
    assert response.status == 200, text
    return json.loads(text)[0]["data"]


# -- 1. Attribute notation is a function call when the name is no column ---------------------------------


async def test_attribute_notation_runs_cost_bounded_function(client: TestClient) -> None:
    """(computed).plainto_tsquery is plainto_tsquery(computed): its cost rule applies (small inputs still pass)."""
    await refused(client, "select (repeat('a ', 200000)).plainto_tsquery", "plainto_tsquery")
    await answered(client, "select (repeat('a ', 20)).plainto_tsquery")


async def test_attribute_notation_function_style_cast(client: TestClient) -> None:
    """(computed).tsquery is a cast to tsquery: tsqueryin's cost over computed text counts."""
    await refused(client, "select ((repeat('a | ', 200000) || 'a')).tsquery", "tsquery")


async def test_functional_notation_on_a_cte_row_is_a_column(client: TestClient) -> None:
    """length(c) on a CTE row c with a column "length" is that text column, not a small integer."""
    await refused(
        client,
        "with c as (select repeat('a', 100000) as length) select ltrim(repeat('b', 100000), length(c)) from c",
        "ltrim",
    )
    rows = await answered(client, "with c as (select repeat('a', 5000) as length) select length(c) as n from c")
    assert rows == [{"n": "a" * 5000}]


async def test_attribute_notation_on_known_columns_still_works(client: TestClient) -> None:
    """Real columns of tables, CTEs and sub-selects read with dots, and length(d.body), keep working."""
    await answered(client, "select d.body, (d).id, length(d.body) from public.docs d order by d.id")
    await answered(client, "with c as (select id, body from public.docs) select c.body from c")
    await answered(client, "select s.x from (select body as x from public.docs) s")
    # A column named like a cost-bounded function is still a column when the sub-select or CTE has it.
    await answered(client, "with c as (select plainto_tsquery('alpha') as to_tsquery) select c.to_tsquery from c")
    await answered(client, "select v.tsquery from (values ('a')) v(tsquery)")


# -- 2. Expressions in FROM ------------------------------------------------------------------------------


@pytest.mark.parametrize("item", [
    "coalesce(repeat('a', 5000))",
    "nullif(repeat('a', 5000), 'b')",
    "greatest(repeat('a', 5000), '0')",
])
async def test_unaliased_expression_in_from_cannot_pose_as_a_table(client: TestClient, item: str) -> None:
    """An expression in FROM named after itself is that FROM item, not an outer table of the same name."""
    name = item.split("(")[0]
    rows = await answered(
        client, f"select (select length({name}.{name}) from {item}) as n from public.docs {name} order by id")
    assert rows == [{"n": 5000}, {"n": 5000}]


async def test_expressions_in_from_with_an_alias_still_work(client: TestClient) -> None:
    """FROM coalesce(...) AS f and FROM CURRENT_DATE AS d are plain expressions, checked as such."""
    await answered(client, "select f from coalesce('x'::text) as f")
    await answered(client, "select d from current_date as d")


# -- 3. Type modifiers -----------------------------------------------------------------------------------


async def test_string_type_modifier_is_refused(client: TestClient) -> None:
    """bit('80000000') passes the modifier as text; only integer modifiers are bounded, so text ones are refused."""
    await refused(client, "select length(cast('1' as bit('80000000')))", "type modifier")


async def test_integer_type_modifier_still_works(client: TestClient) -> None:
    """bit(8) and numeric(10, 2) keep working."""
    await answered(client, "select cast('1' as bit(8)) as b, 1.5::numeric(10, 2) as n")


# -- 4. Aliases of cost-bounded implementations ----------------------------------------------------------


@pytest.mark.parametrize("name", ["like", "notlike", "textlike", "texticlike"])
async def test_like_aliases_follow_the_like_cost_rule(client: TestClient, name: str) -> None:
    """like(a, b) runs textlike, the LIKE operator's code: a computed pattern is refused under every name."""
    await refused(client, f"select {name}(body, repeat('%a', 60000) || 'b') from public.docs", "cannot interrupt")


async def test_like_with_a_literal_pattern_still_works(client: TestClient) -> None:
    """body LIKE 'a%' and like(body, 'a%') keep working."""
    await answered(client, "select body like 'a%' as a, like(body, 'g%') as b from public.docs")


# -- 5. Column definition lists --------------------------------------------------------------------------


async def test_column_definition_list_reads_computed_text_as_tsquery(client: TestClient) -> None:
    """jsonb_to_record(computed) AS x(q tsquery) runs tsqueryin on computed text: refused like a cast."""
    await refused(
        client,
        "select * from jsonb_to_record(jsonb_build_object('q', repeat('a | ', 20000) || 'a')) as x(q tsquery)",
        "tsquery",
    )


async def test_column_definition_list_of_a_lookup_type_is_refused_unread(client: TestClient) -> None:
    """A column defined as regclass is looked up by name even when nothing selects it."""
    await refused(client, """select 1 as one from jsonb_to_record('{"r": "pg_authid"}') as x(r regclass)""",
                  "regclass")


async def test_column_definition_list_of_plain_types_still_works(client: TestClient) -> None:
    """jsonb_to_record over a stored column into plain types keeps working."""
    await answered(client, "select x.q from public.docs d, jsonb_to_record(d.doc) as x(q text)")


# -- 6. Expression types of ROW(...) ---------------------------------------------------------------------


async def test_row_operand_of_concatenation_is_not_boolean(client: TestClient) -> None:
    """ROW(computed) || '' is text of the row's size, not a fixed-length boolean."""
    await refused(client, "select ltrim(repeat('b', 100000), ROW(repeat('a', 100000)) || '')", "ltrim")


# -- 7. text @@ text -------------------------------------------------------------------------------------


async def test_text_match_builds_a_tsquery_from_computed_text(client: TestClient) -> None:
    """body @@ computed builds a tsquery from the computed text at run time, like to_tsquery."""
    await refused(client, "select body @@ repeat('a | ', 200000) from public.docs", "ts_match_tt")


async def test_text_match_with_a_literal_still_works(client: TestClient) -> None:
    """body @@ 'alpha' keeps working."""
    await answered(client, "select body @@ 'alpha' as m from public.docs")


# -- 8. Quadratic multirange and JSON-object builders ----------------------------------------------------


async def test_json_object_of_computed_arrays_is_refused(client: TestClient) -> None:
    """jsonb_object(text[], text[]) over computed arrays is quadratic in the key count."""
    await refused(
        client,
        "select jsonb_object(array_fill('a'::text, array[3000]), array_fill('b'::text, array[3000]))",
        "jsonb_object",
    )


async def test_variadic_multirange_constructor_of_a_computed_array_is_refused(client: TestClient) -> None:
    """int4multirange(VARIADIC computed) sorts and merges its ranges without checking for interrupts."""
    await refused(
        client,
        "select int4multirange(variadic (select array_agg(int4range(i, i + 1)) from generate_series(1, 100000) i))",
        "int4multirange",
    )


# -- 10. Rows compared with rows -------------------------------------------------------------------------


async def test_rows_of_unequal_length_are_refused_early(client: TestClient) -> None:
    """ROW(a, b) = ROW(c) is refused as PostgreSQL refuses it."""
    await refused(client, "select ROW(1, 2) = ROW(1)", "unequal number of entries in row expressions",
                  error="query_failed")


async def test_row_in_list_is_checked_pair_by_pair(client: TestClient) -> None:
    """A long IN list of rows (7 000 pairs, near the request size limit) is typed as PostgreSQL types it: one
    comparison per pair, and a row of the wrong length anywhere in it is refused."""
    rows = ", ".join(f"({i}, {i})" for i in range(7_000))
    assert len(rows) > 80_000
    assert await answered(client, f"select 1 as one where (1, 1) in ({rows})") == [{"one": 1}]
    await refused(client, f"select 1 where (1, 2) in ({rows}, (1, 2, 3))", "unequal number of entries",
                  error="query_failed")


# -- 11. Names with a database ---------------------------------------------------------------------------


@pytest.mark.parametrize("reference", ["a.b.c.d", "a.b.c.*"])
async def test_column_reference_with_a_database_name_is_refused(client: TestClient, reference: str) -> None:
    """db.schema.table.column never reaches the database, whose error would echo names against its own."""
    await refused(client, f"select {reference} from public.docs a", "cross-database")


# -- 12. Database error messages -------------------------------------------------------------------------


async def test_database_error_message_is_cut_to_one_kibibyte(client: TestClient) -> None:
    """A huge echoed literal does not make a huge error body; the cut keeps valid UTF-8."""
    response = await _send(client, "select ('" + "é" * 5000 + "')::integer")
    assert response.status == 400, await response.text()
    body = await error_of(response)
    assert body["error"] == "query_failed"
    assert len(body["message"].encode("utf-8")) <= 1100
    assert body["message"].startswith("the database refused the query: invalid input syntax")


# -- 13. JSON values that are not JSON -------------------------------------------------------------------


@pytest.mark.parametrize("literal", ['"\\ud800"', "1e400"])
async def test_json_value_that_is_not_valid_json_is_sent_as_a_string(client: TestClient, literal: str) -> None:
    """A json value no strict parser accepts is sent as a JSON string of its text; the body stays valid JSON."""
    response = await _send(client, f"select '{literal}'::json as j, '[1, 2]'::json as k")
    assert response.status == 200, await response.text()
    body = json.loads(await response.text())
    assert body[0]["data"] == [{"j": literal, "k": [1, 2]}]


async def test_a_jsonb_number_beyond_a_double_is_sent_as_a_string(client: TestClient) -> None:
    """jsonb keeps 1e400 exactly and prints 401 digits, which strict parsers refuse: it goes as a string too."""
    response = await _send(client, "select '1e400'::jsonb as j, '{\"a\": [1, 2.5]}'::jsonb as k")
    assert response.status == 200, await response.text()
    body = json.loads(await response.text())
    assert body[0]["data"] == [{"j": "1" + "0" * 400, "k": {"a": [1, 2.5]}}]


# -- 14. Red team, second round (issue 19): uninterruptible work the first model under-counted -----------

SECOND_ROUND = [
    pytest.param("select (1e131000/7)/(1e65000/3) > 0", "cannot interrupt numeric_div", id="numeric_long_division"),
    pytest.param("select jsonb_path_match(to_jsonb(array_fill(1, array[30000])), '$[*] > $[*]')",
                 "cannot interrupt jsonb_path_match", id="jsonpath_sequence_comparison"),
    pytest.param("select " + " + ".join(f"x{i}" for i in range(85)) + " from public.docs b, " + ", ".join(
        f"lateral (select length(btrim(b.body, '{'b' * 999}a')) as x{i}) s{i}" for i in range(85)),
        "cannot interrupt btrim", id="pulled_up_laterals_add_up"),
    pytest.param("select md5(s || 'a') from (select repeat('x', id * id * 200) s from public.docs offset 0) q",
                 "without a bound", id="number_from_the_data_squared"),
    pytest.param("select count(*) from public.docs group by " + ", ".join(
        f"grouping sets((id + {2 * i}), (id + {2 * i + 1}))" for i in range(11)), "grouping sets",
        id="grouping_sets_planning"),
    pytest.param("select count(*) from (select g, repeat('x', 8000000) from generate_series(1, 80) g intersect "
                 "select g, repeat('x', 8000000) from generate_series(1, 80) g) s", "the hash table of INTERSECT",
                 id="intersect_hash_table"),
]


@pytest.mark.parametrize(("sql", "fragment"), SECOND_ROUND)
async def test_second_round_shapes_are_refused(client: TestClient, sql: str, fragment: str) -> None:
    """Each shape the second red team ran past a 1 s limit (or 500 MB) is refused before it reaches the database."""
    await refused(client, sql, fragment)
