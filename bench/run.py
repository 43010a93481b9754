"""``python -m bench.run``: the whole benchmark in one command, against the local PostgreSQL.

One run, in this order, takes about four minutes:

1. creates ``dbgw_bench_<hex>`` with ``public.bench_rows`` (``--rows``, default 1 000 000);
2. starts ``dbgateway serve`` twice (``--workers``, and one worker) on free ports
   with temporary data folders, registers the database and grants a user token
   its table (over HTTP), and starts the bare pass-through;
3. large result: ``psql COPY (...) TO STDOUT`` versus one GetData of every row,
   best of ``--large-runs`` each, and the gateway's peak memory growth;
4. small queries at concurrency 16 and 64: pgbench, the bare pass-through
   (``bench/passthrough.py``), the gateway with ``workers = 1`` and with
   ``--workers``, each under the same load;
5. small queries under wrk at concurrency 16 while large results stream, then
   while 96 KiB query texts arrive (the event loop's lag read from /metrics);
   then the same point lookup through a grant of 3 columns with a row filter beside
   a whole grant (``narrowed_grants.py``, issue 22; alone: ``--narrowed-only``);
6. stops the gateway; the 1 000 000-row table read through continuation pages, checked
   against COPY (``continuation_pages.py``, issue 23; alone: ``--continuation-only``);
   the SQL guard's cost over the query sets (``guard_cost.py``);
   bound parameters against values spliced into the text, one query shape with
   1 000 different names per round (``bound_parameters.py``, issue 23);
7. drops the database, writes ``bench/results/<UTC time>.json``
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

from bench.bound_parameters import bound_against_spliced, render_parameter_lines
from bench.continuation_pages import measure_continuation
from bench.dataset import POINT_LOOKUP_SQL, Server, create_scratch_database, drop_scratch_database
from bench.gateway_process import POOL_MAX_SIZE, GatewayProcess, PassThroughProcess
from bench.guard_cost import guard_cost
from bench.large_results import small_queries_while_streaming, time_copy, time_getdata
from bench.large_texts import large_texts_beside_small_queries
from bench.narrowed_grants import guard_check_cost, narrowed_beside_whole, render_narrowed
from bench.report import (
    CONTENDERS,
    check_targets,
    guard_targets,
    judged,
    large_result_figures,
    render_guard_lines,
    render_table,
    small_query_figures,
    write_results,
)
from bench.small_queries import LoadResult, run_pgbench, run_wrk, write_wrk_script

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
    parser.add_argument(
        "--narrowed-only", action="store_true",
        help="only the point lookup through a narrowed grant beside a whole grant, one worker (issue 22)",
    )  # fmt: skip
    parser.add_argument(
        "--continuation-only", action="store_true",
        help="only psql COPY, one streamed GetData and the table read through continuation pages (about a minute)",
    )  # fmt: skip
    parser.add_argument(
        "--guard-only", action="store_true",
        help="only the SQL guard's cost over the query sets, today beside before issue 19 (about 20 s)",
    )  # fmt: skip
    parser.add_argument(
        "--parameters-only", action="store_true",
        help="only bound parameters against values spliced into the text (issue 23; about 30 s)",
    )  # fmt: skip
    return parser


def _missing_tools() -> list[str]:
    return [f"{tool}: {why}" for tool, why in REQUIRED_TOOLS.items() if shutil.which(tool) is None]


def connections_needed(workers: int) -> int:
    """Connections the run holds at its peak: pgbench's largest run beside every contender's pool.

    Each gateway process keeps up to ``POOL_MAX_SIZE`` connections and one for its
    runaway watcher; the pass-through keeps ``POOL_MAX_SIZE``; a few more for psql
    and the runner itself.
    """
    gateway_processes = workers + (1 if workers != 1 else 0)
    return max(CONCURRENCIES) + gateway_processes * (POOL_MAX_SIZE + 1) + POOL_MAX_SIZE + 5


def connections_missing(server: Server, workers: int) -> str | None:
    """Why the server cannot take the run's connections, in one sentence; None when it can."""
    (free,) = server.run(
        "postgres",
        "SELECT current_setting('max_connections')::int - (SELECT count(*) FROM pg_stat_activity"
        " WHERE backend_type = 'client backend')",
    )[0]
    needed = connections_needed(workers)
    if free >= needed:
        return None
    return (
        f"bench: PostgreSQL takes {free} more connections and the run needs about {needed} "
        f"(pgbench at {max(CONCURRENCIES)} beside the gateways' and the pass-through's pools); raise "
        "max_connections (ALTER SYSTEM SET max_connections = 300; then restart PostgreSQL) and run again"
    )


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


