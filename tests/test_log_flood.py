"""What anyone can put into the logs is bounded, and so is the in-memory log (issue 20, item 9).

Before: each refused GetData kept its whole query text (100 KB) in the audit
entry, in the 10 000-entry ring and on stderr; 11 000 of them took a gateway
from 75 MB to 771 MB, and 800 made ``GET /Logs/`` answer 76 MiB. Now a request
refused before its token was known to have a grant keeps the query's first
``UNAUTHORISED_QUERY_CHARS`` characters, paths and library records are cut too,
and the ring holds ``log_buffer_bytes`` at most whoever wrote its entries.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp.test_utils import TestClient

from gateway.settings.config_checks import MIN_LOG_BUFFER_BYTES
from gateway.observability.log_bounds import LOGGED_PATH_CHARS, UNAUTHORISED_QUERY_CHARS
from gateway.observability.log_ring import LogLevel, LogQuery, LogRing
from gateway.observability.log_sharing import merge_newest
from support import GatewayFactory, admin_headers, grant, read_logs, register_database, user_headers

FLOOD = 200
"""Refused requests per flood."""
QUERY_BYTES = 100 * 1024
"""The query text each refused request carries: max_query_bytes, the most a request may send."""
PER_REQUEST_BYTES = 4 * 1024
"""The most one refused request may add to stderr, or to the ``/Logs/`` answer (its request line and audit entry)."""
TOKEN = "flood-granted-token-61d2"


SERVED_SQL = "CREATE TABLE public.t (id integer); INSERT INTO public.t VALUES (1)"
"""What the ``served_database`` fixture (conftest.py) holds."""


def padded_query(size: int) -> str:
    """A valid SELECT of ``size`` bytes (a comment pads it)."""
    head = "SELECT id FROM public.t -- "
    return head + "x" * (size - len(head))


async def logs_answer_size(client: TestClient) -> int:
    response = await client.get("/Logs/", headers=admin_headers())
    assert response.status == 200
    return len(await response.read())


async def test_a_flood_of_refused_getdata_adds_little_to_the_logs(
    make_gateway: GatewayFactory, served_database: str
) -> None:
    """200 GetData refused with 401 or 403, each with a 100 KB query: a few KiB each on stderr and in /Logs/."""
    client = await make_gateway()
    await register_database(client, "flood", served_database)
    await grant(client, TOKEN, "flood_public_t")
    stderr = client.log_stream  # type: ignore[attr-defined]
    before = len(stderr.getvalue())
    query = padded_query(QUERY_BYTES)
    headers: list[dict[str, str]] = [
        {},  # no token: 401
        user_headers("not-a-granted-token-0000"),  # an unknown token: 403
        user_headers(TOKEN),  # a granted token, but a database it has no grant in: 403
    ]

    async def refused(n: int) -> int:
        database = "flood" if n % 3 != 2 else "elsewhere"
        response = await client.post(
            "/GetData", json={"local_database_name": database, "query": query}, headers=headers[n % 3]
        )
        await response.read()
        return response.status

    statuses = await asyncio.gather(*(refused(n) for n in range(FLOOD)))
    assert set(statuses) == {401, 403}
    added = len(stderr.getvalue()) - before
    assert added < FLOOD * PER_REQUEST_BYTES, f"stderr grew by {added} bytes for {FLOOD} refused requests"
    answer = await logs_answer_size(client)
    assert answer < FLOOD * PER_REQUEST_BYTES + 64 * 1024, f"/Logs/ answers {answer} bytes"
    audits = [entry for entry in await read_logs(client, event="audit") if entry.get("action") == "get_data"]
    with_text = [entry for entry in audits if entry["query"] is not None]
    assert len(with_text) == sum(1 for n in range(FLOOD) if n % 3)  # a 401 comes before the inputs are read
    for entry in with_text:
        assert entry["query"] == query[:UNAUTHORISED_QUERY_CHARS] and entry["query_length"] == QUERY_BYTES, entry


async def test_a_granted_tokens_query_is_audited_whole(make_gateway: GatewayFactory, served_database: str) -> None:
    """The bound is for requests refused before their token was known to have a grant: a holder's text stays whole."""
    client = await make_gateway()
    await register_database(client, "flood", served_database)
    await grant(client, TOKEN, "flood_public_t")
    query = padded_query(8 * 1024)
    response = await client.post("/GetData", json={"local_database_name": "flood", "query": query}, headers=user_headers(TOKEN))
    assert response.status == 200, await response.text()
    (entry,) = [entry for entry in await read_logs(client, event="audit") if entry.get("action") == "get_data"]
    assert entry["query"] == query and "query_length" not in entry


