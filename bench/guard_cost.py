"""Guard cost: what the SQL guard takes for a query it has not seen, today beside before issue 19.

The issue's bar: the type model may cost more per miss than the guard before
it, at most 50 ms at the 99th percentile on this machine, and the per-request
cost of a query the gateway has seen must not regress. ``guard_cost`` makes a
scratch database holding the schemas of the project's query sets
(``tests/corpora``: TPC-H, TPC-DS, JOB and the analyst set; no rows are
needed: the guard reads only the catalog), and runs ``guard_timing.py`` twice
over every query of the sets: with today's tree, and with the tree of
``REFERENCE_COMMIT`` (the last commit before the type model, taken from git
into a temporary folder). Both run in their own interpreter against the same
catalog, one after the other.
"""

from __future__ import annotations

import importlib.util
import io
import json
import secrets
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from bench.dataset import Server

REFERENCE_COMMIT = "92e6adf^"
"""The guard before issue 19 (the parent of the commit that wired the type model in)."""
ROOT = Path(__file__).resolve().parent.parent
TIMING_SCRIPT = Path(__file__).resolve().parent / "guard_timing.py"


def _corpora() -> Any:
    # tests/ is no package: load the corpus reader by its path, as its docstring says bench/ may.
    spec = importlib.util.spec_from_file_location("query_corpora", ROOT / "tests" / "query_corpora.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus_queries() -> list[str]:
    """Every query of every set, in a fixed order."""
    corpora = _corpora()
    return [sql for name in corpora.corpus_names() for _, sql in corpora.load_queries(name)]


def _reference_tree(work_dir: Path) -> Path | str:
    """The reference commit's ``drivers`` and ``gateway`` in a folder; or why it cannot be had."""
    try:
        archive = subprocess.run(["git", "archive", "--format=tar", REFERENCE_COMMIT, "drivers", "gateway"],
                                 cwd=ROOT, capture_output=True, check=False)
    except OSError as error:
        return f"git is not available ({error})"
    if archive.returncode != 0:
        return f"commit {REFERENCE_COMMIT} is not in this checkout's history"
    tree = work_dir / "guard_before_issue_19"
    tree.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter="data")
    return tree


def _time_tree(tree: Path, dsn: str, queries_file: Path) -> dict[str, Any]:
    finished = subprocess.run([sys.executable, str(TIMING_SCRIPT), dsn, str(queries_file)], cwd=tree,
                              env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, capture_output=True,
                              text=True, check=False)
    if finished.returncode != 0:
        return {"unavailable": f"the guard timing failed: {finished.stderr.strip().splitlines()[-1:]}"}
    return _summary(json.loads(finished.stdout))


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def _summary(timing: dict[str, Any]) -> dict[str, Any]:
    fresh, cached = timing["fresh_ms"], timing["cached_us"]
    return {
        "queries": timing["queries"], "accepted": timing["accepted"],
        "fresh_ms": {"p50": round(_percentile(fresh, 0.5), 2), "p99": round(_percentile(fresh, 0.99), 2),
                     "max": round(max(fresh, default=0.0), 2)},
        "cached_us": {"p50": round(_percentile(cached, 0.5), 1), "p99": round(_percentile(cached, 0.99), 1)},
    }  # fmt: skip


def guard_cost(server: Server, work_dir: Path) -> dict[str, Any]:
    """Today's guard and the one before issue 19 over the query sets: fresh and cached checks."""
    corpora = _corpora()
    name = f"dbgw_bench_guard_{secrets.token_hex(4)}"
    server.run("postgres", f'CREATE DATABASE "{name}"')
    try:
        for corpus in corpora.corpus_names():
            server.run(name, corpora.schema_sql(corpus))
        queries_file = work_dir / "guard_queries.json"
        queries_file.write_text(json.dumps(corpus_queries()), encoding="utf-8")
        today = _time_tree(ROOT, server.dsn(name), queries_file)
        reference = _reference_tree(work_dir)
        before = _time_tree(reference, server.dsn(name), queries_file) if isinstance(reference, Path) else {
            "unavailable": reference}
    finally:
        server.run("postgres", f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return {"reference_commit": REFERENCE_COMMIT, "today": today, "before_issue_19": before}
