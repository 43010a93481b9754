"""Run the type comparison from a script: a scratch fixture database, the generated statements, the
server's answers, a model's answers, the report.

    .venv-test/bin/python tests/type_harness.py                       # the guard's model, every family
    .venv-test/bin/python tests/type_harness.py --family aggregate --family window --limit 100
    .venv-test/bin/python tests/type_harness.py --model perfect       # the server's answers fed back: must pass
    .venv-test/bin/python tests/type_harness.py --show 'generate_series'   # statements matching a regex, both answers
    .venv-test/bin/python tests/type_harness.py --dump /tmp/types.jsonl   # every statement with both answers

With ``--cache`` the server's answers are kept under .pytest_cache/type_oracle/ (by server version,
fixture and statement texts), so a second run asks PostgreSQL only for the catalog. The fixture's own
types (tf.mood, tf.pair...) get new OIDs in each scratch database, so cached answers naming them are
stale: the default is to ask the server every time.

From Python: ``type_harness.run(model_factory)`` returns the ``Comparison`` and prints the report. The
exit status is 0 when nothing disagrees (waivers of type_disagreements.toml honoured), 1 otherwise.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import json
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import psycopg2.extensions

from support import connect, database_from
from type_comparison import Comparison, Model, answers_model, compare, guard_model, load_waivers, report, show
from type_generation import DEFAULT_SEED, Generated, generate, makers
from type_oracle import Answer, Column, TypeOracle

FIXTURE_SQL = Path(__file__).with_name("type_fixture.sql")
CACHE_DIR = Path(__file__).resolve().parents[1] / ".pytest_cache" / "type_oracle"
"""The CLI keeps the server's answers here, by server version, fixture and statements (gitignored)."""
ModelFactory = Callable[[psycopg2.extensions.connection, Sequence[Generated], Sequence[Answer]], Model]


@contextlib.contextmanager
def fixture_database() -> Iterator[str]:
    """A scratch database (unique name) holding the fixture schema, dropped afterwards."""
    with database_from(FIXTURE_SQL.read_text(encoding="utf-8")) as name:
        yield name


class TypeNames:
    """``format_type`` of the fixture database, remembered: ``numeric(10,2)``, ``tf.posint``."""

    def __init__(self, connection: psycopg2.extensions.connection) -> None:
        self.connection = connection
        self.known: dict[tuple[int, int], str] = {}

    def __call__(self, oid: int, typmod: int) -> str:
        if (oid, typmod) not in self.known:
            with self.connection.cursor() as cursor:
                try:
                    cursor.execute("SELECT pg_catalog.format_type(%s, %s)", (oid, None if typmod == -1 else typmod))
                    row = cursor.fetchone()
                except psycopg2.Error:  # a typmod the type does not accept (a model's mistake): show it raw
                    self.connection.rollback()
                    row = (f"{oid}({typmod})",)
            self.known[(oid, typmod)] = str(row[0] if row and row[0] else oid)
        return self.known[(oid, typmod)]


def catalog_row(connection: psycopg2.extensions.connection) -> tuple[Any, ...]:
    """The one row of the guard's ``CATALOG_SQL`` on this database."""
    from drivers.postgres.guard.model.catalog import CATALOG_SQL

    with connection.cursor() as cursor:
        cursor.execute(CATALOG_SQL)
        row = cursor.fetchone()
    assert row is not None
    return tuple(row)


def guard_factory(connection: psycopg2.extensions.connection, *_: object) -> Model:
    return guard_model(catalog_row(connection))


def perfect_factory(connection: psycopg2.extensions.connection, statements: Sequence[Generated],
                    server: Sequence[Answer]) -> Model:
    return answers_model({statement.sql: answer for statement, answer in zip(statements, server, strict=True)})


MODELS: dict[str, ModelFactory] = {"guard": guard_factory, "perfect": perfect_factory}


