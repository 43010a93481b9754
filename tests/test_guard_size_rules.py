"""Every size rule of the SQL guard holds against the real server (issue 19, item 3).

The guard bounds every computed value with a rule (``sizes/rules*.py``), the literal and cast paths of
``sizes/size_model.py`` and ``sizes/type_sizes.py``, and set-returning functions' rows with ``ROWS``. Here
each of them meets some twenty thousand generated calls of constants (``size_rule_cases``: seeded random values of every type
plus hand-written worst cases: backslashes, quotes, control characters, multibyte and case-growing
characters, exponents that print thousands of digits, nesting that compounds escaping), the server measures
each result (its text, what it holds, its rows: ``size_rule_checker``) and no measure may exceed the model's
bound. The last tests prove the checker: it reports today's rules broken on purpose, the old assumption that
``to_json`` keeps a value's size among them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg2.extensions
import pytest

from drivers.postgres.guard.sizes import json_sizes
from drivers.postgres.guard.sizes import rules as size_rules
from drivers.postgres.guard.sizes import size_model as sizes
from drivers.postgres.guard.sizes.bounds import Bound
from drivers.postgres.guard.sizes.rules import ROWS, RULES, Arg, RuleContext
from size_rule_cases import Case, CaseMaker
from size_rule_checker import SCRATCH_SQL, BoundModel, Measure, Report, check, fetch_overloads, measure
from support import connect, database_from

SEED = 19
MINIMUM_CHECKED = 10_000
"""Cases whose bound is compared with the server's measures (about 14 000 with this seed)."""

ADMINISTRATOR_DATA = {
    "current_setting": "a setting's value is the administrator's configuration",
    "current_schemas": "the search path is the administrator's configuration",
    "enum_range": "an enum's labels are the administrator's type",
    "ts_lexize": "a dictionary's lexemes come from the administrator's dictionary",
}
"""Rules whose bound is the administrator's data (``D``) by design: constants cannot measure it, so their cases
are only held to say so (a bound that is not the query's own constants)."""

HELD_BEYOND_THE_MODEL = {
    "tsquery": "a tsquery holds 12 bytes per operand and operator and prints as little as 1 character for one "
               "('!a' prints 4, holds 30; to_tsquery('a-b') holds 72 bytes from 3 characters): the model bounds it "
               "by its print, which the work budget of text search (ts_rank, @@) is reckoned in; counting what "
               "it holds (up to 24 bytes per character of text) refuses everyday ranking (analyst query 39)",
}
"""Result types whose held form the model does not bound, and why (their printed form it does; see
``test_what_a_tsquery_holds_is_not_bounded_yet``). Arrays of them count as them."""

NOT_CALLABLE = {
    "int4_avg_combine": "an aggregate's combine function: the server refuses it outside an aggregate "
                        "(XX000 aggregate function called in non-aggregate context), so no query runs it",
}
"""Rules no SQL can exercise, and why."""


@pytest.fixture(scope="module")
def connection() -> Iterator[psycopg2.extensions.connection]:
    """An autocommit connection to a scratch database with the measuring function and the cases' own types."""
    with database_from(SCRATCH_SQL) as database:
        opened = connect(database)
        opened.autocommit = True
        try:
            yield opened
        finally:
            opened.close()


@pytest.fixture(scope="module")
def model(connection: psycopg2.extensions.connection) -> BoundModel:
    return BoundModel(connection)


@pytest.fixture(scope="module")
def cases(connection: psycopg2.extensions.connection) -> list[Case]:
    overloads = fetch_overloads(connection, set(RULES) | set(ROWS))
    maker = CaseMaker(SEED)
    return maker.call_cases(overloads, set(ROWS)) + maker.literal_cases()


@pytest.fixture(scope="module")
def measures(connection: psycopg2.extensions.connection, cases: list[Case]) -> dict[str, Measure | str]:
    return measure(connection, cases)


@pytest.fixture(scope="module")
def report(cases: list[Case], measures: dict[str, Measure | str], model: BoundModel) -> Report:
    return check(cases, measures, model)


# Coverage --------------------------------------------------------------------------------------------------

