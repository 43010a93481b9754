"""The large table read through continuation pages, beside one streamed GetData and psql COPY (issue 23).

A gateway with ``row_limit`` = rows / ``PAGES`` answers the large query in pages;
the client asks for the next page with the last one's ``next`` until a page has
none. Two passes:

- timed: JSON pages read as bytes (only the tail is parsed, for ``next``),
  like the streamed GetData's client, so rows/s compare with it and with COPY;
- checked: NDJSON pages parsed row by row while another connection inserts a
  row into the table between pages (deleted at the end): the pages must give
  exactly the rows psql's ``COPY`` gave before, none missing, none repeated.
  Each row's ``id``, ``quantity`` and ``label`` (the same text in COPY's output
  and in the JSON) are hashed (MD5) and summed as an order-free checksum,
  beside the row count and a check that no id comes twice.
"""

from __future__ import annotations

import hashlib
import re
import resource
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import orjson

from bench.dataset import LARGE_RESULT_SQL, TABLE, Server
from bench.gateway_process import LOCAL_DATABASE, GatewayProcess

PAGES = 10
"""The table is read in this many pages (row_limit = rows / PAGES): 100 000 rows each for 1 000 000."""

CHECKED_SQL = f"SELECT id, quantity, label FROM {TABLE}"
"""The columns the checksum covers, as COPY prints them (the pages read every column, as the streamed GetData)."""


def _row_digest(row_id: int, quantity: int, label: str) -> int:
    return int.from_bytes(hashlib.md5(f"{row_id}\t{quantity}\t{label}".encode()).digest()[:8], "big")


def copy_checksum(server: Server, database: str) -> dict[str, Any]:
    """psql ``COPY (id, quantity, label) TO STDOUT``: row count and order-free checksum of its rows."""
    command = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", *server.client_arguments(database),
               "-c", f"COPY ({CHECKED_SQL}) TO STDOUT"]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, env=server.client_environment(), check=True)
    total, rows = 0, 0
    for line in finished.stdout.decode().splitlines():
        row_id, quantity, label = line.split("\t")
        total = (total + _row_digest(int(row_id), int(quantity), label)) % 2**64
        rows += 1
    return {"rows": rows, "checksum": total}


_JSON_TAIL = re.compile(rb'\],"row_count":(\d+),"truncated":(true|false)(?:,"next":"([A-Za-z0-9_-]+)")?\}\]$')


def _page_request(gateway: GatewayProcess, query: str, result_format: str, continuation: str | None) -> Any:
    params = {"local_database_name": LOCAL_DATABASE, "query": query, "format": result_format}
    if continuation is not None:
        params["continuation"] = continuation
    return urllib.request.Request(
        f"{gateway.base_url}/GetData?{urllib.parse.urlencode(params)}", headers={"user_token": gateway.user_token}
    )


def time_pages(gateway: GatewayProcess, query: str) -> dict[str, Any]:
    """Every page of ``query`` as JSON, read as bytes; rows/s over all pages."""
    started = time.perf_counter()
    rows, pages, size = 0, 0, 0
    continuation: str | None = None
    while True:
        tail = b""
        with urllib.request.urlopen(_page_request(gateway, query, "json", continuation), timeout=600) as response:
            while piece := response.read(1 << 20):
                size += len(piece)
                tail = (tail + piece)[-300:]
        found = _JSON_TAIL.search(tail)
        if found is None:
            raise RuntimeError(f"a page ended unexpectedly: ...{tail[-120:]!r}")
        rows += int(found.group(1))
        pages += 1
        if found.group(3) is None:
            break
        continuation = found.group(3).decode()
    seconds = time.perf_counter() - started
    return {"rows": rows, "pages": pages, "seconds": round(seconds, 2), "rows_per_second": round(rows / seconds),
            "body_bytes": size}  # fmt: skip


def read_pages(gateway: GatewayProcess, server: Server, database: str, query: str) -> dict[str, Any]:
    """Every page of ``query`` (NDJSON, parsed), inserting a row between pages; pages, checksum, client CPU."""
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    total, rows, pages, seen = 0, 0, 0, set()
    continuation: str | None = None
    inserted = 0
    while True:
        request = _page_request(gateway, query, "ndjson", continuation)
        last = b""
        with urllib.request.urlopen(request, timeout=600) as response:
            for line in response:
                if last:
                    row = orjson.loads(last)
                    row_id = row["id"]
                    if row_id in seen:
                        raise RuntimeError(f"row {row_id} came twice")
                    seen.add(row_id)
                    total = (total + _row_digest(row_id, row["quantity"], row["label"])) % 2**64
                    rows += 1
                last = line
        pages += 1
        tail = orjson.loads(last)
        continuation = tail.get("next")
        if continuation is None:
            break
        # Another client writes between pages: the held snapshot must not show it.
        server.run(database, f"INSERT INTO {TABLE} SELECT max(id) + 1, 1, 'late', 0, now(), '{{}}' FROM {TABLE}")
        inserted += 1
    seconds = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return {
        "rows": rows, "pages": pages, "seconds": round(seconds, 2), "rows_per_second": round(rows / seconds),
        "client_cpu_seconds": round(cpu, 2), "checksum": total, "rows_inserted_between_pages": inserted,
    }  # fmt: skip


def measure_continuation(server: Server, database: str, rows: int, work_dir: Path) -> dict[str, Any]:
    """COPY's checksum, then the pages through a gateway with row_limit = rows / PAGES; the two compared."""
    expected = copy_checksum(server, database)
    page_rows = max(1, rows // PAGES)
    gateway = GatewayProcess(work_dir / "pages", row_limit=page_rows, workers=1)
    try:
        gateway.register(server, database)
        idle_kib = gateway.resident_kib()
        peak_was_reset = gateway.reset_peaks()
        timed = time_pages(gateway, LARGE_RESULT_SQL)
        # Each page keeps a first answer's memory bound: the gateway's peak over idle while the pages streamed.
        timed["gateway_peak_growth_mib"] = round((gateway.peak_resident_kib() - idle_kib) / 1024, 1)
        timed["peak_reset_before_run"] = peak_was_reset
        paged = read_pages(gateway, server, database, LARGE_RESULT_SQL)
    finally:
        gateway.stop()
        server.run(database, f"DELETE FROM {TABLE} WHERE id > {int(rows)}")
    paged["same_rows_as_copy"] = paged["rows"] == expected["rows"] and paged["checksum"] == expected["checksum"]
    if not paged["same_rows_as_copy"]:
        raise RuntimeError(f"the pages differ from COPY: {paged} against {expected}")
    return {"page_rows": page_rows, "copy": expected, "pages": timed, "checked": paged}
