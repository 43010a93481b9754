"""The legitimate query sets under ``tests/corpora/<set>/``: schema, synthetic data and one query a file.

Each set has ``schema.sql`` (CREATE SCHEMA and its tables, every name
schema-qualified), ``data.sql`` (deterministic rows made with
``generate_series``), ``queries/<id>.sql`` (one SELECT each, no trailing
semicolon) and ``SOURCE.md`` (where the queries come from, their licence and
every edit). The guard's tests and the benchmark read them through this module;
``bench/`` code can load it by file path.
"""

from __future__ import annotations

import re
from pathlib import Path

CORPORA_DIR = Path(__file__).resolve().parent / "corpora"


def corpus_names() -> list[str]:
    """The sets, by directory name, in a fixed order."""
    return sorted(path.name for path in CORPORA_DIR.iterdir() if (path / "queries").is_dir())


def _natural_key(path: Path) -> tuple[int, str]:
    """``2a`` before ``10a``, ``9`` before ``10``."""
    match = re.match(r"(\d+)(.*)", path.stem)
    return (int(match.group(1)), match.group(2)) if match else (0, path.stem)


def load_queries(name: str) -> list[tuple[str, str]]:
    """(id, sql) of every query of the set ``name``, in the order of their ids; id is the file name less ``.sql``."""
    paths = sorted((CORPORA_DIR / name / "queries").glob("*.sql"), key=_natural_key)
    return [(path.stem, path.read_text(encoding="utf-8").strip()) for path in paths]


def schema_sql(name: str) -> str:
    """The set's CREATE SCHEMA and CREATE TABLE statements."""
    return (CORPORA_DIR / name / "schema.sql").read_text(encoding="utf-8")


def data_sql(name: str) -> str:
    """The set's INSERT statements, to run after ``schema_sql``."""
    return (CORPORA_DIR / name / "data.sql").read_text(encoding="utf-8")
