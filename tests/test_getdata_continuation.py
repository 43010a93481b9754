"""GetData past row_limit over real HTTP: continuation tokens read a result page by page from one snapshot.

A JSON or NDJSON answer the row limit cut carries ``next`` (and
``X-Continuation`` when sent whole); GetData with ``continuation`` and the same
query reads the next page from the same cursor. The tests compare the pages
with psycopg2's read of the table, watch the held backend in pg_stat_activity
(idle in transaction) to see a held result released, and hold the token's
binding, its single use, the grants, expiry and the bounds to what
docs/api.md promises.
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from support import (
    ADMIN_TOKEN,
    GatewayFactory,
    admin_headers,
    call_process,
    error_of,
    eventually,
    free_port,
    grant,
    register_database,
    register_in_process,
    run_sql,
    start_gateway_process,
    stop_process,
    user_headers,
    wait_until,
    wait_until_listening,
)

from gateway.databases.continuations import EXPIRED, MADE_ROOM, READ_ALREADY, REVOKED, UNKNOWN
from gateway.web.keys import CONTINUATIONS

TOKEN = "continuation-reader-token-1"
OTHER = "continuation-other-token-22"
ROWS = 2500
LIMIT = 1000

SETUP_SQL = f"""
CREATE TABLE public.items (id integer PRIMARY KEY, note text);
INSERT INTO public.items SELECT g, 'note ' || g FROM generate_series(1, {ROWS}) AS g;
CREATE TABLE public.wide (id integer PRIMARY KEY, note text);
INSERT INTO public.wide SELECT g, repeat('w', 400) || g FROM generate_series(1, {ROWS}) AS g;
CREATE TABLE public.huge (id integer PRIMARY KEY, note text);
INSERT INTO public.huge SELECT g, repeat('h', 8000) || g FROM generate_series(1, {ROWS}) AS g;
"""
SHOP_SQL = SETUP_SQL
"""The module's scratch database (conftest.py's ``shop_database``)."""
ITEMS = "SELECT id, note FROM public.items"
WIDE = "SELECT id, note FROM public.wide"
HUGE = "SELECT id, note FROM public.huge"
"""Pages of 8 MB: more than the sockets' buffers take, so a client that leaves mid-page is seen leaving."""
TYPED = (
    "SELECT i.id, i.id * 1.25::numeric AS amount, timestamp '2024-01-01' + i.id * interval '1 hour' AS at, "
    "jsonb_build_object('g', i.id, 'tags', jsonb_build_array('t' || i.id)) AS doc, ARRAY[i.id, i.id + 1] AS pair, "
    "interval '1 minute' * i.id AS span FROM public.items AS i ORDER BY i.id"
)
"""Columns that psycopg2 casts in Python (numeric, timestamp, jsonb, arrays, interval): later batches come as text."""


async def _gateway(make_gateway: GatewayFactory, shop_database: str, **settings: Any) -> TestClient:
    client = await make_gateway(**{"row_limit": LIMIT, **settings})
    await register_database(client, "shop", shop_database)
    for token in (TOKEN, OTHER):
        for table in ("shop_public_items", "shop_public_wide", "shop_public_huge"):
            await grant(client, token, table)
    return client


async def _get(client: TestClient, query: str, token: str = TOKEN, **params: str) -> Any:
    return await client.get(
        "/GetData", params={"local_database_name": "shop", "query": query, **params}, headers=user_headers(token)
    )


async def _page(client: TestClient, query: str, result_format: str = "json", **params: str) -> dict[str, Any]:
    """One page's rows, its count line and its next token (None when absent)."""
    response = await _get(client, query, format=result_format, **params)
    assert response.status == 200, await response.text()
    text = await response.text()
    if result_format == "json":
        body = json.loads(text)[0]
        rows = [(row["id"], row["note"]) for row in body["data"]]
        counts = {key: body[key] for key in ("row_count", "truncated", "next") if key in body}
    else:
        lines = [json.loads(line) for line in text.splitlines()]
        rows = [(row["id"], row["note"]) for row in lines[:-1]]
        counts = lines[-1]
    return {"rows": rows, "counts": counts, "header": response.headers.get("X-Continuation")}


