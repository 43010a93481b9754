"""Queries with ``$1``..``$n``: typed as PostgreSQL deduces parameter types, sized by the values sent (issue 23).

The deduction is compared with the server's own: each statement is prepared without parameter types and
``pg_prepared_statements.parameter_types`` says what PostgreSQL deduced (nothing runs). Sizes and costs read
the values as they read literals, and the guard cache reuses a decision across values only where it read
nothing of them but their kind and printed size.
"""

from __future__ import annotations

import re
from typing import Any

import psycopg2
import pytest

from drivers.postgres.guard.cache import GuardCache
from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.analysis import Analyzer, parse_select
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.sql_guard import MAX_KEPT_VALUE_CHARS, ParsedQuery, _checked, check_query
from gateway.errors import QueryFailed, QueryRejected
from support import connect

GRANTED = frozenset({("s", "t"), ("s", "u")})

DEDUCTIONS = [
    "select $1", "select $1 + 1", "select $1 || 'a'", "select * from s.t where id = $1",
    "select * from s.t where name like $1", "select $1::int", "select $1 + $2", "select coalesce($1, 2)",
    "select case when $1 then 1 end", "select * from s.t where id in ($1, $2)", "select * from s.t where id = any($1)",
    "select lower($1)", "select repeat($1, $2)", "select $1 = $1", "select $1 + 1, $1 || 'a'",
    "select * from s.t where ts > $1", "select * from s.t where doc @> $1", "select array[$1, 1]", "select $2",
    "select $1 limit $2", "select * from s.t order by id limit $1 offset $2", "select x from s.t union select $1",
    "select greatest($1, 1.5)", "select $1 between 1 and 2", "select row($1, 2) = row(1, $2)", "select $1 is null",
    "select $1::text = $1", "select sum($1::numeric)", "select * from generate_series(1, $1)",
    "select $1 + 1 from s.t where name = $1", "select t.id from s.t t join s.u u on u.id = $1",
    "select jsonb_build_object('k', $1)", "select $1::int + $1", "select * from s.t where (id, name) = ($1, $2)",
    "select date_trunc($1, ts) from s.t", "select format('%s-%s', $1, $2)", "select ($1)::jsonb -> 'a'",
    "select repeat($1, $1)",
]


def _server_deduction(connection: Any, sql: str) -> list[int] | str:
    with connection.cursor() as cursor:
        try:
            cursor.execute("DEALLOCATE ALL")
            cursor.execute("PREPARE deduced AS " + sql)
        except psycopg2.Error as error:
            return "error: " + str(error).splitlines()[0]
        cursor.execute("SELECT parameter_types::oid[] FROM pg_prepared_statements WHERE name = 'deduced'")
        return [int(oid) for oid in cursor.fetchone()[0]]


def _model_deduction(policy: GuardPolicy, sql: str) -> list[int] | str:
    count = max((int(n) for n in re.findall(r"\$(\d+)", sql)), default=0)
    analyzer = Analyzer(policy.catalog, policy.coercions, ["1"] * count)
    try:
        analyzer.analyze_statement(parse_select(sql))
    except (AnalysisError, Unsupported) as error:
        return "error: " + error.message
    return list(analyzer.parameter_types)


def test_parameter_types_are_deduced_as_the_server_deduces_them(guard_database: str, policy: GuardPolicy) -> None:
    """Each statement's parameter types (or its refusal) are what PostgreSQL's parse analysis deduces."""
    connection = connect(guard_database)
    try:
        differences = []
        for sql in DEDUCTIONS:
            server, model = _server_deduction(connection, sql), _model_deduction(policy, sql)
            if isinstance(server, str) != isinstance(model, str) or (not isinstance(server, str) and server != model):
                differences.append((sql, server, model))
            elif isinstance(server, str) and isinstance(model, str):
                assert server.split(": ", 1)[1].split(" (")[0] in model, (sql, server, model)
    finally:
        connection.close()
    assert not differences, differences


def _check(sql: str, policy: GuardPolicy, *values: str | None) -> ParsedQuery:
    return check_query(sql, GRANTED, policy, tuple(values))


def test_values_are_sized_as_the_literals_they_replace(policy: GuardPolicy) -> None:
    """A count, a pattern or a document sent as a parameter counts as it would written in the text."""
    assert _check("select repeat('x', $1)", policy, "1000").parameter_types == (23,)
    with pytest.raises(QueryRejected, match="max_built_value_bytes"):
        _check("select repeat('x', $1)", policy, "100000000")
    _check("select strpos(col, $1) from s.t", policy, "a" * 100)
    with pytest.raises(QueryRejected, match="cannot interrupt strpos"):
        _check("select strpos(repeat('a', 100000), $1)", policy, "a" * 90000)
    with pytest.raises(QueryRejected, match="max_built_value_bytes"):
        _check("select $1::jsonb", policy, "[" + ",".join(["1e99999"] * 100) + "]")