def _warm_up(base_url: str, wrk_script: Path) -> None:
    run_wrk(base_url, wrk_script, 16, 3)


def measure(server: Server, database: str, arguments: argparse.Namespace, work_dir: Path) -> dict[str, Any]:
    """Every measurement against the three contenders; returns the result sections."""
    rows, seconds = arguments.rows, arguments.seconds
    servers: list[GatewayProcess | PassThroughProcess] = []
    try:
        gateway = GatewayProcess(work_dir / "per_core", row_limit=rows, workers=arguments.workers)
        servers.append(gateway)
        one_worker = gateway
        if arguments.workers != 1:
            one_worker = GatewayProcess(work_dir / "one_worker", row_limit=rows, workers=1)
            servers.append(one_worker)
        passthrough = PassThroughProcess(work_dir, server.dsn(database))
        servers.append(passthrough)
        scripts = {}
        for each_gateway in dict.fromkeys((gateway, one_worker)):  # the same one with --workers 1
            each_gateway.register(server, database)
            if each_gateway.get_data(POINT_LOOKUP_SQL + "1")[0]["row_count"] != 1:
                raise RuntimeError("the gateway did not find row 1 of the benchmark table")
            scripts[each_gateway.base_url] = write_wrk_script(each_gateway.work_dir, each_gateway.user_token, rows)
        wrk_script = scripts[gateway.base_url]
        _step("warming up: COPY once, wrk for 3 s against each contender")
        time_copy(server, database, rows)
        for base_url in (gateway.base_url, one_worker.base_url, passthrough.base_url):
            _warm_up(base_url, scripts.get(base_url, wrk_script))

        copies, getdatas = [], []
        idle_kib = gateway.resident_kib()
        peak_was_reset = gateway.reset_peaks()
        for run in range(arguments.large_runs):
            _step(f"large result run {run + 1}/{arguments.large_runs}: psql COPY, then GetData")
            copies.append(time_copy(server, database, rows))
            getdatas.append(asyncio.run(time_getdata(gateway)))
        large = large_result_figures(copies, getdatas, idle_kib, gateway.peak_resident_kib(), peak_was_reset)

        runs: dict[str, list[LoadResult]] = {name: [] for name in CONTENDERS}
        for concurrency in CONCURRENCIES:
            _step(f"small queries at concurrency {concurrency}: pgbench, pass-through, gateway "
                  f"(1 worker, {arguments.workers} workers), {seconds} s each")  # fmt: skip
            runs["pgbench"].append(run_pgbench(server, database, rows, concurrency, seconds))
            runs["passthrough"].append(
                run_wrk(passthrough.base_url, wrk_script, concurrency, seconds, passthrough.pids)
            )
            runs["gateway_1_worker"].append(
                run_wrk(one_worker.base_url, scripts[one_worker.base_url], concurrency, seconds, one_worker.pids)
            )
            if one_worker is not gateway:
                runs["gateway_per_core"].append(
                    run_wrk(gateway.base_url, wrk_script, concurrency, seconds, gateway.pids)
                )
        if one_worker is gateway:
            runs["gateway_per_core"] = runs["gateway_1_worker"]

        _step(f"small queries at concurrency 16 while large results stream ({seconds} s)")
        mixed = asyncio.run(small_queries_while_streaming(gateway, wrk_script, 16, seconds))
        _step(f"small queries at concurrency 16 while 96 KiB query texts arrive, one worker ({seconds} s)")
        texts = asyncio.run(
            large_texts_beside_small_queries(one_worker, scripts[one_worker.base_url], 16, seconds)
        )
        _step(f"point lookups through a narrowed grant beside a whole one, one worker ({seconds} s each, twice)")
        narrowed = narrowed_beside_whole(one_worker, rows, 16, seconds)
    finally:
        for process in servers:
            process.stop()
    narrowed.update(guard_check_cost(server, database))
    _step(f"the {rows:,}-row table through continuation pages, checked against COPY")
    continuation = measure_continuation(server, database, rows, work_dir)
    _step("the SQL guard over the query sets, today and before issue 19")
    guard = guard_cost(server, work_dir)
    _step("bound parameters against spliced values: one shape, 1 000 different names per round")
    parameters = bound_against_spliced(server, work_dir)
    small = small_query_figures(runs)
    return {
        "gateway": {"workers": arguments.workers, "log_level": "info (the default), written to a file"},
        "small_queries": small,
        "large_result": large,
        "continuation": continuation,
        "small_queries_while_streaming": mixed.as_dict(),
        "small_queries_beside_large_texts": texts.as_dict(),
        "guard_cost": guard,
        "bound_parameters": parameters,
        "narrowed_grants": narrowed,
        "targets": check_targets(small, large, mixed, texts, guard),
    }


