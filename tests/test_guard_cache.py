"""The guard's cache: a decision reused for other numeric constants is always the decision a fresh check makes.

The equivalence test runs every query of the guard's suites (hostile and
legitimate, TPC-H, the runaway and audit probes) through a cache primed with
the query as written and then with several other sets of numeric constants,
and requires, for each text, exactly the outcome the uncached guard gives:
the same refusal, or the same relations, functions, fingerprint and rewritten
statement.
"""

from __future__ import annotations

import ast
import asyncio
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pglast import parser

import test_audit_findings_guarded
import test_getdata_hostile
import test_getdata_runaway
import test_guard_redteam
import test_inheritance
import test_sql_guard
import test_sql_guard_catalog
from drivers.postgres.guard.cache import GuardCache
from drivers.postgres.guard.inheritance import read_as_only
from drivers.postgres.guard.policy import GuardPolicy as QueryPolicy
from drivers.postgres.guard.sql_guard import ParsedQuery, check_query, require_granted
from gateway.errors import QueryFailed, QueryRejected
from gateway.web.keys import POOLS, REGISTRY
from support import GatewayFactory, database_from, grant, read_logs, register_database, user_headers
from tpch_queries import TPCH_QUERIES

PARTITIONED = frozenset({("pub", "parted")})
_NUMBER = re.compile(r"\d")


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a test module's case lists (tuples, pytest.param, dicts, probes)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings(item)
    elif hasattr(value, "values") and hasattr(value, "id"):  # pytest.param
        yield from _strings(value.values)


def _literals_of(module_file: str) -> list[str]:
    """Every plain string literal in a test module's source (its queries written inline in the tests)."""
    tree = ast.parse(Path(module_file).read_text(encoding="utf-8"))
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _suite_queries() -> list[str]:
    sources = [
        _literals_of(test_guard_redteam.__file__), _literals_of(test_sql_guard.__file__),
        _literals_of(test_getdata_hostile.__file__), _literals_of(test_inheritance.__file__),
        test_sql_guard.HOSTILE_QUERIES, test_sql_guard.LEGITIMATE_QUERIES,
        test_sql_guard_catalog.TestWorkAndSizes.ALLOWED, test_sql_guard_catalog.TestWorkAndSizes.REFUSED,
        test_sql_guard_catalog.OPERATORS_ALLOWED, test_sql_guard_catalog.OPERATORS_REFUSED,
        [f"select 1::{name}" for name in test_sql_guard_catalog.PLAIN_TYPES],
        [f"select 1::{name}" for name, _ in test_sql_guard_catalog.REFUSED_TYPES],
        test_getdata_hostile.HOSTILE_QUERIES, test_getdata_hostile.LEGITIMATE_QUERY,
        test_getdata_runaway.RUNAWAY_QUERIES, test_getdata_runaway.ORDINARY_QUERIES,
        test_getdata_runaway.CATALOG_PROBES, list(TPCH_QUERIES.values()),
        [overrun.statement for overrun in test_audit_findings_guarded.OVERRUNS],
        EXTRA_QUERIES,
    ]  # fmt: skip
    found: dict[str, None] = {}
    for source in sources:
        for text in _strings(source):
            if re.match(r"\s*(\(|select|with|table|values|insert|update|delete|explain|copy)", text, re.I):
                found[text] = None
    return list(found)


EXTRA_QUERIES = [
    # -2147483648 is an integer, -2147483649 a bigint: same token length, different types.
    "select -2147483648 + x from s.t", "select -2147483649 + x from s.t", "select array[-2147483648]",
    # Numbers the decision depends on: type modifiers bound cost-driving arguments, float(p) picks a type,
    # size rules read counts, exponents set a number's printed size, the value decides integer or numeric.
    "select ltrim(col, 'x'::char(1000)) from s.t",
    "select strpos(col, cast('x' as varchar(1000))) from s.t",
    "select ltrim(col, 1::float(24)::text) from s.t",
    "select ltrim(col, repeat('ab', 20)) from s.t",
    "select length(repeat('a', 7000000)), lpad('x', 900000), array_fill(1, array[9000])",
    "select strpos(col, 1e0001::text), strpos(col, 1e-0001::text), ltrim(col, 1.5e0003::text) from s.t",
    "select strpos(col, '1e0001'::numeric::text), strpos(col, '[1e0001]'::jsonb::text) from s.t",
    "select 9223372036854775807 + 1, 1000000000000000000 * x from s.t",
    "select count(*) from generate_series(1, 9000) g, generate_series(-10, 10, 3) h",
    "select * from pub.parted where id = 10 union all select * from pub.items* where id = -20 limit 30",
    "select id from s.t where id in (1, 22, 333) order by 1 offset 5",
]


