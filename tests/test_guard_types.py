"""The guard's type model gives every generated expression the type PostgreSQL gives it.

The statements come from ``type_generation`` (seeded, several thousand, every construct family), the
server's answers from ``type_oracle`` (parse analysis only, over the fixture schema of
``type_fixture.sql``), the comparison from ``type_comparison``. Disagreements that are understood and safe
are listed in ``type_disagreements.toml``. The tests before the last prove the harness itself: it fails a
wrong model, passes the server's own answers fed back, and its oracle evaluates nothing.
``type_harness.py`` runs the same comparison from a shell.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections import Counter
from collections.abc import Iterator

import pglast
import psycopg2.extensions
import pytest

from support import connect
from pglast.enums import SetOperation

from type_comparison import Model, Waiver, answers_model, compare, guard_model, load_waivers, report
from type_generation import Generated, generate, makers
from type_harness import TypeNames, catalog_row, fixture_database, server_answers
from type_oracle import Answer, TypeOracle

MINIMUM_STATEMENTS = 5000
GUARD_PACKAGE = "drivers.postgres.guard"


@pytest.fixture(scope="module")
def fixture_connection() -> Iterator[psycopg2.extensions.connection]:
    """An autocommit connection to a scratch database holding the fixture schema (dropped afterwards)."""
    with fixture_database() as database:
        connection = connect(database)
        try:
            yield connection
        finally:
            connection.close()


@pytest.fixture(scope="module")
def statements(fixture_connection: psycopg2.extensions.connection) -> list[Generated]:
    return generate(fixture_connection)


@pytest.fixture(scope="module")
def server(fixture_connection: psycopg2.extensions.connection, statements: list[Generated]) -> list[Answer]:
    return server_answers(fixture_connection, statements)


@pytest.fixture
def oracle(fixture_connection: psycopg2.extensions.connection) -> TypeOracle:
    return TypeOracle(fixture_connection)


@pytest.fixture(scope="module")
def stand_in_model() -> Model:
    """A test double, not a model of anything: every column is int4 named ``?column?``, nothing is an error.

    It exists only to show that the comparison fails a model that is wrong.
    """

    def model(sql: str) -> Answer:
        select = pglast.parse_sql(sql)[0].stmt
        while select.op != SetOperation.SETOP_NONE:
            select = select.larg
        width = len(select.valuesLists[0]) if select.valuesLists else len(select.targetList or ())
        return Answer.typed(("?column?", 23, -1) for _ in range(width))

    return model


def test_every_construct_family_has_statements_the_server_types_and_refuses(
    statements: list[Generated], server: list[Answer]
) -> None:
    kinds: dict[str, Counter[str]] = {}
    for statement, answer in zip(statements, server, strict=True):
        kinds.setdefault(statement.family, Counter())[answer.kind] += 1
    assert len(statements) >= MINIMUM_STATEMENTS
    assert list(kinds) == list(makers())
    for family, counts in kinds.items():
        assert counts["typed"] >= 50 and counts["error"] >= 10, (family, counts)


def test_statements_parse_and_are_the_same_for_the_same_seed(
    fixture_connection: psycopg2.extensions.connection, statements: list[Generated]
) -> None:
    for statement in statements:
        pglast.parse_sql(statement.sql)  # what the guard parses with: it must read each one
    assert generate(fixture_connection) == statements
    assert len({statement.id for statement in statements}) == len(statements)
    assert generate(fixture_connection, seed=20)[:50] != statements[:50]


def test_oracle_types_without_evaluating(oracle: TypeOracle, fixture_connection: psycopg2.extensions.connection) -> None:
    assert oracle.describe("SELECT 1/0 AS x").columns[0].type == 23
    assert oracle.describe("SELECT nextval('tf.seq') AS n").kind == "typed"
    with fixture_connection.cursor() as cursor:
        cursor.execute("SELECT is_called FROM tf.seq")
        assert cursor.fetchone() == (False,)
    answer = oracle.describe("SELECT 'abc' AS u, NULL AS n, c_numeric_10_2, c_varchar_20 FROM tf.t")
    assert [(column.type, column.typmod) for column in answer.columns] == [(25, -1), (25, -1), (1700, 655366), (1043, 24)]


def test_oracle_reads_what_a_view_refuses_from_a_cte(oracle: TypeOracle) -> None:
    answer = oracle.describe("SELECT ROW(1, 2) AS r, pg_sleep(0), 1 AS a, 'x' AS \"a b(\" FROM tf.t")
    assert answer.via == "cte"
    assert [(c.name, c.type, c.typmod) for c in answer.columns] == [("r", 2249, -1), ("pg_sleep", 2278, -1),
                                                                   ("a", 23, -1), ("a b(", 25, -1)]
    collations = oracle.describe("SELECT note_c || note_posix AS x FROM tf.u")  # no view column collation
    assert (collations.via, collations.columns[0].type) == ("cte", 25)
    error = oracle.describe("SELECT no_such_function(1)")
    assert (error.kind, error.sqlstate) == ("error", "42883")
    with pytest.raises(ValueError):
        oracle.describe("SELECT 1; SELECT 2")


def test_both_ways_of_reading_agree(oracle: TypeOracle, statements: list[Generated], server: list[Answer]) -> None:
    by_view = [(s.sql, a) for s, a in zip(statements, server, strict=True) if a.via == "view" and a.kind == "typed"]
    for sql, answer in by_view[:: max(1, len(by_view) // 300)]:
        assert oracle.describe_as_cte(sql).columns == answer.columns, sql


def test_a_wrong_model_fails(statements: list[Generated], server: list[Answer], stand_in_model: Model) -> None:
    comparison = compare(statements, server, [stand_in_model(s.sql) for s in statements])
    assert not comparison.passed
    assert {found.what for found in comparison.disagreements} >= {"missed_error", "type", "name"}
    text = report(comparison)
    assert "disagreements:" in text and "server:" in text and "model:" in text
    everything = compare(statements, server, [stand_in_model(s.sql) for s in statements], [Waiver("all", pattern=".")])
    assert everything.passed and len(everything.waived) == len(comparison.disagreements)


def test_the_servers_own_answers_pass(statements: list[Generated], server: list[Answer]) -> None:
    model = answers_model({s.sql: a for s, a in zip(statements, server, strict=True)})
    comparison = compare(statements, server, [model(s.sql) for s in statements])
    assert comparison.passed, report(comparison)


def test_unsupported_is_a_disagreement_unless_listed(statements: list[Generated], server: list[Answer]) -> None:
    unsupported = [Answer("unsupported", message="not yet")] * len(statements)
    assert len(compare(statements, server, unsupported).disagreements) == len(statements)
    waiver = Waiver("a test", family="scope", difference="unsupported")
    comparison = compare(statements, server, unsupported, [waiver])
    assert len(comparison.waived) == sum(1 for s in statements if s.family == "scope")
    assert comparison.unused_waivers == []


def test_the_disagreements_file_reads() -> None:
    for waiver in load_waivers():
        assert waiver.reason


@pytest.mark.skipif(importlib.util.find_spec(GUARD_PACKAGE) is None,
                    reason=f"the guard's type model ({GUARD_PACKAGE}.analysis) is not in this tree yet")
def test_the_guard_model_agrees_with_postgresql(
    fixture_connection: psycopg2.extensions.connection, statements: list[Generated], server: list[Answer]
) -> None:
    model = guard_model(catalog_row(fixture_connection))
    comparison = compare(statements, server, [model(s.sql) for s in statements], load_waivers())
    assert comparison.passed and not comparison.unused_waivers, report(comparison, TypeNames(fixture_connection))


def test_the_guard_adapter_reads_the_models_api(
    monkeypatch: pytest.MonkeyPatch, fixture_connection: psycopg2.extensions.connection
) -> None:
    """``guard_model`` against stand-in modules of the API the model will have (the real one may be absent):
    columns become a typed answer, AnalysisError an error, Unsupported a gap, anything else a crash."""

    class AnalysisError(Exception):
        def __init__(self, message: str) -> None:
            super().__init__(message)
            self.message = message

    class Unsupported(Exception):
        pass

    class Catalog:
        @classmethod
        def from_row(cls, row: tuple[object, ...]) -> Catalog:
            assert row == (1,)
            return cls()

    def analyze(sql: str, catalog: Catalog) -> types.SimpleNamespace:
        if "error" in sql:
            raise AnalysisError("function error() does not exist")
        if "gap" in sql:
            raise Unsupported("gap")
        if "bug" in sql:
            raise KeyError("bug")
        column = types.SimpleNamespace(name="x", type=1700, typmod=655366)
        return types.SimpleNamespace(columns=(column,))

    for name, contents in {
        "drivers.postgres.guard": {},
        "drivers.postgres.guard.model.catalog": {"CATALOG_SQL": "SELECT 1", "Catalog": Catalog},
        "drivers.postgres.guard.model.analysis": {"analyze": analyze},
        "drivers.postgres.guard.errors": {"AnalysisError": AnalysisError, "Unsupported": Unsupported},
    }.items():
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(**contents))
    model = guard_model(catalog_row(fixture_connection))
    assert model("SELECT 1") == Answer.typed([("x", 1700, 655366)])
    assert model("SELECT error()") == Answer.error("function error() does not exist")
    assert (model("SELECT gap").kind, model("SELECT bug").kind) == ("unsupported", "crash")
