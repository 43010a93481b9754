"""Long query texts checked in a pool's child process: the same decision the guard thread gave, and fail closed.

Texts over ``LONG_TEXT_CHARS`` never reach the guard cache; the pool used to
check them in its guard thread, with ``read_as_only(check_query(...))``. The
equivalence test sends every query of the guard's suites, made long by a
comment in front, through a real child and requires exactly the outcome the
in-process guard gives. The HTTP tests run long texts through a gateway: an
inherited table read as ONLY, a repeated text answered without the child, a
child stopped between two texts, and the child ended with its pool.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from aiohttp.test_utils import TestClient

from drivers.postgres.guard.inheritance import read_as_only
from drivers.postgres.guard.process import LONG_TEXT_CHARS, LongTextGuard, PolicySource
from drivers.postgres.guard.sql_guard import check_query
from drivers.postgres.pool import PostgresPool
from gateway.errors import QueryFailed, QueryRejected
from gateway.web.keys import POOLS, REGISTRY
from support import user_headers
from test_guard_cache import PARTITIONED, _outcome, _suite_queries

LONG_IN_LIST = ", ".join(str(n) for n in range(2, 8000))
_PADDING = "/* " + "x" * LONG_TEXT_CHARS + " */ "


def _long_suite_queries() -> list[str]:
    queries = [_PADDING + sql for sql in _suite_queries()]
    queries += [
        f"select id from s.t where id in ({LONG_IN_LIST})",
        f"select pg_sleep(1) where 1 in ({LONG_IN_LIST})",
        "select array[" + ",".join(["1"] * 9000) + "]",
        f"select * from pub.items where id in ({LONG_IN_LIST})",
        f"select * from pub.parted where id in ({LONG_IN_LIST}) union all select * from pub.items* where id = 1",
        _PADDING + "select 1 where '\ud800' = 'x'",  # not UTF-8: refused as in the thread, after the pipe
        _PADDING + "select 1 /* \x00 */",
        _PADDING + "select 1; select 2",
        "select " + "(" * 2000 + "1" + ")" * 2000 + f" where 1 in ({LONG_IN_LIST})",
    ]
    assert all(len(sql) > LONG_TEXT_CHARS for sql in queries)
    return queries


async def test_long_texts_get_the_decision_the_guard_thread_gives(policy_source: PolicySource) -> None:
    """Every suite query, made long: the child's answer is exactly the in-process guard's, refusal or statement."""
    policy = policy_source.build_policy()
    guard = LongTextGuard(policy_source)
    mismatches = []
    try:
        for sql in _long_suite_queries():
            in_process = _outcome(lambda: read_as_only(check_query(sql, None, policy), PARTITIONED))
            in_child = await _child_outcome(guard, sql)
            if in_child != in_process:
                mismatches.append(sql[len(_PADDING) :] if sql.startswith(_PADDING) else sql[:80])
    finally:
        await guard.close()
    assert not mismatches, mismatches[:5]
    assert guard.children_started == 1


async def _child_outcome(guard: LongTextGuard, sql: str) -> tuple[object, ...]:
    try:
        parsed = await guard.check(sql, PARTITIONED)
    except QueryRejected as refusal:
        return ("refused", refusal.reason, refusal.message)
    except QueryFailed as failure:
        return ("failed", failure.message)
    return _outcome(lambda: parsed)


async def test_a_child_that_dies_with_a_text_refuses_it_and_the_next_text_starts_another(
    policy_source: PolicySource,
) -> None:
    """Fail closed: the child killed while it holds a text gives a refusal, never a guess; the next text is checked."""
    guard = LongTextGuard(policy_source)
    sql = f"select 1 where 1 in ({LONG_IN_LIST})"
    try:
        checking = asyncio.ensure_future(guard.check(sql, frozenset()))
        pid = await _condition(lambda: guard.child_pid())
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(QueryRejected, match="could not be checked"):
            await checking
        parsed = await guard.check(sql, frozenset())
        assert parsed.relations == frozenset()
        assert guard.children_started == 2
    finally:
        await guard.close()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
async def test_a_stop_signal_to_the_process_group_is_left_to_the_gateway(
    policy_source: PolicySource, stop: signal.Signals
) -> None:
    """Ctrl-C, a service manager's stop or a closing terminal reach the child too: it keeps checking the text it
    holds and the next, and ends only when the gateway closes it."""
    guard = LongTextGuard(policy_source)
    sql = f"select 1 where 1 in ({LONG_IN_LIST})"
    try:
        await guard.check(sql, frozenset())  # the child is up and has set its signals (not while Python starts)
        pid = guard.child_pid()
        assert pid is not None
        checking = asyncio.ensure_future(guard.check(sql + " ", frozenset()))
        os.kill(pid, stop)
        assert (await checking).relations == frozenset()
        assert (await guard.check(sql + "  ", frozenset())).relations == frozenset()
        assert guard.children_started == 1
    finally:
        await guard.close()


async def test_a_closing_pool_lets_its_child_answer_the_text_it_holds_and_takes_no_more(
    policy_source: PolicySource,
) -> None:
    """Closed while the child checks a text: that text gets its decision, the child ends, a later text fails."""
    guard = LongTextGuard(policy_source)
    sql = f"select 1 where 1 in ({LONG_IN_LIST})"
    checking = asyncio.ensure_future(guard.check(sql, frozenset()))
    pid = await _condition(lambda: guard.child_pid())
    await guard.close()
    assert (await checking).relations == frozenset()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(RuntimeError, match="closed"):
        await guard.check(sql + " ", frozenset())


async def _condition(read: object, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = read()  # type: ignore[operator]
        if value:
            return int(value)
        await asyncio.sleep(0.001)
    raise AssertionError("the condition did not hold in time")


SHOP_SQL = (
    "CREATE SCHEMA sales; CREATE TABLE sales.items (id integer, note text);"
    "INSERT INTO sales.items SELECT g, 'n' || g FROM generate_series(1, 50) g;"
    "CREATE TABLE sales.items_child () INHERITS (sales.items); INSERT INTO sales.items_child VALUES (17, 'child');"
    "CREATE TABLE sales.secret (id integer)"
)


SHOP_GRANTS = {"long-child-token-8e2d": ["shop_sales_items"]}
"""The grants of the ``shop`` fixture (conftest.py), a default gateway with SHOP_SQL registered as "shop"."""


async def _get_data(client: TestClient, query: str) -> tuple[int, object]:
    answer = await client.post(
        "/GetData", json={"local_database_name": "shop", "query": query}, headers=user_headers("long-child-token-8e2d")
    )
    return answer.status, await answer.json(content_type=None)


async def test_long_texts_through_http_read_inherited_tables_as_only_and_repeat_without_the_child(
    shop: TestClient
) -> None:
    """A long text over a table with a child table answers the parent's rows only; sent again, it is answered
    from the decisions kept; a long text reading an ungranted table is refused."""
    client = shop
    query = f"select id, note from sales.items where id in (17, {LONG_IN_LIST}) order by id limit 3"
    for _ in range(2):
        status, body = await _get_data(client, query)
        assert status == 200, body
        assert body[0]["data"] == [  # type: ignore[index]
            {"id": 2, "note": "n2"}, {"id": 3, "note": "n3"}, {"id": 4, "note": "n4"},
        ]  # fmt: skip
    status, body = await _get_data(client, f"select note from sales.items where id in (17, {LONG_IN_LIST}) and id = 17")
    assert (status, body[0]["data"]) == (200, [{"note": "n17"}])  # type: ignore[index]  # never the child's row
    status, body = await _get_data(client, f"select id from sales.secret where id in ({LONG_IN_LIST})")
    assert (status, body["error"]) == (400, "query_rejected"), body  # type: ignore[index]
    assert "sales.secret" in body["message"]  # type: ignore[index]
    guard = _pool(client)._long_texts
    assert guard is not None
    assert (guard.children_started, guard.remembered) == (1, 1)


async def test_a_child_stopped_between_texts_is_replaced_and_ends_with_its_pool(
    shop: TestClient
) -> None:
    """The child killed while idle: the next long text starts another and is answered; closing the pool ends it."""
    client = shop
    first = f"select count(*) as n from sales.items where id in ({LONG_IN_LIST})"
    assert (await _get_data(client, first))[0] == 200
    pool = _pool(client)
    guard = pool._long_texts
    assert guard is not None
    pid = guard.child_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    await _condition(lambda: guard.child_pid() is None or None)
    status, body = await _get_data(client, first + " and id > 1")
    assert (status, body[0]["data"]) == (200, [{"n": 49}])  # type: ignore[index]
    assert guard.children_started == 2
    second = guard.child_pid()
    assert second is not None and second != pid
    await pool.close()
    assert guard.child_pid() is None
    with pytest.raises(ProcessLookupError):
        os.kill(second, 0)


def _pool(client: TestClient) -> PostgresPool:
    state = client.app[REGISTRY].state
    pool = client.app[POOLS].get(state.databases["shop"])
    assert isinstance(pool, PostgresPool)
    return pool
