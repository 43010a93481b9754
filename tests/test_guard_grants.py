"""Narrowed grants enforced by the guard on raw SQL: granted columns, filtered rows, no side channel (issue 22).

The guard's rewrite is run and the rewritten text is executed on a real database (``accounts``: tenants 42
and 7, an index on ``id``); each shape must show the granted columns of the rows the filter passes, and only
those. Each test also runs the query without the rewrite where that shows what the rewrite prevents, so it
can fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support import connect, database_from, run_sql

from drivers.postgres.guard.grants.enforce import check_narrowed
from drivers.postgres.guard.grants.row_filters import RowFilterRefused, normalized_filter
from drivers.postgres.guard.grants.table_grant import TableGrant
from drivers.postgres.guard.model.catalog import CATALOG_SQL, Catalog
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.sql_guard import check_query
from gateway.errors import QueryFailed, QueryRejected

ACCOUNTS_SQL = """
CREATE TABLE public.accounts (id integer PRIMARY KEY, tenant integer NOT NULL, balance integer NOT NULL,
    email text NOT NULL, note text);
INSERT INTO public.accounts SELECT i, CASE WHEN i % 2 = 0 THEN 42 ELSE 7 END, i % 100,
    'user' || i || '@example.com', 'note ' || i FROM generate_series(1, 20000) i;
UPDATE public.accounts SET balance = 42 WHERE tenant = 7;
UPDATE public.accounts SET balance = 1 WHERE tenant = 42 AND balance = 42;
CREATE TABLE public.branches (id integer PRIMARY KEY, account_id integer, city text);
INSERT INTO public.branches SELECT i, i, 'city ' || i FROM generate_series(1, 100) i;
CREATE TABLE public.docs (id integer PRIMARY KEY, tenant integer NOT NULL, body text NOT NULL);
INSERT INTO public.docs SELECT i, 1, 'visible ' || (i % 5) FROM generate_series(1, 500) i;
INSERT INTO public.docs SELECT 500 + i, 2, 'HIDDEN secret' FROM generate_series(1, 20000) i;
ANALYZE public.accounts;
ANALYZE public.branches;
ANALYZE public.docs;
"""
GRANTED = frozenset({("public", "accounts"), ("public", "branches")})
VISIBLE = ["id", "balance", "note"]


@pytest.fixture(scope="module")
def accounts_database() -> Iterator[str]:
    """A scratch database with the accounts of two tenants."""
    with database_from(ACCOUNTS_SQL) as name:
        yield name


@pytest.fixture(scope="module")
def accounts_policy(accounts_database: str) -> GuardPolicy:
    """The guard's policy built from that database's catalog."""
    (row,) = run_sql(accounts_database, CATALOG_SQL)
    return GuardPolicy.from_catalog(Catalog.from_row(row))


@pytest.fixture(scope="module")
def narrowing(accounts_policy: GuardPolicy) -> dict[tuple[str, str], TableGrant]:
    """Tenant 42's rows of accounts, without tenant and email."""
    row_filter = normalized_filter("public", "accounts", "accounts.tenant = 42", accounts_policy)
    return {("public", "accounts"): TableGrant(columns=tuple(VISIBLE), row_filter=row_filter)}


