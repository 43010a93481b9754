"""A point lookup through a grant narrower than the table (issue 22) beside the same lookup through a whole grant.

One gateway, two tokens: one granted ``public.bench_rows`` whole, the other granted three of its
columns and the rows of a row filter (``NARROWED_FILTER``, which every row passes, so both answers hold
the same row). Both send the same GetData point lookup by primary key with a random id, under wrk at
the same concurrency, in turns (whole, narrowed, five times over: the ratio is of the medians of each token's runs, so a
neighbour's burst on a shared machine moves neither alone). The target: the narrowed token's rate is at
least ``RATIO_TARGET`` of the whole one's. The guard rewrites the narrowed token's query through a fenced
sub-select and copies ``id = N`` inside, so PostgreSQL still reads one index entry
(``tests/test_grants_narrowed_redteam.py`` shows the plan).
"""

from __future__ import annotations

import asyncio
import random
import re
import secrets
import statistics
import time
from typing import Any

import structlog

from bench.dataset import TABLE, Server
from bench.gateway_process import GatewayProcess
from bench.small_queries import LoadResult, run_wrk, write_wrk_script

NARROWED_COLUMNS = "id,quantity,label"
"""The narrowed token's columns (three of six)."""

NARROWED_FILTER = "quantity >= 0"
"""The narrowed token's row filter: every row passes it, so both tokens read the same row."""

LOOKUP_SQL = f"SELECT id, quantity, label FROM {TABLE} WHERE id = "
"""The lookup both tokens send, without its id."""

RATIO_TARGET = 0.9
"""The narrowed token's rate over the whole token's, at least (issue 22)."""

TURNS = 5
"""Runs of each token, alternated; the ratio is of their medians (a neighbour's burst on a shared machine moves
one run, not the median)."""


def narrowed_beside_whole(gateway: GatewayProcess, rows: int, concurrency: int, seconds: int) -> dict[str, Any]:
    """Both tokens' point lookups on ``gateway``; the figures and the ratio, as the results' JSON holds them."""
    narrowed_token = secrets.token_urlsafe(24)
    gateway.grant(narrowed_token, columns=NARROWED_COLUMNS, row_filter=NARROWED_FILTER)
    scripts = {
        "whole": write_wrk_script(gateway.work_dir, gateway.user_token, rows, lookup=LOOKUP_SQL, name="whole_grant"),
        "narrowed": write_wrk_script(gateway.work_dir, narrowed_token, rows, lookup=LOOKUP_SQL,
                                     name="narrowed_grant"),
    }
    for token in (gateway.user_token, narrowed_token):
        answer = gateway.get_data(LOOKUP_SQL + "7", token)[0]
        if answer["row_count"] != 1 or [c["name"] for c in answer["columns"]] != NARROWED_COLUMNS.split(","):
            raise RuntimeError(f"a token did not read row 7's three columns: {answer}")
    runs: dict[str, list[LoadResult]] = {"whole": [], "narrowed": []}
    for name, script in scripts.items():  # warm both: the guard caches, the buffer cache
        run_wrk(gateway.base_url, script, concurrency, 2)
    for _ in range(TURNS):
        for name, script in scripts.items():
            runs[name].append(run_wrk(gateway.base_url, script, concurrency, seconds))
    best = {name: max(results, key=lambda r: r.requests_per_second) for name, results in runs.items()}
    median = {name: statistics.median(r.requests_per_second for r in results) for name, results in runs.items()}
    ratio = median["narrowed"] / median["whole"]
    return {
        "query": LOOKUP_SQL + "<random id>",
        "narrowed_grant": {"columns": NARROWED_COLUMNS.split(","), "row_filter": NARROWED_FILTER},
        "concurrency": concurrency,
        "whole": best["whole"].as_dict(),
        "narrowed": best["narrowed"].as_dict(),
        "all_runs": {name: [r.as_dict() for r in results] for name, results in runs.items()},
        "median_requests_per_second": {name: round(value, 1) for name, value in median.items()},
        "ratio": round(ratio, 3),
        "ratio_of_best": round(best["narrowed"].requests_per_second / best["whole"].requests_per_second, 3),
        "target": RATIO_TARGET,
        "met": ratio >= RATIO_TARGET,
    }


CHECK_ROUNDS = 7
"""Rounds of the in-process guard comparison; each round times both tokens' checks, alternately."""

CHECKS_PER_ROUND = 2000
"""Checks of each token per round (a random id each: the decision cache's path, not the exact-text one)."""


