"""``python -m bench.run``: the whole benchmark in one command, against the local PostgreSQL.

One run, in this order, takes about three minutes:

1. creates ``dbgw_bench_<hex>`` with ``public.bench_rows`` (``--rows``, default 1 000 000);
2. starts ``dbgateway serve`` on a free port with a temporary data folder,
   registers the database and grants a user token its table (over HTTP);
3. large result: ``psql COPY (...) TO STDOUT`` versus one GetData of every row,
   best of ``--large-runs`` each, and the gateway's peak memory growth;
4. small queries: pgbench, then GetData under wrk, at concurrency 16 and 64;
5. small queries under wrk at concurrency 16 while large results stream;
6. stops the gateway, drops the database, writes ``bench/results/<UTC time>.json``
   and ``bench/results/latest.json``, and prints the table.

Nothing here asserts a timing: the figures and the targets they are checked
against go to the JSON and the table. Exit status 0 means the run completed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.dataset import POINT_LOOKUP_SQL, Server, create_scratch_database, drop_scratch_database
from bench.gateway_process import GatewayProcess
from bench.large_results import small_queries_while_streaming, time_copy, time_getdata
from bench.report import check_targets, large_result_figures, render_table, small_query_figures, write_results
from bench.small_queries import run_pgbench, run_wrk, write_wrk_script

RESULTS_DIR = Path(__file__).resolve().parent / "results"
CONCURRENCIES = (16, 64)
REQUIRED_TOOLS = {
    "pgbench": "PostgreSQL's client tools (Debian: postgresql-client)",
    "psql": "PostgreSQL's client tools (Debian: postgresql-client)",
    "wrk": "the HTTP load generator (Debian: apt-get install wrk; `make bench` installs it)",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the table and the large result")
    parser.add_argument("--seconds", type=int, default=10, help="length of each load run (pgbench, wrk)")
    parser.add_argument("--large-runs", type=int, default=2, help="timed runs of COPY and of the large GetData")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1,
        help="the gateway's workers setting (default: one per CPU, %(default)s here)",
    )  # fmt: skip
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where the JSON results go")
    return parser


def _missing_tools() -> list[str]:
    return [f"{tool}: {why}" for tool, why in REQUIRED_TOOLS.items() if shutil.which(tool) is None]


def _git_commit() -> str | None:
    try:
        finished = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False,
            cwd=Path(__file__).resolve().parent,
        )  # fmt: skip
    except OSError:
        return None
    return finished.stdout.strip() or None


def _step(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def measure(server: Server, database: str, arguments: argparse.Namespace, work_dir: Path) -> dict[str, Any]:
    """Every measurement against one gateway process; returns the result sections."""
    rows, seconds = arguments.rows, arguments.seconds
    gateway = GatewayProcess(work_dir, row_limit=rows, workers=arguments.workers)
    try:
        gateway.register(server, database)
        wrk_script = write_wrk_script(work_dir, gateway.user_token, rows)
        if gateway.get_data(POINT_LOOKUP_SQL + "1")[0]["row_count"] != 1:
            raise RuntimeError("the gateway did not find row 1 of the benchmark table")
        _step("warming up: COPY once, wrk for 3 s")
        time_copy(server, database, rows)
        run_wrk(gateway.base_url, wrk_script, 16, 3)

        copies, getdatas = [], []
        idle_kib = gateway.resident_kib()
        peak_was_reset = gateway.reset_peaks()
        for run in range(arguments.large_runs):
            _step(f"large result run {run + 1}/{arguments.large_runs}: psql COPY, then GetData")
            copies.append(time_copy(server, database, rows))
            getdatas.append(asyncio.run(time_getdata(gateway)))
        large = large_result_figures(copies, getdatas, idle_kib, gateway.peak_resident_kib(), peak_was_reset)

        pgbench, through_gateway = [], []
        for concurrency in CONCURRENCIES:
            _step(f"small queries at concurrency {concurrency}: pgbench, then GetData under wrk ({seconds} s each)")
            pgbench.append(run_pgbench(server, database, rows, concurrency, seconds))
            through_gateway.append(run_wrk(gateway.base_url, wrk_script, concurrency, seconds))

        _step(f"small queries at concurrency 16 while large results stream ({seconds} s)")
        mixed = asyncio.run(small_queries_while_streaming(gateway, wrk_script, 16, seconds))
    finally:
        gateway.stop()
    small = small_query_figures(pgbench, through_gateway)
    return {
        "gateway": {"workers": arguments.workers, "log_level": "info (the default), written to a file"},
        "small_queries": small,
        "large_result": large,
        "small_queries_while_streaming": mixed.as_dict(),
        "targets": check_targets(small, large, mixed),
    }


def _stop_on_sigterm(signum: int, frame: object) -> None:
    # SystemExit unwinds through the finally blocks: the gateway stops and the database is dropped.
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    missing = _missing_tools()
    if missing:
        print("bench: missing tools:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    server = Server.from_environment()
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    results: dict[str, Any] = {
        "started_at": started_at,
        "commit": _git_commit(),
        "machine": {
            "cpus": os.cpu_count(),
            "postgresql": server.version(),
            "load_average_before": [round(value, 2) for value in os.getloadavg()],
        },
        "settings": {
            "rows": arguments.rows, "seconds": arguments.seconds, "large_runs": arguments.large_runs,
            "pgbench": "pgbench -n -M prepared -j 2 -c {16,64} -T seconds, random id per transaction",
            "wrk": "wrk -t2 -c {16,64} -d seconds --latency, Lua script with a random id per request",
        },  # fmt: skip
    }
    _step(f"creating the scratch database with {arguments.rows:,} rows")
    database = create_scratch_database(server, arguments.rows)
    results["dataset"] = {"rows": database.rows, "fill_seconds": round(database.fill_seconds, 1)}
    try:
        with tempfile.TemporaryDirectory(prefix="dbgw_bench_") as folder:
            results.update(measure(server, database.name, arguments, Path(folder)))
    finally:
        drop_scratch_database(server, database.name)
    results["machine"]["load_average_after"] = [round(value, 2) for value in os.getloadavg()]
    path = write_results(arguments.results_dir, results)
    print(render_table(results))
    print(f"\nAll figures: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