def server_answers(
    connection: psycopg2.extensions.connection, statements: Sequence[Generated], workers: int = 2
) -> list[Answer]:
    """The server's answer to each statement, asked over ``workers`` connections to the same database at once
    (the time is the server's, creating and rolling back views: two backends halve it on two cores)."""
    texts = [statement.sql for statement in statements]
    if workers <= 1 or len(texts) < 100:
        return TypeOracle(connection).describe_all(texts)

    def describe(part: int) -> list[Answer]:
        own = connect(connection.info.dbname)
        try:
            return TypeOracle(own).describe_all(texts[part::workers])
        finally:
            own.close()

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(describe, range(workers)))
    answers: list[Answer] = [Answer("error")] * len(texts)
    for part, found in enumerate(parts):
        answers[part::workers] = found
    return answers


def remembered_server_answers(connection: psycopg2.extensions.connection, statements: Sequence[Generated]) -> list[Answer]:
    """``server_answers``, kept in CACHE_DIR for the next run with the same server, fixture and statements."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        row = cursor.fetchone()
    key = hashlib.sha256("\n".join([str(row), FIXTURE_SQL.read_text(encoding="utf-8"),
                                     *(statement.sql for statement in statements)]).encode()).hexdigest()[:20]
    path = CACHE_DIR / f"{key}.json"
    if path.exists():
        return [_answer(item) for item in json.loads(path.read_text(encoding="utf-8"))]
    answers = server_answers(connection, statements)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([dataclasses.asdict(answer) for answer in answers]), encoding="utf-8")
    return answers


def _answer(item: dict[str, Any]) -> Answer:
    return Answer(**{**item, "columns": tuple(Column(**column) for column in item["columns"])})


def dump(path: Path, statements: Sequence[Generated], server: Sequence[Answer], model: Sequence[Answer]) -> None:
    """Every statement with both answers, one JSON object a line, to grep and diff between runs."""
    with path.open("w", encoding="utf-8") as out:
        for statement, ours, theirs in zip(statements, server, model, strict=True):
            line = {"id": statement.id, "family": statement.family, "sql": statement.sql,
                    "server": dataclasses.asdict(ours), "model": dataclasses.asdict(theirs)}
            out.write(json.dumps(line) + "\n")


def run(
    factory: ModelFactory = guard_factory,
    *,
    families: Sequence[str] | None = None,
    seed: int = DEFAULT_SEED,
    limit: int = 30,
    pattern: str = "",
    out: TextIO = sys.stdout,
    remember: bool = False,
    dump_to: Path | None = None,
) -> Comparison:
    """Generate, ask the server and the model, compare, print the report (and the ``pattern`` matches)."""
    with fixture_database() as database:
        connection = connect(database)
        try:
            started = time.perf_counter()
            statements = generate(connection, seed, families)
            if pattern:
                statements = [statement for statement in statements if re.search(pattern, statement.sql)]
            generated = time.perf_counter()
            server = (remembered_server_answers if remember else server_answers)(connection, statements)
            asked = time.perf_counter()
            model = factory(connection, statements, server)
            answers = [model(statement.sql) for statement in statements]
            modelled = time.perf_counter()
            comparison = compare(statements, server, answers, load_waivers())
            if dump_to is not None:
                dump(dump_to, statements, server, answers)
            names = TypeNames(connection)
            if pattern:
                for statement, ours, theirs in zip(statements, server, answers, strict=True):
                    print(f"{statement.id}\n  {statement.sql}\n  server: {show(ours, names)}\n"
                          f"  model:  {show(theirs, names)}", file=out)
            print(report(comparison, names, limit), file=out)
            print(f"{len(statements)} statements: generated in {generated - started:.1f} s, server "
                  f"{asked - generated:.1f} s, model {modelled - asked:.1f} s", file=out)
            return comparison
        finally:
            connection.close()


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="type_harness.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default="guard")
    parser.add_argument("--family", action="append", choices=list(makers()), help="only these families")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--limit", type=int, default=30, help="disagreements shown (default 30)")
    parser.add_argument("--show", default="", metavar="REGEX", help="only statements matching, each with both answers")
    parser.add_argument("--dump", type=Path, metavar="FILE", help="every statement and both answers, JSON lines")
    parser.add_argument("--cache", action="store_true",
                        help=f"reuse the server's answers kept in {CACHE_DIR} (stale for the fixture's own types)")
    options = parser.parse_args(argv)
    comparison = run(MODELS[options.model], families=options.family, seed=options.seed, limit=options.limit,
                     pattern=options.show, remember=options.cache, dump_to=options.dump)
    return 0 if comparison.passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