def _stop_on_sigterm(signum: int, frame: object) -> None:
    # SystemExit unwinds through the finally blocks: the gateway stops and the database is dropped.
    raise SystemExit(128 + signum)


def continuation_only(arguments: argparse.Namespace) -> int:
    """``--continuation-only``: COPY, one streamed GetData and the continuation pages, printed (nothing written)."""
    server = Server.from_environment()
    _step(f"creating the scratch database with {arguments.rows:,} rows")
    database = create_scratch_database(server, arguments.rows)
    try:
        with tempfile.TemporaryDirectory(prefix="dbgw_bench_") as folder:
            gateway = GatewayProcess(Path(folder) / "whole", row_limit=arguments.rows, workers=1)
            try:
                gateway.register(server, database.name)
                copy = time_copy(server, database.name, arguments.rows)
                streamed = asyncio.run(time_getdata(gateway))
            finally:
                gateway.stop()
            continuation = measure_continuation(server, database.name, arguments.rows, Path(folder))
    finally:
        drop_scratch_database(server, database.name)
    pages, checked = continuation["pages"], continuation["checked"]
    print(f"psql COPY TO STDOUT:           {copy.rows_per_second:10.0f} rows/s ({copy.seconds:.2f} s)")
    print(f"GetData, one streamed answer:  {streamed.rows_per_second:10.0f} rows/s ({streamed.seconds:.2f} s)")
    print(
        f"GetData, {pages['pages']} continuation pages:  {pages['rows_per_second']:10.0f} rows/s "
        f"({pages['seconds']:.2f} s, {continuation['page_rows']:,} rows each; gateway peak memory "
        f"{pages['gateway_peak_growth_mib']} MiB over idle)"
    )
    print(
        f"checked pass (NDJSON parsed):  {checked['rows_per_second']:10.0f} rows/s ({checked['seconds']:.2f} s, "
        f"client CPU {checked['client_cpu_seconds']} s, {checked['rows_inserted_between_pages']} rows inserted "
        f"between pages, same rows as COPY: {checked['same_rows_as_copy']})"
    )
    return 0


def guard_only(arguments: argparse.Namespace) -> int:
    """``--guard-only``: the guard's cost alone, printed (nothing written)."""
    with tempfile.TemporaryDirectory(prefix="dbgw_bench_") as folder:
        guard = guard_cost(Server.from_environment(), Path(folder))
    print("\n".join(render_guard_lines(guard, judged(guard_targets(guard)))))
    return 0


def parameters_only() -> int:
    """``--parameters-only``: bound against spliced alone, printed (nothing written)."""
    with tempfile.TemporaryDirectory(prefix="dbgw_bench_") as folder:
        figures = bound_against_spliced(Server.from_environment(), Path(folder))
    print("\n".join(render_parameter_lines(figures)))
    return 0


def narrowed_only(arguments: argparse.Namespace) -> int:
    """``--narrowed-only``: the scratch table, one one-worker gateway, the narrowed grant beside the whole one."""
    if shutil.which("wrk") is None:
        print(f"bench: missing tools:\n  wrk: {REQUIRED_TOOLS['wrk']}", file=sys.stderr)
        return 2
    server = Server.from_environment()
    _step(f"creating the scratch database with {arguments.rows:,} rows")
    database = create_scratch_database(server, arguments.rows)
    try:
        with tempfile.TemporaryDirectory(prefix="dbgw_bench_") as folder:
            gateway = GatewayProcess(Path(folder) / "one_worker", row_limit=arguments.rows, workers=1)
            try:
                gateway.register(server, database.name)
                _step(f"point lookups through a narrowed grant beside a whole one ({arguments.seconds} s each)")
                figures = narrowed_beside_whole(gateway, arguments.rows, 16, arguments.seconds)
            finally:
                gateway.stop()
            figures.update(guard_check_cost(server, database.name))
    finally:
        drop_scratch_database(server, database.name)
    print("\n".join(render_narrowed(figures)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    if arguments.guard_only:
        return guard_only(arguments)
    if arguments.parameters_only:
        return parameters_only()
    if arguments.narrowed_only:
        return narrowed_only(arguments)
    if arguments.continuation_only:
        return continuation_only(arguments)
    missing = _missing_tools()
    if missing:
        print("bench: missing tools:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    server = Server.from_environment()
    too_few = connections_missing(server, arguments.workers)
    if too_few:
        print(too_few, file=sys.stderr)
        return 2
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
    print("\n" + "\n".join(render_parameter_lines(results["bound_parameters"])))
    print("\n" + "\n".join(render_narrowed(results["narrowed_grants"])))
    print(f"\nAll figures: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