def guard_check_cost(server: Server, database: str) -> dict[str, Any]:
    """The pool's ``check_query`` for the lookup, whole and narrowed, timed in this process (median of rounds, in
    microseconds per check): the gateway's only added work for a narrowed grant, away from HTTP's noise."""
    from drivers.postgres.pool import GuardOptions, PostgresPool
    from gateway.contract.driver_protocol import ConnectionData, NarrowedGrant, PoolLimits

    async def measure() -> dict[str, Any]:
        fields = {"ip": server.host, "port": server.port, "database": database, "username": server.user}
        pool = PostgresPool(ConnectionData(fields, {"password": server.password}),
                            PoolLimits(1, 2, 10.0, 30.0, 1000), structlog.get_logger(), GuardOptions())
        try:
            granted = frozenset({("public", "bench_rows")})
            row_filter = await pool.normalize_row_filter("public", "bench_rows", NARROWED_FILTER)
            narrowing = {("public", "bench_rows"): NarrowedGrant(tuple(NARROWED_COLUMNS.split(",")), row_filter)}
            kinds: dict[str, dict[str, Any]] = {"whole": {}, "narrowed": {"narrowing": narrowing}}
            rounds: dict[str, list[float]] = {"whole": [], "narrowed": []}
            statements: dict[str, str] = {}
            for number in range(CHECK_ROUNDS + 1):
                for name, options in kinds.items():
                    started = time.perf_counter()
                    for _ in range(CHECKS_PER_ROUND):
                        checked = await pool.check_query(LOOKUP_SQL + str(random.randint(1, 1_000_000)), granted,
                                                         **options)
                    if number:  # the first round warms the caches
                        rounds[name].append((time.perf_counter() - started) / CHECKS_PER_ROUND * 1e6)
                    statements[name] = checked.sql
            return {"guard_us": {name: round(statistics.median(values), 1) for name, values in rounds.items()},
                    "statements": statements}
        finally:
            await pool.close()

    measured = asyncio.run(measure())
    measured["database_us"] = _statement_cost(server, database, measured["statements"])
    return measured


def _statement_cost(server: Server, database: str, statements: dict[str, str]) -> dict[str, float]:
    """What the database takes for each token's checked statement (with another id each time), a round trip
    from this process, median of rounds in microseconds: the fenced sub-select costs more to parse and plan."""
    connection = server.connect(database)
    try:
        with connection.cursor() as cursor:
            rounds: dict[str, list[float]] = {name: [] for name in statements}
            for number in range(CHECK_ROUNDS + 1):
                for name, sql in statements.items():
                    template = re.sub(r"\bid = \d+", "id = %s", sql)  # the lookup's id, inside the fence too
                    started = time.perf_counter()
                    for _ in range(CHECKS_PER_ROUND // 2):
                        value = random.randint(1, 1_000_000)
                        cursor.execute(template, (value,) * template.count("%s"))
                        cursor.fetchall()
                    if number:
                        rounds[name].append((time.perf_counter() - started) / (CHECKS_PER_ROUND // 2) * 1e6)
        return {name: round(statistics.median(values), 1) for name, values in rounds.items()}
    finally:
        connection.close()


def render_narrowed(figures: dict[str, Any]) -> list[str]:
    """The comparison's lines of the printed table."""
    whole, narrowed = figures["whole"], figures["narrowed"]
    return [
        f"point lookup by primary key, concurrency {figures['concurrency']}, {TURNS} runs each, the best shown:",
        f"  {'grant':<34} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}",
        *(f"  {label:<34} {run['requests_per_second']:>9.0f} {run['p50_ms']:>8.2f} {run['p99_ms']:>8.2f} "
          f"{run['errors']:>7}" for label, run in (("whole table", whole),
                                                   ("3 of 6 columns + row filter", narrowed))),
        "  every run, req/s (in the order run): " + "; ".join(
            f"{name} " + ", ".join(f"{run['requests_per_second']:.0f}" for run in runs)
            for name, runs in figures["all_runs"].items()),
        f"  medians, req/s: whole {figures['median_requests_per_second']['whole']:.0f}, narrowed "
        f"{figures['median_requests_per_second']['narrowed']:.0f}; ratio of the best runs "
        f"{figures['ratio_of_best']:.3f}",
        f"  narrowed / whole (medians): {figures['ratio']:.3f} (target >= {figures['target']}: "
        f"{'met' if figures['met'] else 'NOT met'})",
        *([f"  the guard's check in-process, median µs per query: whole {figures['guard_us']['whole']}, "
           f"narrowed {figures['guard_us']['narrowed']}",
           f"  the checked statement in the database, median µs per round trip: whole "
           f"{figures['database_us']['whole']}, narrowed {figures['database_us']['narrowed']}"]
          if "guard_us" in figures else []),
    ]
