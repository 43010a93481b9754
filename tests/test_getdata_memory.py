"""GetData's memory is bounded by bytes, not rows (issue 8): rows over the cap are refused by the database.

Real HTTP against real PostgreSQL. The memory test runs a real ``dbgateway
serve`` process and reads its peak resident size (``VmHWM``) from /proc.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientPayloadError
from aiohttp.test_utils import TestClient

from gateway_processes import GatewayProcess
from support import (
    GatewayFactory,
    call_process,
    error_of,
    grant,
    read_logs,
    register_database,
    register_in_process,
    run_sql,
    user_headers,
)

TOKEN = "memory-reader-token-5b1c"
MIB = 1024 * 1024
ROW_OVERHEAD = 28
"""pg_column_size of a one-text-column row minus the text's length: tuple header (24) and varlena header (4)."""
LARGE_BUILT_VALUES = {"postgres": {"max_built_value_bytes": 1 << 30}}
"""The guard refuses values over 8 MiB built from constants (``repeat('x', 100000000)``); these tests are about
the result path behind it, so they raise that limit to its largest."""


@pytest.fixture
def table_database(scratch_database: str) -> str:
    """A database with one table to grant (GetData needs a grant in the database; the queries read no table)."""
    run_sql(scratch_database, "CREATE TABLE public.t (id integer)")
    return scratch_database


async def _serving(make_gateway: GatewayFactory, database: str, **settings: Any) -> TestClient:
    gateway = await make_gateway(**settings)
    await register_database(gateway, "mem", database)
    await grant(gateway, TOKEN, "mem_public_t")
    return gateway


async def _get(gateway: TestClient, query: str) -> Any:
    return await gateway.get("/GetData", params={"local_database_name": "mem", "query": query}, headers=user_headers(TOKEN))


async def test_the_issues_query_answers_result_too_large(make_gateway: GatewayFactory, table_database: str) -> None:
    """Five 100 MB values: 422 result_too_large before the status line, naming the size and the setting."""
    gateway = await _serving(make_gateway, table_database, drivers=LARGE_BUILT_VALUES)
    response = await _get(gateway, "SELECT repeat('x', 100000000) FROM generate_series(1, 5)")
    assert response.status == 422
    body = await error_of(response)
    assert body["error"] == "result_too_large", body
    assert "100000028 bytes" in body["message"] and "max_row_bytes" in body["message"], body


async def test_a_row_at_max_row_bytes_is_served_and_one_byte_more_refused(
    make_gateway: GatewayFactory, table_database: str
) -> None:
    """The cap is inclusive and counts the row's size in the database."""
    limit = 100_000
    gateway = await _serving(make_gateway, table_database, max_row_bytes=limit)
    served = await _get(gateway, f"SELECT repeat('y', {limit - ROW_OVERHEAD}) AS v")
    assert served.status == 200
    answer = json.loads(await served.read())
    assert len(answer[0]["data"][0]["v"]) == limit - ROW_OVERHEAD
    refused = await _get(gateway, f"SELECT repeat('y', {limit - ROW_OVERHEAD + 1}) AS v")
    assert refused.status == 422
    assert (await error_of(refused))["error"] == "result_too_large"


async def _cut_off_stream_failures(gateway: TestClient, query: str) -> list[dict[str, Any]]:
    """Run ``query``: its answer starts (200) and is cut off; the logged ``getdata_failed_while_streaming`` events."""
    response = await _get(gateway, query)
    assert response.status == 200
    with pytest.raises(ClientPayloadError):
        await response.read()
    return [e for e in await read_logs(gateway, level="error") if e["event"] == "getdata_failed_while_streaming"]


async def test_a_large_row_after_the_answer_began_cuts_the_stream(make_gateway: GatewayFactory, table_database: str) -> None:
    """Status 200 is already sent: the body ends without its closing bracket and the error is logged."""
    gateway = await _serving(make_gateway, table_database, max_row_bytes=1 * MIB)
    query = (
        "SELECT i, CASE WHEN i = 60000 THEN repeat('z', 2000000) ELSE 'small' END AS v"
        " FROM generate_series(1, 60000) AS i"
    )
    failures = await _cut_off_stream_failures(gateway, query)
    assert len(failures) == 1 and failures[0]["error"] == "result_too_large", failures


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


@pytest.mark.parametrize(
    ("query", "expected_status"),
    [
        ("SELECT repeat('x', 60000000) AS v FROM generate_series(1, 5)", 200),
        ("SELECT repeat('x', 100000000) AS v FROM generate_series(1, 5)", 422),
    ],
)
def test_peak_memory_growth_stays_under_256_mib_and_falls_back(
    tmp_path: Path, table_database: str, query: str, expected_status: int
) -> None:
    """A real gateway process: peak RSS growth < 256 MiB for 5 × 60 MB (served) and 5 × 100 MB (refused)."""
    config = tmp_path / "gateway.toml"
    config.write_text(f"[drivers.postgres]\nmax_built_value_bytes = {LARGE_BUILT_VALUES['postgres']['max_built_value_bytes']}\n")
    gateway = GatewayProcess(tmp_path / "data", DBGATEWAY_CONFIG=str(config))
    try:
        gateway.wait_until_listening()
        register_in_process(gateway.port, "mem", table_database, TOKEN)
        pid = gateway.process.pid
        call_process(gateway.port, "GET", "/GetData", params={"local_database_name": "mem", "query": "SELECT 1"},
                     headers=user_headers(TOKEN))  # fmt: skip
        start = _status_kib(pid, "VmRSS")
        _reset_peak(pid)
        status = _stream_to_nowhere(gateway, query)
        assert status == expected_status
        peak = _status_kib(pid, "VmHWM")
        assert (peak - start) * 1024 < 256 * MIB, f"peak grew by {(peak - start) // 1024} MiB"
        deadline = time.monotonic() + 10
        while _status_kib(pid, "VmRSS") - start >= 32 * 1024 and time.monotonic() < deadline:
            time.sleep(0.1)
        after = _status_kib(pid, "VmRSS")
        assert (after - start) * 1024 < 32 * MIB, f"resident size stayed {(after - start) // 1024} MiB above the start"
    finally:
        gateway.stop()