def _variants(sql: str) -> list[str]:
    """``sql`` with the digits of its numeric constants changed, keeping each constant's length."""
    try:
        tokens = parser.scan(sql)
    except parser.ParseError:
        return []
    generator = random.Random(sql)
    makers: list[Callable[[], str]] = [lambda: "9", lambda: "1", lambda: "7", lambda: str(generator.randint(1, 9))]
    variants = []
    for make in makers:
        text = sql
        for token in reversed(tokens):
            if token.name in ("ICONST", "FCONST"):
                number = _NUMBER.sub(lambda _: make(), text[token.start : token.end + 1])
                text = text[: token.start] + number + text[token.end + 1 :]
        if text != sql:
            variants.append(text)
    return variants


def _outcome(decide: Callable[[], ParsedQuery]) -> tuple[Any, ...]:
    try:
        parsed = decide()
    except QueryRejected as refusal:
        return ("refused", refusal.reason, refusal.message)
    except QueryFailed as failure:
        return ("failed", failure.message)
    significant = [
        parsed.sql[t.start : t.end + 1] for t in parser.scan(parsed.sql) if t.name not in ("SQL_COMMENT", "C_COMMENT")
    ]
    return ("accepted", parsed.relations, parsed.functions, parsed.fingerprint, significant)


def test_every_suite_query_gets_the_same_decision_cached_and_fresh(policy: QueryPolicy) -> None:
    """For each suite query and its variants, the cached path answers exactly what a fresh check answers."""
    queries = _suite_queries()
    assert len(queries) > 700
    readable: set[tuple[str, str]] = set()
    for sql in queries:
        try:
            readable |= check_query(sql, None, policy).relations
        except (QueryRejected, QueryFailed):
            pass
    granted = frozenset(readable)

    def fresh(text: str) -> ParsedQuery:
        return require_granted(read_as_only(check_query(text, None, policy), PARTITIONED), granted)

    hits = 0
    mismatches = []
    for sql in queries:
        cache = GuardCache()
        for text in [sql, *_variants(sql), sql]:
            cached = _outcome(lambda: cache.check(text, granted, lambda t: check_query(t, None, policy), PARTITIONED))
            if cached != _outcome(lambda: fresh(text)):
                mismatches.append(text)
        hits += cache.hits
    assert not mismatches, mismatches[:5]
    assert hits > 150  # the cached path was taken, not only fresh checks (189 at the last count)


def _cached(policy: QueryPolicy) -> tuple[GuardCache, Callable[[str], ParsedQuery]]:
    cache = GuardCache()
    granted = frozenset({("s", "t")})

    def check(sql: str) -> ParsedQuery:
        return cache.check(sql, granted, lambda t: check_query(t, None, policy), frozenset())

    return cache, check


def test_a_type_modifier_is_part_of_the_decision(policy: QueryPolicy) -> None:
    """char(10) fits the work budget and char(9999) does not: the second is checked afresh and refused."""
    cache, check = _cached(policy)
    check("select ltrim(col, 'x'::char(10)) from s.t")
    with pytest.raises(QueryRejected):
        check("select ltrim(col, 'x'::char(9999)) from s.t")
    assert cache.hits == 0


def test_a_longer_number_is_checked_afresh(policy: QueryPolicy) -> None:
    """The guard bounds a literal by its printed size, so the key keeps each number's printed size."""
    cache, check = _cached(policy)
    check(f"select ltrim(col, {'1' * 100}::text) from s.t")
    with pytest.raises(QueryRejected, match="ltrim"):
        check(f"select ltrim(col, {'1' * 5000}::text) from s.t")


