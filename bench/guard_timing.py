"""Time one source tree's SQL guard over a list of queries; run as a script with that tree on ``PYTHONPATH``.

``python bench/guard_timing.py DSN QUERIES_JSON`` prints one JSON object:
the milliseconds of a fresh check of each query (the guard's decision caches
cleared before every call: a query the gateway has not seen), and the
microseconds of the gateway's per-request path for a query it has seen
(``GuardCache.check`` answering from its entry), for the accepted queries.

It speaks both the guard of issue 19 (``drivers.postgres.guard``) and the one
before it (``drivers.postgres.sql_guard``), so ``guard_cost.py`` can run it
over today's tree and over a copy of the older one, against the same catalog.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import psycopg2

MEASURED_RUNS = 3
"""Fresh checks per query; its time is their median."""
CACHED_RUNS = 200
"""Cached checks per accepted query; its time is their median."""


def _guard_api(dsn: str) -> tuple[ModuleType, Any, type, Callable[[Any], frozenset[tuple[str, str]]]]:
    """The tree's sql_guard module, its policy for the database at ``dsn``, its GuardCache, read_as_only."""
    connection = psycopg2.connect(dsn)
    try:
        with connection.cursor() as cursor:
            if importlib.util.find_spec("drivers.postgres.guard.sql_guard") is not None:
                from drivers.postgres.guard import sql_guard
                from drivers.postgres.guard.cache import GuardCache
                from drivers.postgres.guard.model.catalog import CATALOG_SQL, Catalog
                from drivers.postgres.guard.policy import GuardPolicy

                cursor.execute(CATALOG_SQL)
                policy: Any = GuardPolicy.from_catalog(Catalog.from_row(cursor.fetchone()))
                return sql_guard, policy, GuardCache, lambda parsed: parsed.relations
            from drivers.postgres.catalog_snapshot import (  # type: ignore[import-not-found, unused-ignore]
                CATALOG_SNAPSHOT_SQL,
                CatalogSnapshot,
            )
            from drivers.postgres.guard_cache import (  # type: ignore[import-not-found, unused-ignore]
                GuardCache as OldCache,
            )
            from drivers.postgres.query_policy import QueryPolicy  # type: ignore[import-not-found, unused-ignore]

            from drivers.postgres import sql_guard as old_guard  # type: ignore[attr-defined, unused-ignore]

            cursor.execute(CATALOG_SNAPSHOT_SQL)
            policy = QueryPolicy.from_catalog(CatalogSnapshot.from_query_row(cursor.fetchone()))
            return old_guard, policy, OldCache, lambda parsed: parsed.relations
    finally:
        connection.close()


def _caches(module: ModuleType) -> list[Any]:
    """The module's memoised functions (``functools.lru_cache``): the guard's decision caches."""
    return [value for value in vars(module).values() if callable(getattr(value, "cache_clear", None))]


def main(dsn: str, queries_path: str) -> dict[str, Any]:
    queries: list[str] = json.loads(open(queries_path, encoding="utf-8").read())
    sql_guard, policy, cache_type, relations_of = _guard_api(dsn)
    caches = _caches(sql_guard)

    def fresh(sql: str) -> tuple[float, Any]:
        for cache in caches:
            cache.cache_clear()
        started = time.perf_counter()
        try:
            outcome: Any = sql_guard.check_query(sql, None, policy)
        except Exception as refusal:  # noqa: BLE001 - a refusal is a decision too
            outcome = refusal
        return time.perf_counter() - started, outcome

    for sql in queries:  # warm: imports, the policy's own memos (a running gateway has them)
        fresh(sql)
    fresh_ms, accepted = [], []
    for sql in queries:
        runs = [fresh(sql) for _ in range(MEASURED_RUNS)]
        fresh_ms.append(statistics.median(seconds for seconds, _ in runs) * 1000)
        if not isinstance(runs[0][1], Exception):
            accepted.append((sql, runs[0][1]))
    cached_us = []
    for sql, parsed in accepted:
        cache, granted = cache_type(), frozenset(relations_of(parsed))
        check = functools.partial(sql_guard.check_query, granted=None, policy=policy)
        cache.check(sql, granted, lambda text: check(text), frozenset())
        times = []
        for _ in range(CACHED_RUNS):
            started = time.perf_counter()
            cache.check(sql, granted, lambda text: check(text), frozenset())
            times.append(time.perf_counter() - started)
        cached_us.append(statistics.median(times) * 1e6)
    return {"fresh_ms": fresh_ms, "cached_us": cached_us, "accepted": len(accepted), "queries": len(queries)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
