"""The benchmark's outputs: every figure as JSON in ``bench/results/``, and a short table on stdout.

The targets are checked here, once, so the JSON and the table agree (issue
10): the gateway with one worker serves at least 0.8 x the bare pass-through's
requests per second at concurrency 16 and at 64; its p99 at 64 is at most 3 x
its p50; a 1 000 000-row GetData streams at least 0.6 x psql COPY's row rate
with at most 64 MiB peak memory growth; small queries keep p99 at most 15 ms
while large results stream; while 96 KiB query texts arrive, the event loop
never wakes more than 20 ms late.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import orjson

from bench.large_results import MixedLoadResult, StreamResult
from bench.large_texts import LargeTextResult
from bench.small_queries import LoadResult

CONTENDERS = {
    "pgbench": "pgbench -M prepared",
    "passthrough": "pass-through (wrk)",
    "gateway_1_worker": "gateway, 1 worker (wrk)",
    "gateway_per_core": "gateway, per core (wrk)",
}
"""Small-query contenders: key in the JSON, and the name in the table."""

PASSTHROUGH_RATIO_TARGET = 0.8
TAIL_RATIO_TARGET = 3.0
SMALL_P99_TARGET_MS = 15.0
LARGE_RATIO_TARGET = 0.6
MEMORY_GROWTH_TARGET_MIB = 64.0
CPU_PER_LOOKUP_TARGET_US = 225.0
"""Issue 21: the one-worker gateway's CPU per point lookup at concurrency 16, in microseconds."""
CPU_PER_LOOKUP_LAST_ROUND_US = (301, 319)
"""Issue 21: what the one-worker gateway cost per point lookup in the A/B rounds of 11-26 on the quiet machine
(docs/performance.md), printed beside today's figure."""
GUARD_FRESH_P99_TARGET_MS = 50.0
"""Issue 19: a query the guard has not seen, checked within 50 ms at the 99th percentile."""
GUARD_CACHED_RATIO_TARGET = 1.25
"""Issue 19: the per-request path of a query seen must not regress (a quarter's margin for timer noise)."""


def small_query_figures(runs: dict[str, list[LoadResult]]) -> list[dict[str, Any]]:
    """Per concurrency: every contender's figures and its rate relative to the pass-through."""
    figures = []
    for index, floor in enumerate(runs["passthrough"]):
        entry: dict[str, Any] = {"concurrency": floor.concurrency}
        for name in CONTENDERS:
            measured = runs[name][index]
            entry[name] = {
                **measured.as_dict(),
                "ratio_to_passthrough": round(measured.requests_per_second / floor.requests_per_second, 4),
            }
        figures.append(entry)
    return figures


def continuation_lines(continuation: dict[str, Any] | None) -> list[str]:
    """The large table read through continuation pages: its row of the large-result table."""
    if continuation is None:
        return []
    pages, checked = continuation["pages"], continuation["checked"]
    return [
        f"| GetData, {pages['pages']} continuation pages of {continuation['page_rows']:,} | "
        f"{pages['rows_per_second']:.0f} | {pages['seconds']:.2f} | {pages['body_bytes'] / 2**20:.0f} |",
        f"| (the gateway's peak memory over idle while the pages streamed: {pages['gateway_peak_growth_mib']} MiB) "
        "| | | |",
        f"| the same pages as NDJSON, parsed, {checked['rows_inserted_between_pages']} rows inserted between "
        f"pages; same rows as COPY: {checked['same_rows_as_copy']} | {checked['rows_per_second']:.0f} | "
        f"{checked['seconds']:.2f} | |",
    ]


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


def guard_targets(guard: dict[str, Any]) -> dict[str, tuple[float, str, float]]:
    """Issue 19's bars for the guard: a fresh check's p99 within 50 ms, the cached path not slower."""
    today, before = guard["today"], guard["before_issue_19"]
    if "unavailable" in today:
        return {}
    checks = {"guard_fresh_p99_ms": (today["fresh_ms"]["p99"], "<=", GUARD_FRESH_P99_TARGET_MS)}
    if "unavailable" not in before and before["cached_us"]["p50"]:
        ratio = round(today["cached_us"]["p50"] / before["cached_us"]["p50"], 2)
        checks["guard_cached_p50_ratio_to_before"] = (ratio, "<=", GUARD_CACHED_RATIO_TARGET)
    return checks