def test_the_values_sent_must_be_the_ones_the_query_uses(policy: GuardPolicy) -> None:
    """A `$n` without a value is refused; a value the query does not use is the database's error, as PostgreSQL's
    bind says; a parameter whose type nothing decides is refused as PostgreSQL refuses it."""
    with pytest.raises(QueryRejected, match=r"\$2 has no value"):
        _check("select $1 + $2", policy, "1")
    with pytest.raises(QueryFailed, match="2 parameters were sent, but the query uses 1"):
        _check("select $1 + 1", policy, "1", "2")
    with pytest.raises(QueryFailed, match=r"could not determine data type of parameter \$1"):
        _check("select $1 is null", policy, "1")
    with pytest.raises(QueryFailed, match=r"inconsistent types deduced for parameter \$1"):
        _check("select repeat($1, $1)", policy, "1")


def _cached(policy: GuardPolicy) -> tuple[GuardCache, Any]:
    cache = GuardCache()

    def check(sql: str, *values: str | None) -> ParsedQuery:
        parameters = tuple(values)
        return cache.check(sql, GRANTED, lambda text: check_query(text, None, policy, parameters), frozenset(),
                           parameters)

    return cache, check


def test_a_decision_is_reused_for_other_values_only_where_it_read_nothing_of_them(policy: GuardPolicy) -> None:
    """A point lookup by another id, or another name, of the same size reuses the decision; a count the size
    rules read is pinned; a value of another size is checked afresh."""
    cache, check = _cached(policy)
    check("select * from s.t where id = $1", "17")
    check("select * from s.t where id = $1", "42")
    assert cache.hits == 1
    check("select * from s.t where id = $1", "123456")
    assert cache.hits == 1
    check("select repeat('x', $1)", "10")
    check("select repeat('x', $1)", "20")
    assert cache.hits == 1
    with pytest.raises(QueryRejected, match="max_built_value_bytes"):
        check("select repeat('x', $1)", "99999999")
    check("select * from s.t where name = $1", "ann")
    check("select * from s.t where name = $1", "bob")
    assert cache.hits == 2
    check("select * from s.t where name = $1", "anne")
    assert cache.hits == 2
    check("select * from s.t where id = $1", "42")
    assert cache.exact_hits == 1


PINNED = [
    ("select $1::int[]", "{1,2,3}", "{4,5,6}"),  # an array's elements
    ("select $1::jsonb", '{"a": 1}', '[[[[1]]]]'),  # a document's structure
    ("select $1::numeric", "NaN", "abc"),  # a numeric that is not number-shaped
    ("select format($1, name) from s.t", "%s", "%I"),  # a template a size rule reads
    ("select replace(repeat(name, 10), $1, 'xyz') from s.t", "ab", "cd"),  # a needle a size rule reads
    ("select split_part(name, $1, 2) from s.t", "ab", "cd"),
    ("select to_jsonb(row($1::json, name)) from s.t", "[1e9]", '"abc"'),  # json read where it is walked
]


@pytest.mark.parametrize(("sql", "first", "second"), PINNED)
def test_a_value_read_for_more_than_its_size_is_pinned(policy: GuardPolicy, sql: str, first: str,
                                                       second: str) -> None:
    """Another value of the same length is checked afresh where the guard read the value itself (``Param.text``
    marks it read; only the byte length and a number's printed size are read without)."""
    cache, check = _cached(policy)
    check(sql, first)
    assert check(sql, first).parameters_read == frozenset({1})
    try:
        check(sql, second)
    except (QueryRejected, QueryFailed):
        pass  # refused afresh: the decision was not reused
    assert cache.hits == 0


def test_a_thousand_names_of_one_length_share_one_decision(policy: GuardPolicy) -> None:
    """The key holds a text value's length, not the text: one query shape with 1 000 names is one entry."""
    cache, check = _cached(policy)
    for number in range(1000):
        check("select id from s.t where name = $1", f"name-{number:04d}")
    assert cache.hits == 999


def test_long_values_are_not_kept_by_the_caches(policy: GuardPolicy) -> None:
    """A key holds its values: past ``MAX_KEPT_VALUE_CHARS`` neither the guard's memo nor the exact answers keep
    a decision by them (a body may hold a MiB of values); the entry keyed by the value's length still serves."""
    cache, check = _cached(policy)
    long_value = "x" * (MAX_KEPT_VALUE_CHARS + 1)
    memo_before = _checked.cache_info()
    check("select * from s.t where name = $1", long_value)
    memo_after = _checked.cache_info()
    assert (memo_after.hits, memo_after.misses) == (memo_before.hits, memo_before.misses)  # not asked: not kept
    assert not [key for key in cache._answers if isinstance(key, tuple) and long_value in key[1]]  # noqa: SLF001
    check("select * from s.t where name = $1", "y" * len(long_value))
    assert cache.hits == 1
    check("select * from s.t where name = $1", "short")
    assert _checked.cache_info().misses == memo_before.misses + 1