@pytest.mark.parametrize(("small", "large"), [
    ("1e0001", "1e9999"),      # same length, ten thousand digits apart
    ("1e-0001", "1e-9999"),    # negative exponents print their leading zeros
    ("1.5e0003", "1.5e9993"),
])
def test_an_exponent_is_part_of_the_key(small: str, large: str, policy: QueryPolicy) -> None:
    """strpos over 1e0001::text is accepted and over 1e9999::text refused, though the texts have one length."""
    cache, check = _cached(policy)
    template = "select strpos(repeat({n}::text, 10), {n}::text) from s.t"
    check(template.format(n=small))
    with pytest.raises(QueryRejected, match="strpos"):
        check(template.format(n=large))
    assert cache.hits == 0


def test_a_count_a_rule_reads_is_pinned(policy: QueryPolicy) -> None:
    """repeat('a', 1000000) is accepted and repeat('a', 9000000) refused: the count a size rule reads is keyed."""
    cache, check = _cached(policy)
    check("select length(repeat('a', 1000000))")
    with pytest.raises(QueryRejected, match="max_built_value_bytes"):
        check("select length(repeat('a', 9000000))")
    assert cache.hits == 0


def test_numbers_inside_string_literals_are_part_of_the_key(policy: QueryPolicy) -> None:
    """'1e0001'::numeric and '1e9999'::numeric differ as strings: never one key."""
    cache, check = _cached(policy)
    check("select strpos(repeat('1e0001'::numeric::text, 10), '1e0001'::numeric::text)")
    with pytest.raises(QueryRejected, match="strpos"):
        check("select strpos(repeat('1e9999'::numeric::text, 10), '1e9999'::numeric::text)")


def test_a_number_that_decides_a_type_is_part_of_the_key(policy: QueryPolicy) -> None:
    """9223372036854775807 is a bigint and 9223372036854775808 a numeric: same length, different keys."""
    cache, check = _cached(policy)
    check("select 9223372036854775807 from s.t")
    check("select 9223372036854775808 from s.t")
    assert cache.hits == 0


def test_a_negative_constant_is_checked_afresh(policy: QueryPolicy) -> None:
    """-2147483649 is a bigint and -2147483648 an integer (the grammar negates the token 2147483648 into one):
    the scanner's token is the same kind and length, so a negated constant is pinned, never reused."""
    cache, check = _cached(policy)
    check("select id from s.t where x = -2147483649")
    check("select id from s.t where x = -2147483648")
    check("select id from s.t where x = -2147483650")
    assert cache.hits == 0
    check("select id from s.t where x = 2147483650")  # unsigned: its kind and length are the whole story
    check("select id from s.t where x = 2147483651")
    assert cache.hits == 1


def test_point_lookups_with_other_ids_are_answered_from_the_cache(policy: QueryPolicy) -> None:
    """The first lookup is checked, the next ones of the same constant length reuse it, each with its own ONLY text."""
    cache = GuardCache()
    granted = frozenset({("s", "t")})
    answers = [
        cache.check(f"SELECT id, name FROM s.t WHERE id = {n} ;", granted, lambda t: check_query(t, None, policy),
                    frozenset())  # fmt: skip
        for n in (1005, 1717, 4711, 9999)
    ]
    assert cache.hits == 3
    assert [a.sql for a in answers] == [f"SELECT id, name FROM ONLY s.t WHERE id = {n}" for n in (1005, 1717, 4711, 9999)]
    again = cache.check("SELECT id, name FROM s.t WHERE id = 4711 ;", granted, lambda t: check_query(t, None, policy),
                        frozenset())  # fmt: skip
    assert (cache.exact_hits, again.sql) == (1, "SELECT id, name FROM ONLY s.t WHERE id = 4711")


def test_the_grant_check_runs_for_every_query_from_the_cache(policy: QueryPolicy) -> None:
    """An entry made for one token's query does not let another token read a table it was not granted."""
    cache = GuardCache()
    cache.check("select * from s.t where id = 1", frozenset({("s", "t")}), lambda t: check_query(t, None, policy),
                frozenset())  # fmt: skip
    with pytest.raises(QueryRejected, match="not granted"):
        cache.check("select * from s.t where id = 2", frozenset({("s", "u")}), lambda t: check_query(t, None, policy),
                    frozenset())  # fmt: skip
    assert cache.hits == 1
    with pytest.raises(QueryRejected, match="not granted"):  # the very same text: answered by its exact text
        cache.check("select * from s.t where id = 1", frozenset({("s", "u")}), lambda t: check_query(t, None, policy),
                    frozenset())  # fmt: skip
    assert cache.exact_hits == 1