def test_every_rule_has_cases_the_server_ran_and_the_model_bounded(report: Report) -> None:
    """Each rule in RULES and ROWS has checked cases, except the administrator's data and what SQL cannot call."""
    tallies = report.tallies
    missing = []
    for name in sorted(RULES):
        tally = tallies.get(name)
        if name in NOT_CALLABLE:
            continue
        if name in ADMINISTRATOR_DATA:
            if tally is None or tally.data == 0:
                missing.append(f"{name}: no case bounded by the administrator's data")
        elif tally is None or tally.checked == 0:
            missing.append(f"{name}: {tally}")
    for name in sorted(ROWS):
        tally = tallies.get(f"rows:{name}")
        if tally is None or tally.rows_checked == 0:
            missing.append(f"rows:{name}: {tally}")
    assert not missing, "rules without a checked case:\n" + "\n".join(missing)
    assert sum(t.checked for t in tallies.values()) >= MINIMUM_CHECKED


def test_casts_and_literals_of_every_generated_type_are_checked(report: Report) -> None:
    """Every type the cases generate has checked literals, and its cast from text a bound."""
    unchecked = [rule for rule, tally in report.tallies.items()
                 if rule.startswith("literal:") and tally.checked == 0
                 or rule.startswith("cast:") and tally.checked + tally.unbounded == 0]
    assert not unchecked
    assert len([rule for rule in report.tallies if rule.startswith("literal:")]) >= 60


def test_aggregates_and_window_functions_are_checked_over_many_rows(report: Report) -> None:
    """Each aggregate and window rule has checked cases over more than one row (VALUES or generate_series)."""
    names = ("string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "xmlagg",
             "range_agg", "range_intersect_agg", "max", "min", "mode", "bit_and", "bit_or", "bit_xor",
             "percentile_disc", "percentile_cont", "first_value", "last_value", "nth_value", "lag", "lead")
    assert [name for name in names if report.tallies[name].many_rows == 0] == []


# The property ----------------------------------------------------------------------------------------------

def test_no_value_prints_more_than_its_bound(report: Report) -> None:
    """The text of every value (its type's output function) is at most the model's bound."""
    failing = Report(report.tallies, [v for v in report.violations if v.measure.text_bytes > v.bound.fixed
                                      and not v.bound.unknown])
    assert not failing.violations, failing.describe()


def _holds_more(report: Report, types: Callable[[str], bool]) -> Report:
    return Report(report.tallies, [v for v in report.violations if v.measure.stored_bytes > v.bound.fixed
                                   and not v.bound.unknown and types(v.measure.type_name or "")])


def _beyond_the_model(type_name: str) -> bool:
    return type_name.removesuffix("[]") in HELD_BEYOND_THE_MODEL


def test_no_value_holds_more_than_its_bound(report: Report) -> None:
    """What every value holds (``pg_column_size`` without its length word) is at most the model's bound."""
    failing = _holds_more(report, lambda type_name: not _beyond_the_model(type_name))
    assert not failing.violations, failing.describe()


@pytest.mark.xfail(strict=True, reason=HELD_BEYOND_THE_MODEL["tsquery"])
def test_what_a_tsquery_holds_is_not_bounded_yet(report: Report) -> None:
    """The known gap, kept in view: a tsquery holds more than the model's bound (this fails until it does not)."""
    failing = _holds_more(report, _beyond_the_model)
    assert not failing.violations, failing.describe()


def test_no_set_returns_more_rows_than_its_row_bound(report: Report) -> None:
    """Set-returning functions, aggregates and windows make at most the rows the model bounds."""
    failing = Report(report.tallies, [v for v in report.violations if v.measure.rows > v.rows_bound.fixed])
    assert not failing.violations, failing.describe()


def test_administrator_data_rules_never_claim_a_constant_bound(report: Report) -> None:
    """The rules bounded by the administrator's data give no constant bound a constant query could be held to."""
    assert {name: report.tallies[name].checked for name in ADMINISTRATOR_DATA} == dict.fromkeys(ADMINISTRATOR_DATA, 0)


# The checker fails wrong rules -----------------------------------------------------------------------------