def _stream_to_nowhere(gateway: GatewayProcess, query: str) -> int:
    """Send GetData and read the body in 1 MiB pieces, keeping none; the status."""
    url = gateway.url("/GetData?" + urllib.parse.urlencode({"local_database_name": "mem", "query": query}))
    request = urllib.request.Request(url, headers={**user_headers(TOKEN), "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            while response.read(MIB):
                pass
            return int(response.status)
    except urllib.error.HTTPError as error:
        error.read()
        return int(error.code)



async def test_large_rows_in_the_first_batch_are_served_by_a_second_run(
    make_gateway: GatewayFactory, table_database: str
) -> None:
    """Rows over the first fetch's share of the budget make the query run again a row at a time: all served."""
    gateway = await _serving(make_gateway, table_database)
    # The second time the query is known to need more than one batch: its first try is already in BEGIN ... .
    for _ in range(2):
        response = await _get(gateway, "SELECT i, repeat('v', 100000) AS v FROM generate_series(1, 3) AS i")
        assert response.status == 200
        answer = json.loads(await response.read())[0]
        assert [row["i"] for row in answer["data"]] == [1, 2, 3] and answer["row_count"] == 3
        assert all(len(row["v"]) == 100000 for row in answer["data"])


async def test_a_row_far_larger_than_the_rows_before_it_is_refused_with_advice(
    make_gateway: GatewayFactory, table_database: str
) -> None:
    """The documented limit of the per-fetch cap: after small rows, a row over 64 KiB and 4 × them is refused."""
    gateway = await _serving(make_gateway, table_database)
    query = "SELECT CASE WHEN i = 20000 THEN repeat('z', 200000) ELSE 'a' END AS v FROM generate_series(1, 20000) AS i"
    response = await _get(gateway, query)
    assert response.status == 422
    message = (await error_of(response))["message"]
    assert "came after smaller rows" in message and "ORDER BY" in message, message
    reordered = await _get(gateway, query + " ORDER BY i DESC")
    assert reordered.status == 200
    assert json.loads(await reordered.read())[0]["row_count"] == 20000


async def test_each_later_fetch_reads_with_its_own_cap_as_rows_grow(
    make_gateway: GatewayFactory, table_database: str
) -> None:
    """A row just under 64 KiB after thousands of tiny rows is served: later fetches raise the first one's cap.

    The first fetch caps rows at 32 MiB / 5 000 (6.7 kB); the runner sends the cap again only when it
    changes, so this fails if a later fetch kept the first one's.
    """
    gateway = await _serving(make_gateway, table_database)
    query = "SELECT i, CASE WHEN i = 9000 THEN repeat('m', 60000) ELSE 'a' END AS v FROM generate_series(1, 9000) AS i"
    response = await _get(gateway, query)
    assert response.status == 200, await response.text()
    answer = json.loads(await response.read())[0]
    assert answer["row_count"] == 9000 and len(answer["data"][-1]["v"]) == 60000


async def test_each_later_fetch_reads_with_its_own_cap_as_rows_shrink(
    make_gateway: GatewayFactory, table_database: str
) -> None:
    """After 1 MB rows read one at a time (capped at max_row_bytes), fetches of several rows cap each at their
    share of the budget again: a 5 MB row after them is refused (the stream is cut), not read under the old cap."""
    gateway = await _serving(make_gateway, table_database)
    query = (
        "SELECT i, CASE WHEN i <= 2 THEN repeat('L', 1000000) WHEN i = 50 THEN repeat('L', 5000000)"
        " ELSE 'a' END AS v FROM generate_series(1, 60) AS i"
    )
    failures = await _cut_off_stream_failures(gateway, query)
    assert len(failures) == 1 and "came after smaller rows" in failures[0]["message"], failures


async def test_a_compressed_stored_value_counts_at_its_text_size(make_gateway: GatewayFactory, scratch_database: str) -> None:
    """10 MB of repeated text is stored in about 115 kB (pglz): the database still measures its text, 422."""
    run_sql(scratch_database, "CREATE TABLE public.t (id integer, v text)")
    run_sql(scratch_database, "INSERT INTO public.t SELECT 1, repeat('c', 10000000)")
    assert run_sql(scratch_database, "SELECT pg_column_size(v) < 1000000 FROM public.t") == [(True,)]
    gateway = await _serving(make_gateway, scratch_database, max_row_bytes=1 * MIB)
    response = await _get(gateway, "SELECT v FROM public.t")
    assert response.status == 422
    assert "10000002 bytes" in (await error_of(response))["message"]