def _run(database: str, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    connection = connect(database)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return [column.name for column in cursor.description or ()], cursor.fetchall()
    finally:
        connection.close()


def _narrowed(sql: str, policy: GuardPolicy, narrowing: dict[tuple[str, str], TableGrant]) -> str:
    return check_narrowed(sql, GRANTED, policy, narrowing).parsed.sql


SHAPES = [
    pytest.param("select * from public.accounts", id="star"),
    pytest.param("select a.* from public.accounts a", id="alias_star"),
    pytest.param("select row_to_json(a) as r from public.accounts a", id="whole_row_json"),
    pytest.param("select a as r from public.accounts a", id="whole_row"),
    pytest.param("table public.accounts", id="table"),
    pytest.param("select x.* from (select * from public.accounts) x", id="sub_select"),
    pytest.param("with c as (select * from public.accounts) select * from c", id="cte"),
    pytest.param("select * from public.accounts union all select * from public.accounts", id="union"),
    pytest.param("select a.*, b.city from public.accounts a join public.branches b on b.account_id = a.id",
                 id="join"),
    pytest.param("select count(*) as n, sum(balance) as s, max(id) as m from public.accounts", id="aggregate"),
    pytest.param("select id, row_number() over (order by id) as n from public.accounts", id="window"),
]


@pytest.mark.parametrize("sql", SHAPES)
def test_every_shape_sees_granted_columns_of_filtered_rows(
    sql: str, accounts_database: str, accounts_policy: GuardPolicy, narrowing: dict[tuple[str, str], TableGrant]
) -> None:
    """Whatever the shape, the answer holds no hidden column and no row of tenant 7."""
    columns, rows = _run(accounts_database, _narrowed(sql, accounts_policy, narrowing))
    text = repr(rows) + repr(columns)
    assert "tenant" not in columns and "email" not in columns and "@example.com" not in text
    odd_ids = {row[0] for row in rows if isinstance(row[0], int) and row[0] % 2 == 1 and "id" in columns[:1]}
    assert not odd_ids
    if "aggregate" in sql or "count(*)" in sql:
        assert rows[0][0] == 10000  # tenant 42's rows only
    full_columns, full_rows = _run(accounts_database, sql)
    assert full_rows != rows or full_columns != columns  # unrewritten, the same text shows more


@pytest.mark.parametrize("sql", [
    "select email from public.accounts", "select a.tenant from public.accounts a",
    "select ctid from public.accounts", "select public.accounts.id from public.accounts",
    "select * from public.accounts where email like '%'",
])
def test_a_hidden_column_is_as_unknown_as_a_missing_one(
    sql: str, accounts_policy: GuardPolicy, narrowing: dict[tuple[str, str], TableGrant]
) -> None:
    """Naming a hidden column (or a system column, or the table by schema) is the error a missing name gets."""
    with pytest.raises(QueryFailed) as hidden:
        check_narrowed(sql, GRANTED, accounts_policy, narrowing)
    missing = sql.replace("email", "nosuch").replace("tenant", "nosuch").replace("ctid", "nosuch")
    if missing != sql:
        with pytest.raises(QueryFailed) as absent:
            check_narrowed(missing, GRANTED, accounts_policy, narrowing)
        assert hidden.value.message.replace("email", "nosuch").replace("tenant", "nosuch").replace(
            "ctid", "nosuch") == absent.value.message
    check_query(sql, GRANTED, accounts_policy)  # the whole grant reads it


@pytest.mark.parametrize("condition", [
    "1 / (balance - 42) > 0",
    "(case when balance = 42 then 'x' else '1' end)::int > 0",
    "exists (select 1 where 1 / (balance - 42) > 0)",
    "case when balance = 42 then 1 / (balance - 42) else 1 end = 1",
    "(case when balance = 42 then array[array[id], array[id, id]] end) is null",
])
def test_a_condition_never_runs_on_a_row_the_filter_removes(
    condition: str, accounts_database: str, accounts_policy: GuardPolicy, narrowing: dict[tuple[str, str], TableGrant]
) -> None:
    """Only hidden rows have balance 42: a condition that fails on them fails unrewritten, never rewritten."""
    sql = f"select id from public.accounts where id > 0 and {condition}"
    _run(accounts_database, _narrowed(sql, accounts_policy, narrowing))
    with pytest.raises(Exception):  # noqa: B017  (division by zero or a failed cast: the side channel)
        _run(accounts_database, sql)


def test_a_point_lookup_keeps_its_index(
    accounts_database: str, accounts_policy: GuardPolicy, narrowing: dict[tuple[str, str], TableGrant]
) -> None:
    """The primary-key condition is copied inside the fence: the plan is an index scan, not a sequential one."""
    rewritten = _narrowed("select * from public.accounts where id = 5000", accounts_policy, narrowing)
    _, plan = _run(accounts_database, "explain " + rewritten)
    text = "\n".join(line for (line,) in plan)
    assert "Index Scan using accounts_pkey" in text and "Seq Scan" not in text, text
    assert _run(accounts_database, rewritten)[1] == [(5000, 0, "note 5000")]
    assert _run(accounts_database, _narrowed("select * from public.accounts where id = 5001", accounts_policy,
                                             narrowing))[1] == []


def test_nothing_narrowed_leaves_the_text_alone(accounts_policy: GuardPolicy) -> None:
    """A token whose grants are whole, or a query of other tables, is checked as it always was."""
    sql = "select * from public.branches where id = 1"
    narrowed = check_narrowed(sql, GRANTED, accounts_policy, {("public", "accounts"): TableGrant(columns=("id",))})
    assert narrowed.parsed.sql == sql and narrowed.edits == ()


@pytest.mark.parametrize(("row_filter", "fragment"), [
    ("tenant = 42 UNION SELECT 1 FROM public.branches", "one boolean expression"),
    ("tenant = 42) OR (true", "does not parse"),
    ("branches.id = 1", "not of branches"),
    ("id in (select account_id from public.branches)", "sub-select"),
    ("random() < 0.5", "random"),
    ("balance + 1", "argument of WHERE must be type boolean"),
    ("pg_read_file('/etc/passwd') = ''", "pg_read_file"),
    ("nosuch = 1", 'column "nosuch" does not exist'),
])
def test_a_row_filter_is_checked_when_granted(row_filter: str, fragment: str, accounts_policy: GuardPolicy) -> None:
    """A filter must be one boolean expression over the table's own columns that the guard allows."""
    with pytest.raises(RowFilterRefused) as refused:
        normalized_filter("public", "accounts", row_filter, accounts_policy)
    assert fragment in refused.value.message


def test_a_row_filter_is_written_without_qualifiers(accounts_policy: GuardPolicy) -> None:
    """Qualified by the table or by schema and table, the filter is embedded with bare column names."""
    assert normalized_filter("public", "accounts", "public.accounts.tenant = 42 and accounts.balance > 0",
                             accounts_policy) == "tenant = 42 AND balance > 0"


def _estimated_rows(database: str, sql: str) -> int:
    (((plan,),),) = [_run(database, "explain (format json) " + sql)[1]]
    return int(plan[0]["Plan"]["Plan Rows"])


def test_a_plan_never_tells_what_the_hidden_rows_hold(accounts_database: str, accounts_policy: GuardPolicy) -> None:
    """The planner's estimates through a filtered grant ignore the statistics, which describe hidden rows too."""
    docs = {("public", "docs"): TableGrant(columns=None, row_filter=normalized_filter(
        "public", "docs", "tenant = 1", accounts_policy))}
    granted = frozenset({("public", "docs")})

    def estimate(condition: str) -> int:
        sql = f"select id from public.docs d where {condition}"
        return _estimated_rows(accounts_database, check_narrowed(sql, granted, accounts_policy, docs).parsed.sql)

    # Only hidden rows hold 'HIDDEN secret' (20 000 of them); none holds 'ZZZ'. Told apart, the estimate (and
    # so a join order, the rows' order) would tell a hidden value, one LIKE prefix at a time. Outside the
    # fence (LIKE) or copied into it (= and ^@ are leakproof), the condition may not meet the statistics.
    for hidden, absent in [("d.body like 'HIDDEN%'", "d.body like 'ZZZ%'"),
                           ("d.body = 'HIDDEN secret'", "d.body = 'ZZZ'"),
                           ("d.body ^@ 'HIDDEN'", "d.body ^@ 'ZZZ'")]:
        assert estimate(hidden) == estimate(absent), hidden
    plain_fence = ("select id from (select id, body from only public.docs d where tenant = 1 offset 0) d "
                   "where d.body like '{}'")
    assert _estimated_rows(accounts_database, plain_fence.format("HIDDEN%")) > 10 * _estimated_rows(
        accounts_database, plain_fence.format("ZZZ%")), "the side channel a plain fence leaves is there to close"


def test_an_array_of_arrays_is_not_leakproof(accounts_policy: GuardPolicy) -> None:
    """ARRAY[ARRAY[..], ARRAY[.., ..]] fails when its sub-arrays differ in length: an error from the values."""
    from drivers.postgres.guard.grants.leakproof import inner_relations, leakproof, where_conjuncts
    from drivers.postgres.guard.model.analysis import Analyzer, parse_select

    def copyable(condition: str) -> bool:
        query = Analyzer(accounts_policy.catalog, accounts_policy.coercions).analyze_statement(
            parse_select(f"select id from public.accounts a where {condition}"))
        return leakproof(where_conjuncts(query)[0], inner_relations(query)[0])

    assert copyable("array[a.id, a.balance] is not null")
    assert not copyable("(case when a.id = 8 then array[array[a.id], array[a.id, a.id]] end) is null")


def test_a_filter_of_several_terms_any_of_them_not_leakproof(
    accounts_database: str, accounts_policy: GuardPolicy
) -> None:
    """A filter whose first AND term is not leakproof (LIKE) reads as any other: its terms are the filter's."""
    narrowing = {("public", "accounts"): TableGrant(columns=tuple(VISIBLE), row_filter=normalized_filter(
        "public", "accounts", "note LIKE 'note 1%' AND tenant = 42", accounts_policy))}
    rewritten = _narrowed("select count(*) from public.accounts", accounts_policy, narrowing)  # nothing copied
    assert _run(accounts_database, rewritten)[1] == _run(
        accounts_database, "select count(*) from public.accounts where note like 'note 1%' and tenant = 42")[1]


def test_a_refusal_of_the_rewritten_query_does_not_tell_the_filter(accounts_policy: GuardPolicy) -> None:
    """What the guard refuses in the rewritten text is told without it: no filter text, no position in it."""
    messages = set()
    for row_filter in ("tenant = 42", "tenant = 42 AND email NOT LIKE '%@competitor.example'"):
        narrowing = {("public", "accounts"): TableGrant(columns=tuple(VISIBLE), row_filter=normalized_filter(
            "public", "accounts", row_filter, accounts_policy))}
        with pytest.raises(QueryRejected) as refused:
            check_narrowed("select * from public.U&\"accounts\" UESCAPE '!'", GRANTED, accounts_policy, narrowing)
        messages.add(refused.value.message)
    assert len(messages) == 1 and "tenant" not in messages.pop()


def test_parameter_values_are_not_kept_by_the_rewrite(
    accounts_policy: GuardPolicy, narrowing: dict[tuple[str, str], TableGrant]
) -> None:
    """The rewrite's memo holds the query's shape: a MiB value sent with each query is checked and forgotten."""
    from drivers.postgres.guard.grants import enforce

    sql = "select id from public.accounts where note = $1"
    check_narrowed(sql, GRANTED, accounts_policy, narrowing, ("a",))
    before = enforce._rewrite.cache_info().currsize
    for value in ("b" * 1000, "c" * 2000, "d"):
        check_narrowed(sql, GRANTED, accounts_policy, narrowing, (value,))
    assert enforce._rewrite.cache_info().currsize == before


def test_the_check_refuses_a_narrowed_table_read_outside_its_fence(
    accounts_policy: GuardPolicy, narrowing: dict[tuple[str, str], TableGrant]
) -> None:
    """The post-condition on the rewritten query: reading the table any other way is refused, never run."""
    from drivers.postgres.guard.grants.rewrite import verify_fenced
    from drivers.postgres.guard.model.analysis import Analyzer, parse_select

    def analysed(sql: str) -> Any:
        return Analyzer(accounts_policy.catalog, accounts_policy.coercions).analyze_statement(parse_select(sql))

    with pytest.raises(QueryRejected, match="internal check"):
        verify_fenced(analysed("select * from public.accounts"), narrowing)
    with pytest.raises(QueryRejected, match="internal check"):  # a fence with a leaking condition inside
        verify_fenced(analysed("select * from (select id, balance, note from public.accounts where "
                               "1 / (balance - 42) > 0 and tenant = 42 offset 0) t"), narrowing)
    with pytest.raises(QueryRejected, match="internal check"):  # a hidden column leaving the fence
        verify_fenced(analysed("select * from (select id, balance, note, email from public.accounts where "
                               "tenant = 42 offset 0) t"), narrowing)
    with pytest.raises(QueryRejected, match="internal check"):  # plain columns: the planner reads hidden rows' stats
        verify_fenced(analysed("select * from (select id, balance, note from public.accounts where true and "
                               "id = 5 and tenant = 42 offset 0) t"), narrowing)
    verify_fenced(analysed("select * from (select coalesce(id) as id, coalesce(balance) as balance, coalesce(note) "
                           "as note from public.accounts where true and id = 5 and (tenant = 42) offset 0) t"), narrowing)


def test_narrowed_decisions_are_reused_across_numeric_constants(
    accounts_policy: GuardPolicy, narrowing: dict[tuple[str, str], TableGrant]
) -> None:
    """A point lookup with other ids is answered from the entry, exactly as a fresh check and rewrite answers."""
    from drivers.postgres.guard.grants.narrowed_cache import NarrowedGuardCache
    from drivers.postgres.guard.grants.table_grant import narrowing_key
    from drivers.postgres.guard.inheritance import read_as_only

    cache, key = NarrowedGuardCache(), narrowing_key(narrowing)

    def fresh(text: str) -> Any:
        return check_narrowed(text, GRANTED, accounts_policy, narrowing)

    def outcome(decide: Any) -> Any:
        try:
            parsed = decide()
        except (QueryRejected, QueryFailed) as refusal:
            return ("refused", refusal.message)
        return (parsed.sql, parsed.relations, parsed.fingerprint)

    texts = [f"select * from public.accounts a where a.id = {n} and note like 'n%'" for n in (5, 6, 7, 123456)] + [
        f"select repeat(note, {n}) from public.accounts where id = 1 /* {n} */" for n in (2, 3, 2000000)] + [
        f"select * from public.accounts where id between {n} and {n + 10} order by id limit {n}" for n in (1, 2)] + [
        f"  /* lead */ select id from public.accounts x where id = {n} ; -- tail {n}\n" for n in (8, 9)] + [
        f"select id from public.accounts where id = {n} /* c */ and balance > {n};" for n in (10, 11)] + [
        f"select * from public.accounts a{n % 2}" for n in (1, 3)] + ["table public.accounts  ;  "] * 2
    for text in texts:
        cached = outcome(lambda: cache.check(text, GRANTED, key, fresh, frozenset()))
        assert cached == outcome(lambda: read_as_only(fresh(text).parsed, frozenset())), text
    assert cache.hits >= 2  # ids 6 and 7 reuse the decision for 5; a repeat count is pinned, so 3 does not
    # The point lookups' entries make the rewrite and the ONLY rewrite in one step, without a second scan.
    assert sum(entry.combined is not None for entry in cache._entries.values()) >= 4
    assert cache.check(texts[2], GRANTED, key, fresh, frozenset()).sql.count("a.id = 7") == 2  # copied inside too
