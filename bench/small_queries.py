"""Point lookups by primary key: pgbench straight against PostgreSQL (the floor) and wrk against GetData.

Both clients pick a uniformly random id from 1 to ``rows`` for every request
and select the same columns of the same row. pgbench uses the prepared
protocol (``-M prepared``); its p50/p99 come from its per-transaction log
(``-l``). wrk generates each URL in Lua with a fresh id; its percentiles come
from its own latency histogram (``--latency``), which corrects for coordinated
omission. Both run with two client threads, like ``-j 2``.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from bench.dataset import POINT_LOOKUP_SQL, Server
from bench.gateway_process import LOCAL_DATABASE, cpu_seconds

CLIENT_THREADS = 2
"""``pgbench -j`` and ``wrk -t``: one per core of the reference machine."""

_WRK_SCRIPT = """
-- Written by bench/small_queries.py: a GetData point lookup with a random id per request.
local path_prefix = "%(path_prefix)s"
local rows = %(rows)d
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end

function init(args)
  math.randomseed(os.time() * 1000 + seed)
  wrk.headers["user_token"] = "%(user_token)s"
  wrk.headers["Accept"] = "application/json"
end

function request()
  return wrk.format("GET", path_prefix .. math.random(1, rows))
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p90_us": %%d, "p99_us": %%d, ' ..
    '"max_us": %%d, "errors": {"connect": %%d, "read": %%d, "write": %%d, "status": %%d, "timeout": %%d}}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, errors.connect, errors.read, errors.write, errors.status,
    errors.timeout))
end
"""


@attrs.frozen
class LoadResult:
    """What one load run measured."""

    client: str
    """``pgbench`` or ``wrk``."""
    concurrency: int
    """Connections kept busy at once."""
    seconds: float
    """Length of the measured run."""
    requests: int
    """Requests (transactions) completed."""
    requests_per_second: float
    """Throughput."""
    p50_ms: float
    """Median latency, milliseconds."""
    p99_ms: float
    """99th percentile latency, milliseconds."""
    errors: int
    """Failed requests (any non-2xx answer, socket error or time-out)."""
    server_cpu_us_per_request: float | None = None
    """CPU time (user and system) the server's processes used during the run, divided by the requests it
    completed, in microseconds; None for pgbench (the server is PostgreSQL)."""

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _percentile(sorted_values: list[int], fraction: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values)) - 1))
    return float(sorted_values[index])


def run_pgbench(server: Server, database: str, rows: int, concurrency: int, seconds: int) -> LoadResult:
    """``pgbench -M prepared -c concurrency -j 2 -T seconds`` with a random-id lookup script."""
    with tempfile.TemporaryDirectory(prefix="dbgw_pgbench_") as folder:
        script = Path(folder) / "point_lookup.sql"
        script.write_text(f"\\set id random(1, {rows})\n{POINT_LOOKUP_SQL}:id;\n")
        command = [
            "pgbench", "--no-vacuum", "--protocol=prepared", f"--client={concurrency}",
            f"--jobs={CLIENT_THREADS}", f"--time={seconds}", "--log", f"--log-prefix={folder}/txn",
            f"--file={script}", *server.client_arguments(database),
        ]  # fmt: skip
        finished = subprocess.run(
            command, capture_output=True, text=True, env=server.client_environment(), cwd=folder, check=False
        )
        if finished.returncode != 0:
            raise RuntimeError(f"pgbench failed ({finished.returncode}): {finished.stderr.strip()}")
        tps = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", finished.stdout)
        failed = re.search(r"number of failed transactions: (\d+)", finished.stdout)
        latencies: list[int] = []
        for log in Path(folder).glob("txn.*"):
            # client_id transaction_no latency_us script_no epoch_s epoch_us
            latencies.extend(int(line.split()[2]) for line in log.read_text().splitlines() if line)
    if tps is None:
        raise RuntimeError(f"pgbench printed no tps line: {finished.stdout}")
    latencies.sort()
    return LoadResult(
        client="pgbench",
        concurrency=concurrency,
        seconds=float(seconds),
        requests=len(latencies),
        requests_per_second=float(tps.group(1)),
        p50_ms=_percentile(latencies, 0.50) / 1000,
        p99_ms=_percentile(latencies, 0.99) / 1000,
        errors=int(failed.group(1)) if failed else 0,
    )


def write_wrk_script(
    folder: Path, user_token: str, rows: int, *, lookup: str = POINT_LOOKUP_SQL, name: str = "getdata_point_lookup"
) -> Path:
    """The Lua script that makes wrk send GetData point lookups (``lookup`` and a random id) as ``user_token``."""
    query = urllib.parse.urlencode({"local_database_name": LOCAL_DATABASE, "query": lookup})
    script = folder / f"{name}.lua"
    script.write_text(_WRK_SCRIPT % {"path_prefix": f"/GetData?{query}", "rows": rows, "user_token": user_token})
    return script


def wrk_command(base_url: str, script: Path, concurrency: int, seconds: int) -> list[str]:
    return [
        "wrk", f"--threads={CLIENT_THREADS}", f"--connections={concurrency}", f"--duration={seconds}s",
        "--timeout=10s", "--latency", f"--script={script}", base_url,
    ]  # fmt: skip


def parse_wrk_output(stdout: str, concurrency: int) -> LoadResult:
    """The ``BENCH_JSON`` line the script's ``done`` wrote, as a ``LoadResult``."""
    line = next((line for line in stdout.splitlines() if line.startswith("BENCH_JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no summary: {stdout}")
    summary = json.loads(line.removeprefix("BENCH_JSON "))
    seconds = summary["duration_us"] / 1e6
    return LoadResult(
        client="wrk",
        concurrency=concurrency,
        seconds=round(seconds, 3),
        requests=summary["requests"],
        requests_per_second=summary["requests"] / seconds,
        p50_ms=summary["p50_us"] / 1000,
        p99_ms=summary["p99_us"] / 1000,
        errors=sum(summary["errors"].values()),
    )


def run_wrk(
    base_url: str, script: Path, concurrency: int, seconds: int, server_pids: Callable[[], list[int]] | None = None
) -> LoadResult:
    """wrk against GetData for ``seconds``, ``concurrency`` connections; with ``server_pids``, the server's CPU per
    request too (its processes' CPU time over the run, divided by the requests wrk completed)."""
    pids = server_pids() if server_pids is not None else []
    cpu_before = cpu_seconds(pids)
    finished = subprocess.run(
        wrk_command(base_url, script, concurrency, seconds), capture_output=True, text=True, check=False
    )
    cpu_used = cpu_seconds(pids) - cpu_before
    if finished.returncode != 0:
        raise RuntimeError(f"wrk failed ({finished.returncode}): {finished.stderr.strip()}")
    result = parse_wrk_output(finished.stdout, concurrency)
    if not pids or not result.requests:
        return result
    return attrs.evolve(result, server_cpu_us_per_request=round(cpu_used / result.requests * 1e6, 1))