def _recheck(cases: list[Case], measures: dict[str, Measure | str], model: BoundModel, rules: set[str]) -> Report:
    """The checker over the cases of ``rules``, the known gap (``HELD_BEYOND_THE_MODEL``) left out."""
    found = check([case for case in cases if case.rule in rules], measures, model)
    known = _holds_more(found, _beyond_the_model).violations
    return Report(found.tallies, [v for v in found.violations if v not in known or v.measure.text_bytes > v.bound.fixed
                                  or v.measure.rows > v.rows_bound.fixed])


def _same_size(args: list[Arg], _: RuleContext) -> Bound:
    return args[0].size if args else Bound()


def test_checker_reports_the_old_to_json_assumption(
        monkeypatch: pytest.MonkeyPatch, cases: list[Case], measures: dict[str, Measure | str],
        model: BoundModel) -> None:
    """With to_json, to_jsonb and json_build_array "size-preserving", nested to_json over backslashes fails."""
    for name in ("to_json", "to_jsonb", "json_build_array"):
        monkeypatch.setitem(RULES, name, _same_size)
    found = _recheck(cases, measures, model, {"to_json", "to_jsonb", "json_build_array"})
    nested = [v for v in found.violations if v.case.sql.startswith("SELECT to_json(to_json(to_json(")]
    assert nested, found.describe()
    assert max(v.measure.text_bytes / v.bound.fixed for v in nested) > 16  # doubled at every level


def _halve_quoting(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(size_rules, "quoted", lambda size: size.scaled(1, 2))
    patch.setattr(sizes, "quoted", lambda size: size.scaled(1, 2))


def _json_escaping_doubles(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(json_sizes, "json_escaped", lambda size: size.scaled(2, 2))


def _padding_one_byte_per_character(patch: pytest.MonkeyPatch) -> None:
    for name in ("lpad", "rpad"):
        patch.setitem(RULES, name, lambda args, _: args[1].number)


def _repeat_adds(patch: pytest.MonkeyPatch) -> None:
    patch.setitem(RULES, "repeat", lambda args, _: args[0].size + args[1].number)


def _case_mapping_keeps_size(patch: pytest.MonkeyPatch) -> None:
    for name in ("upper", "initcap"):
        patch.setitem(RULES, name, _same_size)


def _string_agg_ignores_rows(patch: pytest.MonkeyPatch) -> None:
    patch.setitem(RULES, "string_agg", lambda args, _: args[0].size + args[1].size)


def _numbers_as_written(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(sizes, "numeric_printed", len)


def _jsonb_as_printed(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(sizes, "jsonb_held", lambda text: 0)


def _one_row_per_series(patch: pytest.MonkeyPatch) -> None:
    patch.setitem(ROWS, "generate_series", lambda args: Bound(1))


MUTATIONS: dict[str, tuple[set[str], Callable[[pytest.MonkeyPatch], None]]] = {
    "quoting halved": ({"array-constructor", "literal:text[]", "array_agg", "array_fill", "array_append"},
                       _halve_quoting),
    "JSON escaping doubles": ({"to_json", "json_build_object", "json_agg"}, _json_escaping_doubles),
    "padding one byte per character": ({"lpad", "rpad"}, _padding_one_byte_per_character),
    "repeat adds its count": ({"repeat"}, _repeat_adds),
    "case mapping keeps the size": ({"upper", "initcap"}, _case_mapping_keeps_size),
    "string_agg ignores its rows": ({"string_agg"}, _string_agg_ignores_rows),
    "numbers as written": ({"literal:numeric", "cast:numeric"}, _numbers_as_written),
    "jsonb as printed only": ({"literal:jsonb", "jsonb_strip_nulls"}, _jsonb_as_printed),
    "one row per series": ({"rows:generate_series"}, _one_row_per_series),
}
"""Rules weakened on purpose, and the rules whose cases must then fail."""


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_checker_reports_a_rule_broken_on_purpose(
        mutation: str, monkeypatch: pytest.MonkeyPatch, cases: list[Case], measures: dict[str, Measure | str],
        model: BoundModel) -> None:
    """Each rule weakened on purpose is reported by the same checker, on the cases of what it bounds."""
    rules, apply = MUTATIONS[mutation]
    assert not _recheck(cases, measures, model, rules).violations  # the rules as they are hold
    apply(monkeypatch)
    assert _recheck(cases, measures, model, rules).violations
