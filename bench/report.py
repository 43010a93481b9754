"""The benchmark's outputs: every figure as JSON in ``bench/results/``, and a short table on stdout.

The issue's targets are checked here, once, so the JSON and the table agree:
GetData at concurrency 16 serves at least 0.12 x pgbench's rate with p99 at
most 15 ms; a 1 000 000-row GetData streams at least 0.3 x psql COPY's row
rate with at most 64 MiB peak memory growth; small queries keep p99 at most
15 ms while large results stream.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import orjson

from bench.large_results import MixedLoadResult, StreamResult
from bench.small_queries import LoadResult

SMALL_RATIO_TARGET = 0.12
SMALL_P99_TARGET_MS = 15.0
LARGE_RATIO_TARGET = 0.3
MEMORY_GROWTH_TARGET_MIB = 64.0


def small_query_figures(pgbench: list[LoadResult], gateway: list[LoadResult]) -> list[dict[str, Any]]:
    """Per concurrency: both clients' figures and the ratio gateway/pgbench."""
    figures = []
    for floor, measured in zip(pgbench, gateway, strict=True):
        ratio = measured.requests_per_second / floor.requests_per_second
        figures.append({
            "concurrency": floor.concurrency,
            "pgbench": floor.as_dict(),
            "gateway": measured.as_dict(),
            "ratio_gateway_to_pgbench": round(ratio, 4),
        })  # fmt: skip
    return figures


def large_result_figures(
    copies: list[StreamResult], getdatas: list[StreamResult], idle_kib: int, peak_kib: int, peak_was_reset: bool
) -> dict[str, Any]:
    """The best of each client's runs, their ratio, and the gateway's peak memory growth."""
    copy = max(copies, key=lambda run: run.rows_per_second)
    getdata = max(getdatas, key=lambda run: run.rows_per_second)
    return {
        "psql_copy": copy.as_dict(),
        "getdata": getdata.as_dict(),
        "all_runs": [run.as_dict() for run in (*copies, *getdatas)],
        "ratio_getdata_to_copy": round(getdata.rows_per_second / copy.rows_per_second, 4),
        "gateway_idle_rss_mib": round(idle_kib / 1024, 1),
        "gateway_peak_rss_mib": round(peak_kib / 1024, 1),
        "gateway_peak_growth_mib": round((peak_kib - idle_kib) / 1024, 1),
        "peak_reset_before_run": peak_was_reset,
    }


def check_targets(small: list[dict[str, Any]], large: dict[str, Any], mixed: MixedLoadResult) -> dict[str, Any]:
    """Each target of the issue with the measured value and whether it was met."""
    at_16 = next(entry for entry in small if entry["concurrency"] == 16)
    checks = {
        "small_ratio_c16": (at_16["ratio_gateway_to_pgbench"], ">=", SMALL_RATIO_TARGET),
        "small_p99_ms_c16": (at_16["gateway"]["p99_ms"], "<=", SMALL_P99_TARGET_MS),
        "large_ratio": (large["ratio_getdata_to_copy"], ">=", LARGE_RATIO_TARGET),
        "large_peak_growth_mib": (large["gateway_peak_growth_mib"], "<=", MEMORY_GROWTH_TARGET_MIB),
        "small_p99_ms_while_streaming": (mixed.small.p99_ms, "<=", SMALL_P99_TARGET_MS),
    }
    return {
        name: {"measured": value, "target": f"{relation} {bound}",
               "met": value >= bound if relation == ">=" else value <= bound}
        for name, (value, relation, bound) in checks.items()
    }  # fmt: skip


def write_results(folder: Path, results: dict[str, Any]) -> Path:
    """``<folder>/<UTC timestamp>.json`` and a copy as ``latest.json``; returns the first."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    content = orjson.dumps(results, option=orjson.OPT_INDENT_2) + b"\n"
    path = folder / f"{stamp}.json"
    path.write_bytes(content)
    (folder / "latest.json").write_bytes(content)
    return path


def _mark(check: dict[str, Any]) -> str:
    return f"(target {check['target']}: {'met' if check['met'] else 'MISSED'})"


def render_table(results: dict[str, Any]) -> str:
    """The short table printed at the end of a run (also pasted into docs/performance.md)."""
    machine, targets = results["machine"], results["targets"]
    lines = [
        f"dbgateway benchmark {results['started_at']}: {machine['cpus']} CPUs, PostgreSQL "
        f"{machine['postgresql']}, gateway workers {results['gateway']['workers']}, "
        f"load average before {machine['load_average_before']}",
        "",
        f"Point lookup by primary key, {results['settings']['seconds']} s per run",
        "| client | conc. | req/s | p50 ms | p99 ms | errors | gateway/pgbench |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in results["small_queries"]:
        for name, figures in (("pgbench -M prepared", entry["pgbench"]), ("GetData (wrk)", entry["gateway"])):
            ratio = f"{entry['ratio_gateway_to_pgbench']:.3f}" if name.startswith("GetData") else ""
            lines.append(
                f"| {name} | {figures['concurrency']} | {figures['requests_per_second']:.0f} | "
                f"{figures['p50_ms']:.2f} | {figures['p99_ms']:.2f} | {figures['errors']} | {ratio} |"
            )
    large = results["large_result"]
    lines += [
        "",
        f"Large result, {results['settings']['rows']:,} rows (best of {results['settings']['large_runs']} runs each)",
        "| client | rows/s | seconds | MiB sent |",
        "|---|---:|---:|---:|",
        f"| psql COPY TO STDOUT | {large['psql_copy']['rows_per_second']:.0f} | {large['psql_copy']['seconds']:.2f} | |",
        f"| GetData (chunked) | {large['getdata']['rows_per_second']:.0f} | {large['getdata']['seconds']:.2f} | "
        f"{large['getdata']['body_bytes'] / 2**20:.0f} |",
        "",
        f"GetData/COPY row rate: {large['ratio_getdata_to_copy']:.3f} {_mark(targets['large_ratio'])}",
        f"Gateway peak memory growth over idle ({large['gateway_idle_rss_mib']} MiB): "
        f"{large['gateway_peak_growth_mib']} MiB {_mark(targets['large_peak_growth_mib'])}",
        f"GetData c16 throughput vs pgbench: {targets['small_ratio_c16']['measured']:.3f} "
        f"{_mark(targets['small_ratio_c16'])}; p99 {targets['small_p99_ms_c16']['measured']:.2f} ms "
        f"{_mark(targets['small_p99_ms_c16'])}",
    ]
    mixed = results["small_queries_while_streaming"]
    small = mixed["small"]
    lines.append(
        f"Small queries (c{small['concurrency']}) while {results['settings']['rows']:,}-row results stream: "
        f"{small['requests_per_second']:.0f} req/s, "
        f"p50 {small['p50_ms']:.2f} ms, p99 {small['p99_ms']:.2f} ms {_mark(targets['small_p99_ms_while_streaming'])}; "
        f"large results streamed meanwhile at {mixed['large_mib_per_second']} MiB/s "
        f"({mixed['large_results_completed']} completed)"
    )
    return "\n".join(lines)