async def test_getdata_answers_each_constant_through_the_cache(make_gateway: GatewayFactory) -> None:
    """Through HTTP: lookups differing only in the id each answer their own row, the later ones from the cache."""
    with database_from(
        "CREATE SCHEMA sales; CREATE TABLE sales.items (id integer, note text);"
        "INSERT INTO sales.items SELECT g, 'n' || g FROM generate_series(1, 50) g;"
        "CREATE TABLE sales.items_child () INHERITS (sales.items); INSERT INTO sales.items_child VALUES (17, 'child')"
    ) as database:
        client: TestClient = await make_gateway()
        await register_database(client, "shop", database)
        await grant(client, "cache-reader-token-19af", "shop_sales_items")
        for ident in (13, 17, 42):
            answer = await client.get(
                "/GetData",
                params={"local_database_name": "shop", "query": f"select note from sales.items where id = {ident}"},
                headers=user_headers("cache-reader-token-19af"),
            )
            body = await answer.json(content_type=None)
            assert answer.status == 200, body
            assert body[0]["data"] == [{"note": f"n{ident}"}]  # never a row of the child, which has 17 too
        state = client.app[REGISTRY].state
        pool = client.app[POOLS].get(state.databases["shop"])
        assert pool.guard_cache.hits == 2  # type: ignore[attr-defined]


async def test_long_texts_are_checked_off_the_event_loop_with_the_same_decisions(make_gateway: GatewayFactory) -> None:
    """Texts past the inline limit are checked off the event loop (these, over 16 KiB, in the pool's child process,
    ``test_guard_process.py``): a long query answers, a long one reading an ungranted table is refused."""
    with database_from(
        "CREATE SCHEMA sales; CREATE TABLE sales.items (id integer); INSERT INTO sales.items VALUES (1), (2);"
        "CREATE TABLE sales.secret (id integer)"
    ) as database:
        client: TestClient = await make_gateway()
        await register_database(client, "shop", database)
        await grant(client, "long-text-token-4c1e", "shop_sales_items")
        values = ", ".join(str(n) for n in range(2, 8000))
        accepted = f"select id from sales.items where id in ({values}) order by id"
        refused = f"select id from sales.items where id in ({values}) union select id from sales.secret"
        assert len(accepted) > 2048 * 10
        answers = []
        for query in (accepted, refused):
            answer = await client.post(
                "/GetData", json={"local_database_name": "shop", "query": query},
                headers=user_headers("long-text-token-4c1e"),
            )  # fmt: skip
            answers.append((answer.status, await answer.json(content_type=None)))
        assert answers[0][0] == 200 and answers[0][1][0]["data"] == [{"id": 2}]
        assert (answers[1][0], answers[1][1]["error"]) == (400, "query_rejected"), answers[1]
        assert "sales.secret" in answers[1][1]["message"]


async def test_queries_arriving_together_at_a_new_pool_build_its_policy_once(make_gateway: GatewayFactory) -> None:
    """Twelve first queries at once: one catalog read and one policy build, the others wait for it."""
    with database_from("CREATE SCHEMA sales; CREATE TABLE sales.items (id integer); INSERT INTO sales.items VALUES (1)") as database:
        client: TestClient = await make_gateway(log_level="debug", pool_max_size=12, token_query_limit=12)
        await register_database(client, "shop", database)
        await grant(client, "herd-token-7d3a19c0", "shop_sales_items")

        async def lookup(ident: int) -> int:
            answer = await client.get(
                "/GetData", params={"local_database_name": "shop", "query": f"select id from sales.items where id = {ident}"},
                headers=user_headers("herd-token-7d3a19c0"),
            )  # fmt: skip
            await answer.read()
            return answer.status

        assert await asyncio.gather(*(lookup(n) for n in range(12))) == [200] * 12
        entries = await read_logs(client)
        assert [e["event"] for e in entries].count("function_allowlist_loaded") == 1