def _backends(shop_database: str) -> int:
    return run_sql(None, "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (shop_database,))[0][0]


def _held_backends(shop_database: str) -> int:
    """Backends of ``shop_database`` idle inside a transaction: a held result's, between its pages."""
    return run_sql(
        None,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND state LIKE 'idle in transaction%%'",
        (shop_database,),
    )[0][0]


@pytest.mark.parametrize("query", [ITEMS, WIDE], ids=["sent_whole", "streamed"])
async def test_pages_read_one_snapshot_whatever_is_inserted_between_them(
    make_gateway: GatewayFactory, shop_database: str, query: str
) -> None:
    client = await _gateway(make_gateway, shop_database)
    table = query.split()[-1]
    expected = sorted(run_sql(shop_database, f"SELECT id, note FROM {table}"))
    read: list[tuple[int, str]] = []
    page = await _page(client, query)
    formats = iter(["ndjson", "json", "ndjson"])
    while True:
        read += page["rows"]
        counts = page["counts"]
        if query == ITEMS:  # sent whole: the token also in the header
            assert page["header"] == counts.get("next")
        else:
            assert page["header"] is None
        if "next" not in counts:
            assert counts["truncated"] is False
            break
        assert counts["truncated"] is True and counts["row_count"] == LIMIT
        # Another client adds rows between pages; the held snapshot never shows them.
        run_sql(shop_database, f"INSERT INTO {table} SELECT max(id) + 1, 'late' FROM {table}")
        page = await _page(client, query, next(formats), continuation=counts["next"])
    assert len(read) == ROWS
    assert sorted(read) == expected
    assert _held_backends(shop_database) == 0  # the last page gave the connection back


async def test_a_token_fetches_its_page_once_with_its_own_user_token_and_query(
    make_gateway: GatewayFactory, shop_database: str
) -> None:
    client = await _gateway(make_gateway, shop_database)
    first = await _page(client, ITEMS)
    token = first["counts"]["next"]

    other = await _get(client, ITEMS, OTHER, continuation=token)
    assert other.status == 410
    assert (await error_of(other))["message"] == UNKNOWN
    altered = token[:10] + ("A" if token[10] != "A" else "B") + token[11:]
    forged = await _get(client, ITEMS, continuation=altered)
    assert forged.status == 410
    assert await error_of(forged) == {"status": "error", "error": "continuation_gone", "message": UNKNOWN}
    garbage = await _get(client, ITEMS, continuation="not-a-token")
    assert garbage.status == 400
    another_query = await _get(client, ITEMS + " WHERE id > 0", continuation=token)
    assert another_query.status == 400
    csv = await _get(client, ITEMS, format="csv", continuation=token)
    assert csv.status == 400

    second = await _page(client, ITEMS, continuation=token)
    assert second["rows"][0] == (LIMIT + 1, f"note {LIMIT + 1}")
    replayed = await _get(client, ITEMS, continuation=token)
    assert replayed.status == 410
    assert (await error_of(replayed))["message"] == READ_ALREADY
    third = await _page(client, ITEMS, continuation=second["counts"]["next"])
    assert "next" not in third["counts"]
    after_end = await _get(client, ITEMS, continuation=second["counts"]["next"])
    assert after_end.status == 410


async def test_a_revoked_grant_ends_the_result_at_its_next_page(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await _gateway(make_gateway, shop_database)
    token = (await _page(client, ITEMS))["counts"]["next"]
    assert _held_backends(shop_database) == 1
    revoked = await client.delete(
        "/GrantTableAccess",
        params={"user_token": TOKEN, "local_table_name": "shop_public_items"},
        headers=admin_headers(),
    )
    assert revoked.status == 200, await revoked.text()
    denied = await _get(client, ITEMS, continuation=token)
    assert denied.status == 403
    await wait_until(lambda: _held_backends(shop_database) == 0, 10, "the held result closed")
    again = await _get(client, ITEMS, continuation=token)
    assert (await error_of(again))["message"] == REVOKED


async def test_an_idle_held_result_expires(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await _gateway(make_gateway, shop_database, continuation_expiry_seconds=0.3)
    token = (await _page(client, ITEMS))["counts"]["next"]
    await wait_until(lambda: _held_backends(shop_database) == 0, 10, "the idle held result closed by its expiry")
    expired = await _get(client, ITEMS, continuation=token)
    assert expired.status == 410
    assert (await error_of(expired))["message"] == EXPIRED


async def test_a_token_at_its_query_limit_closes_its_oldest_idle_held_result(
    make_gateway: GatewayFactory, shop_database: str
) -> None:
    client = await _gateway(make_gateway, shop_database, token_query_limit=1, acquire_timeout=1.0)
    token = (await _page(client, ITEMS))["counts"]["next"]
    # The token's one turn is held: its next query does not wait for it, it takes it.
    other_query = await _get(client, "SELECT count(*) AS n FROM public.items")
    assert other_query.status == 200, await other_query.text()
    closed = await _get(client, ITEMS, continuation=token)
    assert closed.status == 410
    assert (await error_of(closed))["message"] == MADE_ROOM
    await wait_until(lambda: _held_backends(shop_database) == 0, 10, "the made-room result closed")


async def test_continuation_limit_bounds_the_held_results_of_the_process(
    make_gateway: GatewayFactory, shop_database: str
) -> None:
    client = await _gateway(make_gateway, shop_database, continuation_limit=1)
    assert "next" in (await _page(client, ITEMS))["counts"]
    response = await _get(client, ITEMS, OTHER)
    body = (await response.json())[0]
    assert body["truncated"] is True and "next" not in body
    assert _held_backends(shop_database) == 1
    metrics = await client.get("/metrics", headers=admin_headers())
    assert "dbgateway_continuations_open 1.0" in await metrics.text()


async def test_shutdown_releases_held_results(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await _gateway(make_gateway, shop_database)
    assert "next" in (await _page(client, ITEMS))["counts"]
    assert _held_backends(shop_database) == 1
    await asyncio.wait_for(client.close(), 10)
    await wait_until(lambda: _backends(shop_database) == 0, 10, "no backend left after the gateway stopped")


async def test_a_client_leaving_mid_page_releases_the_held_result(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await _gateway(make_gateway, shop_database, client_stall_timeout=2.0)
    token = (await _page(client, HUGE))["counts"]["next"]
    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    target = "/GetData?" + urllib.parse.urlencode(
        {"local_database_name": "shop", "query": HUGE, "continuation": token}
    )
    writer.write(f"GET {target} HTTP/1.1\r\nHost: gateway\r\nuser_token: {TOKEN}\r\n\r\n".encode())
    await writer.drain()
    assert (await reader.read(64)).startswith(b"HTTP/1.1 200")
    writer.close()  # mid-page: the rest of the streamed page is never read
    await wait_until(lambda: _held_backends(shop_database) == 0, 10, "the abandoned page's result closed")
    # ... and forgotten by the gateway, its token's turn given back (not only its connection, by the driver).
    await wait_until(lambda: client.server.app[CONTINUATIONS].count == 0, 10, "the held result forgotten")
    gone = await _get(client, HUGE, continuation=token)
    assert gone.status == 410


def _process_page(port: int, query: str, **params: str) -> tuple[int, Any]:
    """One GetData on a new connection (so the kernel may hand it to either worker); (status, JSON)."""
    return call_process(
        port, "GET", "/GetData", params={"local_database_name": "shop", "query": query, **params},
        headers={"user_token": TOKEN},
    )


def test_with_two_workers_every_page_is_answered_by_the_worker_that_holds_it(tmp_path: Path, shop_database: str) -> None:
    port = free_port()
    process = start_gateway_process(
        tmp_path / "data", port, DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN, DBGATEWAY_WORKERS="2",
        DBGATEWAY_ROW_LIMIT=str(LIMIT), DBGATEWAY_LOG_LEVEL="info",
    )
    try:
        wait_until_listening(process, port)
        register_in_process(port, "shop", shop_database, TOKEN)
        expected = sorted(run_sql(shop_database, ITEMS))
        forwarded = 0
        for _ in range(10):  # until a page went to the other worker; each try has about even odds
            read: list[tuple[int, str]] = []
            status, body = _process_page(port, ITEMS)
            while True:
                assert status == 200, body
                read += [(row["id"], row["note"]) for row in body[0]["data"]]
                if "next" not in body[0]:
                    break
                status, body = _process_page(port, ITEMS, continuation=body[0]["next"])
            assert sorted(read) == expected
            status, logs = call_process(port, "GET", "/Logs/", params={"level": "info"}, headers={"admin_token": ADMIN_TOKEN})
            forwarded = logs[0]["logs"].count('"continuation_forwarded"')
            if forwarded:
                break
        assert forwarded, "no page reached the worker that did not hold its result in 10 readings"
        # A forwarded page's answer has one request id, the forwarding worker's, and both workers log it.
        entries = [json.loads(line) for line in logs[0]["logs"].splitlines() if line]
        forwards = [entry for entry in entries if entry["event"] == "continuation_forwarded"]
        request_id = forwards[0]["request_id"]
        workers = {entry["pid"] for entry in entries if entry.get("request_id") == request_id}
        assert len(workers) == 2, workers
        status, body = _process_page(port, ITEMS)  # left held: SIGTERM must release it
        assert status == 200 and "next" in body[0]
        assert _held_backends(shop_database) == 1
    finally:
        code, _ = stop_process(process)
    assert code == 0
    assert eventually(lambda: _backends(shop_database) == 0, 10), "backends left after SIGTERM"


async def test_the_ndjson_path_reads_its_pages_too(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await _gateway(make_gateway, shop_database)
    read: list[int] = []
    continuation: str | None = None
    while True:
        params = {"local_database_name": "shop", "query": ITEMS}
        if continuation is not None:
            params["continuation"] = continuation
        response = await client.get("/GetData/ndjson", params=params, headers=user_headers(TOKEN))
        assert response.status == 200, await response.text()
        lines = [json.loads(line) for line in (await response.text()).splitlines()]
        read += [row["id"] for row in lines[:-1]]
        continuation = lines[-1].get("next")
        if continuation is None:
            break
    assert sorted(read) == [row_id for (row_id,) in run_sql(shop_database, "SELECT id FROM public.items ORDER BY id")]


async def test_half_of_the_pool_at_most_is_held_for_continuations(make_gateway: GatewayFactory, shop_database: str) -> None:
    client = await _gateway(make_gateway, shop_database, pool_max_size=2)
    assert "next" in (await _page(client, ITEMS))["counts"]
    response = await _get(client, ITEMS, OTHER)  # another token: its own turns are free, the pool's half is not
    body = (await response.json())[0]
    assert body["truncated"] is True and "next" not in body
    assert _held_backends(shop_database) == 1


async def test_every_type_reads_the_same_through_pages_as_in_one_answer(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
) -> None:
    """Pages of several small batches each: the casts of later batches (as text, cast after the next FETCH)
    carry across pages; the values are those of one answer of the whole result."""
    whole = await _gateway(make_gateway, shop_database, row_limit=100_000, data_dir=tmp_path / "whole")
    response = await _get(whole, TYPED)
    expected = (await response.json())[0]["data"]
    paged = await _gateway(make_gateway, shop_database, fetch_batch_size=7)
    read: list[Any] = []
    continuation: str | None = None
    while True:
        params = {} if continuation is None else {"continuation": continuation}
        response = await _get(paged, TYPED, **params)
        body = (await response.json())[0]
        read += body["data"]
        continuation = body.get("next")
        if continuation is None:
            break
    assert read == expected


@pytest.mark.parametrize(
    ("before", "after"),
    [({}, {"columns": "id"}), ({"row_filter": "id > 0"}, {})],
    ids=["narrowed_between_pages", "widened_between_pages"],
)
async def test_a_grant_changed_in_width_ends_the_result_at_its_next_page(
    make_gateway: GatewayFactory, shop_database: str, before: dict[str, str], after: dict[str, str]
) -> None:
    """A page is read only while the token's grant of the tables is as it was when the result was opened."""
    client = await _gateway(make_gateway, shop_database)
    await grant(client, TOKEN, "shop_public_items", **before)
    token = (await _page(client, ITEMS))["counts"]["next"]
    await grant(client, TOKEN, "shop_public_items", **after)
    denied = await _get(client, ITEMS, continuation=token)
    assert denied.status == 403
    await wait_until(lambda: _held_backends(shop_database) == 0, 10, "the held result closed")


async def test_the_pages_of_a_bound_query_keep_its_values(make_gateway: GatewayFactory, shop_database: str) -> None:
    """A query with parameter values reads its pages from the cursor its values opened."""
    client = await _gateway(make_gateway, shop_database)
    query = "SELECT id, note FROM public.items WHERE id > $1"
    page = await _page(client, query, param="5")
    read = list(page["rows"])
    while "next" in page["counts"]:
        page = await _page(client, query, param="5", continuation=page["counts"]["next"])
        read += page["rows"]
    assert sorted(read) == sorted(run_sql(shop_database, "SELECT id, note FROM public.items WHERE id > 5"))
    assert len(read) > LIMIT