async def test_the_log_buffer_holds_log_buffer_bytes_at_most(make_gateway: GatewayFactory, served_database: str) -> None:
    """A granted token's large queries fill the ring: the oldest entries leave, /Logs/ stays within the bound."""
    client = await make_gateway(log_buffer_bytes=MIN_LOG_BUFFER_BYTES)
    await register_database(client, "flood", served_database)
    await grant(client, TOKEN, "flood_public_t")
    for n in range(20):  # 20 x 12 KiB of audit entries: far more than the ring holds
        query = padded_query(12 * 1024).replace("SELECT id", f"SELECT id + {n} AS id", 1)
        response = await client.post("/GetData", json={"local_database_name": "flood", "query": query}, headers=user_headers(TOKEN))
        assert response.status == 200, await response.text()
    entries = await read_logs(client)
    lines = sum(len(json.dumps(entry, separators=(",", ":")).encode()) for entry in entries)
    assert lines <= MIN_LOG_BUFFER_BYTES
    audits = [entry for entry in entries if entry["event"] == "audit" and entry.get("action") == "get_data"]
    assert 0 < len(audits) < 20
    assert audits[-1]["query"].startswith("SELECT id + 19 AS id")  # the newest stayed


def test_the_ring_drops_the_oldest_by_bytes_and_stubs_an_entry_larger_than_itself() -> None:
    ring = LogRing(capacity=100, max_bytes=1000)
    for n in range(10):
        ring.append(LogLevel.INFO, json.dumps({"event": "e", "n": n, "pad": "x" * 180}), timestamp=f"t{n}", event="e")
    assert ring.size_bytes <= 1000 and len(ring) < 10
    kept = [json.loads(line)["n"] for _, line in ring.read(LogQuery())]
    assert kept == list(range(10 - len(kept), 10))
    ring.append(LogLevel.ERROR, json.dumps({"event": "huge", "pad": "x" * 5000}), timestamp="t10", event="huge")
    _, line = ring.read(LogQuery())[-1]
    stub: dict[str, Any] = json.loads(line)
    assert (stub["event"], stub["level"], stub["timestamp"]) == ("huge", "error", "t10")
    assert stub["entry_bytes"] > 5000 and ring.size_bytes <= 1000


def test_merged_worker_logs_stay_within_the_byte_bound() -> None:
    """GET /Logs/ with workers: the merged answer keeps the newest entries that fit one ring's bytes."""
    parts = [[(f"{n:04d}-{worker}", "y" * 100) for n in range(50)] for worker in "ab"]
    merged = merge_newest(parts, most=1000, most_bytes=1000)
    assert [stamp for stamp, _ in merged] == ["0045-a", "0045-b", "0046-a", "0046-b", "0047-a", "0047-b",
                                            "0048-a", "0048-b", "0049-a", "0049-b"]


async def test_a_long_path_is_logged_shortened(gateway: TestClient) -> None:
    response = await gateway.get("/" + "p" * 6000)
    assert response.status == 404
    (line,) = [entry for entry in await read_logs(gateway, event="request") if entry["status"] == 404]
    assert line["path"] == "/" + "p" * (LOGGED_PATH_CHARS - 1) + "...[6001 characters]"


async def test_a_malformed_request_is_logged_within_bounds(gateway: TestClient) -> None:
    """aiohttp's record of a bad request quotes its bytes (25 KB of log for 5 KB sent): the entry stays small."""
    reader, writer = await asyncio.open_connection(gateway.host, gateway.port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad: " + b"\x7f" * 5000 + b"\r\n\r\n")
    await writer.drain()
    await reader.read()
    writer.close()
    stderr = gateway.log_stream  # type: ignore[attr-defined]
    library = [line for line in stderr.getvalue().splitlines() if '"library_log"' in line]
    assert library, "aiohttp logged nothing"
    assert all(len(line) < 8 * 1024 for line in library), [len(line) for line in library]
