"""Bound parameters against values spliced into the text (issue 23): one query shape, 1 000 names per round.

A scratch database of its own holds ``public.bench_rows (id, name)``: 100 000
rows, ``name`` unique (``name-000001`` ...), so each lookup is an index probe
and the gateway's own work decides the rate. One ``dbgateway serve`` with one
worker answers two workloads of the same shape, sent by an aiohttp client at
concurrency 8:

- *bound*: ``SELECT id, name FROM public.bench_rows WHERE name = $1`` with
  ``param=<name>`` (the values travel apart from the text, the server binds
  them; the guard checks the shape once: the cache keys a text value by its
  length, and these names have one length);
- *spliced*: the same text with ``'<name>'`` written in (every text is new to
  the guard, whose cache keys string constants by their text).

Each round sends 1 000 names nobody asked for before, through each form in
turn (bound first in odd rounds, spliced first in even ones), so neither form
meets a text or a value its caches have seen: the figure is that of 1 000
different values. The rate of a form is its median round's; the ratio is
bound over spliced (the target: at least 1).
"""

from __future__ import annotations

import asyncio
import statistics
import time
import urllib.parse
from pathlib import Path
from typing import Any

import aiohttp

from bench.dataset import Server, drop_scratch_database
from bench.gateway_process import LOCAL_DATABASE, GatewayProcess

NAMES = 100_000
"""Rows of the names table: enough for every round's fresh names."""
PER_ROUND = 1_000
"""Different values per round and form: the issue's workload."""
ROUNDS = 5
CONCURRENCY = 8
BOUND_SQL = "SELECT id, name FROM public.bench_rows WHERE name = $1"


def _spliced_sql(name: str) -> str:
    return f"SELECT id, name FROM public.bench_rows WHERE name = '{name}'"


def _name(number: int) -> str:
    return f"name-{number:06d}"


async def _send_all(base_url: str, token: str, queries: list[list[tuple[str, str]]]) -> float:
    """Send every query (GET, its query-string pairs) at ``CONCURRENCY``; seconds for all; each must find its row."""
    headers = {"user_token": token, "Accept": "application/json"}
    pending = iter(queries)

    async def worker(session: aiohttp.ClientSession) -> None:
        for pairs in pending:
            url = f"{base_url}/GetData?{urllib.parse.urlencode(pairs)}"
            async with session.get(url, headers=headers) as response:
                body = await response.json()
                if response.status != 200 or body[0]["row_count"] != 1:
                    raise RuntimeError(f"GetData answered {response.status}: {str(body)[:300]}")

    async with aiohttp.ClientSession() as session:
        started = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(CONCURRENCY)))
        return time.perf_counter() - started


def _round_queries(first: int, bound: bool) -> list[list[tuple[str, str]]]:
    base = [("local_database_name", LOCAL_DATABASE)]
    names = [_name(number) for number in range(first, first + PER_ROUND)]
    if bound:
        return [[*base, ("query", BOUND_SQL), ("param", name)] for name in names]
    return [[*base, ("query", _spliced_sql(name))] for name in names]


def bound_against_spliced(server: Server, work_dir: Path) -> dict[str, Any]:
    """The figures of both forms (see the module); creates and drops its own scratch database."""
    database = f"dbgw_bench_params_{int(time.time())}"
    server.run("postgres", f'CREATE DATABASE "{database}"')
    gateway = None
    try:
        server.run(database, "CREATE TABLE public.bench_rows (id integer PRIMARY KEY, name text NOT NULL UNIQUE);"
                             f"INSERT INTO public.bench_rows SELECT g, 'name-' || lpad(g::text, 6, '0') "
                             f"FROM generate_series(1, {NAMES}) AS g")
        server.run(database, "VACUUM ANALYZE public.bench_rows")
        gateway = GatewayProcess(work_dir / "parameters", row_limit=1000, workers=1)
        gateway.register(server, database)
        # Warm-up: the pool's connections, the guard's policy, both paths once (names never used below).
        warm = [_round_queries(NAMES - PER_ROUND + 1, bound)[:200] for bound in (True, False)]
        for queries in warm:
            asyncio.run(_send_all(gateway.base_url, gateway.user_token, queries))
        seconds: dict[str, list[float]] = {"bound": [], "spliced": []}
        first = 1
        for round_number in range(ROUNDS):
            order = ("bound", "spliced") if round_number % 2 == 0 else ("spliced", "bound")
            for form in order:
                queries = _round_queries(first, bound=form == "bound")
                first += PER_ROUND
                seconds[form].append(asyncio.run(_send_all(gateway.base_url, gateway.user_token, queries)))
    finally:
        if gateway is not None:
            gateway.stop()
        drop_scratch_database(server, database)
    rates = {form: PER_ROUND / statistics.median(values) for form, values in seconds.items()}
    return {
        "values_per_round": PER_ROUND, "rounds": ROUNDS, "concurrency": CONCURRENCY,
        "bound_per_second": round(rates["bound"], 1), "spliced_per_second": round(rates["spliced"], 1),
        "ratio_bound_to_spliced": round(rates["bound"] / rates["spliced"], 3),
        "round_seconds": {form: [round(value, 3) for value in values] for form, values in seconds.items()},
    }  # fmt: skip


def render_parameter_lines(figures: dict[str, Any]) -> list[str]:
    """The lines ``make bench`` prints for this workload."""
    met = figures["ratio_bound_to_spliced"] >= 1
    return [
        f"Bound parameters against spliced values: one query shape (WHERE name = $1), {figures['values_per_round']:,} "
        f"different names per round, concurrency {figures['concurrency']}, median of {figures['rounds']} rounds",
        "| form | queries/s |",
        "|---|---:|",
        f"| bound ($1, param=...) | {figures['bound_per_second']:.0f} |",
        f"| spliced into the text | {figures['spliced_per_second']:.0f} |",
        "",
        f"bound/spliced: {figures['ratio_bound_to_spliced']:.3f} (target >= 1: {'met' if met else 'MISSED'})",
    ]