def check_targets(
    small: list[dict[str, Any]], large: dict[str, Any], mixed: MixedLoadResult, texts: LargeTextResult,
    guard: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Each target of the issue with the measured value and whether it was met."""
    by_concurrency = {entry["concurrency"]: entry["gateway_1_worker"] for entry in small}
    at_64 = by_concurrency[64]
    checks = {
        "passthrough_ratio_c16": (by_concurrency[16]["ratio_to_passthrough"], ">=", PASSTHROUGH_RATIO_TARGET),
        "passthrough_ratio_c64": (at_64["ratio_to_passthrough"], ">=", PASSTHROUGH_RATIO_TARGET),
        "p99_over_p50_c64": (round(at_64["p99_ms"] / at_64["p50_ms"], 2), "<=", TAIL_RATIO_TARGET),
        "large_ratio": (large["ratio_getdata_to_copy"], ">=", LARGE_RATIO_TARGET),
        "large_peak_growth_mib": (large["gateway_peak_growth_mib"], "<=", MEMORY_GROWTH_TARGET_MIB),
        "small_p99_ms_while_streaming": (mixed.small.p99_ms, "<=", SMALL_P99_TARGET_MS),
        "loop_lag_probes_over_20ms_beside_large_texts": (texts.probes_over_20ms, "<=", 0),
        **cpu_targets(small),
        **(guard_targets(guard) if guard is not None else {}),
    }
    return judged(checks)


def cpu_targets(small: list[dict[str, Any]]) -> dict[str, tuple[float, str, float]]:
    """Issue 21's bar: the one-worker gateway's CPU per point lookup at concurrency 16 (when it was measured)."""
    at_16 = next(entry for entry in small if entry["concurrency"] == 16)
    measured = at_16["gateway_1_worker"].get("server_cpu_us_per_request")
    return {} if measured is None else {"cpu_us_per_lookup_c16": (measured, "<=", CPU_PER_LOOKUP_TARGET_US)}


def judged(checks: dict[str, tuple[float, str, float]]) -> dict[str, Any]:
    """Each check as measured, target and met."""
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
        "| contender | conc. | req/s | p50 ms | p99 ms | errors | ÷ pass-through | CPU µs/req |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in results["small_queries"]:
        for key, name in CONTENDERS.items():
            figures = entry[key]
            cpu = figures.get("server_cpu_us_per_request")
            lines.append(
                f"| {name} | {figures['concurrency']} | {figures['requests_per_second']:.0f} | "
                f"{figures['p50_ms']:.2f} | {figures['p99_ms']:.2f} | {figures['errors']} | "
                f"{figures['ratio_to_passthrough']:.3f} | {'' if cpu is None else f'{cpu:.0f}'} |"
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
        *continuation_lines(results.get("continuation")),
        "",
        f"GetData/COPY row rate: {large['ratio_getdata_to_copy']:.3f} {_mark(targets['large_ratio'])}",
        f"Gateway peak memory growth over idle ({large['gateway_idle_rss_mib']} MiB): "
        f"{large['gateway_peak_growth_mib']} MiB {_mark(targets['large_peak_growth_mib'])}",
        f"Gateway (1 worker) ÷ pass-through: c16 {targets['passthrough_ratio_c16']['measured']:.3f} "
        f"{_mark(targets['passthrough_ratio_c16'])}; c64 {targets['passthrough_ratio_c64']['measured']:.3f} "
        f"{_mark(targets['passthrough_ratio_c64'])}",
        f"Gateway (1 worker) p99 ÷ p50 at c64: {targets['p99_over_p50_c64']['measured']} "
        f"{_mark(targets['p99_over_p50_c64'])}",
        *render_cpu_lines(results["small_queries"], targets),
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
    texts = results["small_queries_beside_large_texts"]
    lines.append(
        f"Small queries (c{texts['small']['concurrency']}, 1 worker) while 96 KiB query texts arrive: "
        f"{texts['small']['requests_per_second']:.0f} req/s, p99 {texts['small']['p99_ms']:.2f} ms; "
        f"{texts['large_texts_answered']} large texts answered; event-loop probes more than 20 ms late: "
        f"{texts['probes_over_20ms']} of {texts['probes']} "
        f"{_mark(targets['loop_lag_probes_over_20ms_beside_large_texts'])}"
    )
    if "guard_cost" in results:
        lines += ["", *render_guard_lines(results["guard_cost"], targets)]
    return "\n".join(lines)


def render_cpu_lines(small: list[dict[str, Any]], targets: dict[str, Any]) -> list[str]:
    """Issue 21: the gateway's CPU per point lookup beside last round's, and its ratio to the pass-through's."""
    at_16 = next(entry for entry in small if entry["concurrency"] == 16)
    gateway_cpu = at_16["gateway_1_worker"].get("server_cpu_us_per_request")
    floor_cpu = at_16["passthrough"].get("server_cpu_us_per_request")
    if gateway_cpu is None or floor_cpu is None:
        return []
    low, high = CPU_PER_LOOKUP_LAST_ROUND_US
    return [
        f"Gateway (1 worker) CPU per point lookup at c16: {gateway_cpu:.0f} µs (last round {low}-{high} µs) "
        f"{_mark(targets['cpu_us_per_lookup_c16'])}; the pass-through's (parse_sql_json) {floor_cpu:.0f} µs; "
        f"gateway ÷ pass-through CPU {gateway_cpu / floor_cpu:.2f}"
    ]


def render_guard_lines(guard: dict[str, Any], targets: dict[str, Any]) -> list[str]:
    """The guard's cost, today beside before issue 19."""
    lines = [
        f"SQL guard over the query sets ({guard['today'].get('queries', '?')} queries; fresh = decision caches "
        f"cleared, a query not seen; cached = the gateway's per-request path for a query seen)",
        "| guard | accepted | fresh p50 ms | fresh p99 ms | fresh max ms | cached p50 µs | cached p99 µs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, name in (("before_issue_19", f"before issue 19 ({guard['reference_commit']})"), ("today", "today")):
        figures = guard[key]
        if "unavailable" in figures:
            lines.append(f"| {name} | {figures['unavailable']} | | | | | |")
            continue
        lines.append(
            f"| {name} | {figures['accepted']} | {figures['fresh_ms']['p50']} | {figures['fresh_ms']['p99']} | "
            f"{figures['fresh_ms']['max']} | {figures['cached_us']['p50']} | {figures['cached_us']['p99']} |"
        )
    for name in ("guard_fresh_p99_ms", "guard_cached_p50_ratio_to_before"):
        if name in targets:
            lines.append(f"{name}: {targets[name]['measured']} {_mark(targets[name])}")
    return lines
