"""The SQL guard refuses every overrun the interrupt audits measured: an accepted overrun is a failure, however long it took.

Two findings files, both written by ``python -m scripts.interrupt_audit``:

- ``scripts/interrupt_audit_findings.json`` (issue 8): one expression at doubling
  sizes, time only. Every probe that overran counts, whatever the size of its
  inputs (issue 19 ended the old exemption of "large values").
- ``scripts/interrupt_statement_findings.json`` (issue 19, ``--through-gateway``):
  whole statements, direct and through a real gateway. A probe counts when its
  deciding run, on either route, kept its backend busy past limit + grace or
  grew its memory by more than the audit's memory limit (500 MB): that is
  recomputed here from the recorded numbers, not read from a flag.

Each overrun's statement, exactly as the audit sent it, goes through
``check_query`` with the policy built from the test server's own catalog (the
``policy`` fixture); the audit's tables count as granted, so only the guard's
own rules can refuse it. Nothing is measured again, so the test takes well
under a second.

A probe the findings mark ``harmless`` (its catalogue entry carries the
evidence) is skipped, and must really pass the guard. The overruns today's
guard still accepts are listed in ``ACCEPTED_TODAY`` and run as
``xfail(strict=True)``: the suite is green now, and each of them turns into
an unexpected pass (a failure) once the new guard refuses it, when its entry is
to be removed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from drivers.postgres.guard.policy import GuardPolicy as QueryPolicy
from drivers.postgres.guard.sql_guard import check_query
from gateway.errors import QueryRejected
from scripts.interrupt_statements import AUDIT_TABLES, MEMORY_LIMIT_MB

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
ISSUE_8_FINDINGS = SCRIPTS / "interrupt_audit_findings.json"
ISSUE_19_FINDINGS = SCRIPTS / "interrupt_statement_findings.json"

SMALL_INPUT_BYTES = 2 * 1024 * 1024
"""Issue 8's line between "small inputs" (a product or worse) and "large values" (linear)."""


@attrs.frozen
class Overrun:
    """One probe that outlived the statement limit or took too much memory, and the statement that did it."""

    source: str
    """``issue8`` or ``issue19``: which findings file."""
    name: str
    statement: str
    how: str
    """What overran: seconds busy, peak memory."""
    harmless: str | None

    @property
    def id(self) -> str:
        return f"{self.source}:{self.name}"


def _issue_8_statement(probe: dict[str, Any]) -> str:
    size = str(probe["size"])
    text = probe["template"]
    for argument in range(10):
        text = text.replace(f"{{n{argument}}}", size)
    return "SELECT " + text


def _issue_8_overruns() -> list[Overrun]:
    probes = json.loads(ISSUE_8_FINDINGS.read_text(encoding="utf-8"))["probes"]
    return [
        Overrun("issue8", probe["name"], _issue_8_statement(probe), f"{probe['seconds']} s", probe.get("harmless"))
        for probe in probes
        if probe["verdict"] == "overruns"
    ]


def _how_it_overran(run: dict[str, Any] | None, audit: dict[str, Any]) -> list[str]:
    """What in one recorded run passed the bounds (empty if nothing did, or it never ran)."""
    if run is None or run["busy_seconds"] is None:
        return []
    how = []
    if run["still_running"] or run["busy_seconds"] > audit["limit_seconds"] + audit["grace_seconds"]:
        how.append(f"{run['route']} busy {run['busy_seconds']} s")
    if (run["grown_mb"] or 0) > audit["memory_limit_mb"]:
        how.append(f"{run['route']} grew {run['grown_mb']} MB")
    return how


def _issue_19_overruns() -> list[Overrun]:
    document = json.loads(ISSUE_19_FINDINGS.read_text(encoding="utf-8"))
    audit = document["audit"]
    overruns = []
    for probe in document["probes"]:
        deciding = [run for run in probe["runs"] if run["size"] == probe["size"]][-1]  # a confirming run is last
        how = _how_it_overran(deciding, audit) + _how_it_overran(probe["gateway"], audit)
        if how:
            overruns.append(Overrun("issue19", probe["name"], probe["statement"], ", ".join(how), probe["harmless"]))
    return overruns


OVERRUNS = _issue_8_overruns() + _issue_19_overruns()

ACCEPTED_TODAY = frozenset({
    "issue8:format_many_references",
    "issue8:concat_ws_many",
    "issue8:quote_literal_long",
    "issue8:array_positions_long",
    "issue8:array_to_string_long",
    "issue8:array_input_long",
    "issue8:jsonb_exists_long_array",
    "issue8:json_parse_long",
    "issue8:jsonb_parse_long",
    "issue8:jsonb_parse_duplicate_keys",
    "issue8:jsonb_pretty_long",
    "issue8:jsonb_strip_nulls_long",
    "issue8:jsonb_compare_long",
    "issue8:json_field_long_object",
    "issue8:xmlelement_escape_long",
    "issue8:polygon_parse_long",
    "issue8:point_in_polygon_long",
    "issue8:circle_to_polygon_many_points",
    "issue8:multirange_union",
    "issue8:multirange_output_long",
    "issue8:to_char_timestamp_long_format",
    "issue19:md5_x40_offset",
    "issue19:md5_x40_cte",
    "issue19:sha256_x20_offset",
    "issue19:sha256_x20_constant",
    "issue19:upper_x20_offset",
    "issue19:length_x40_offset",
    "issue19:base64_x20_offset",
    "issue19:base64_x20_constant",
    "issue19:md5_x40_stored",
    "issue19:strpos_jsonb_exponents",
    "issue19:substr_strpos_jsonb_exponents",
    "issue19:like_jsonb_exponents",
    "issue19:ltrim_jsonb_exponents",
    "issue19:replace_jsonb_exponents",
    "issue19:md5_jsonb_exponents_many",
    "issue19:nested_to_json",
    "issue19:ltrim_nested_to_json",
    "issue19:nested_to_jsonb",
    "issue19:ltrim_nested_to_jsonb",
    "issue19:nested_json_build_array",
    "issue19:ltrim_nested_json_build_array",
    "issue19:nested_quote_literal",
    "issue19:nested_format_literal",
    "issue19:nested_quote_ident",
    "issue19:nested_array_text",
    "issue19:ltrim_nested_array_text",
    "issue19:nested_encode_escape",
    "issue19:like_nested_to_json",
    "issue19:strpos_nested_to_json",
    "issue19:json_array_length_x10_stored",
    "issue19:json_array_length_x10_computed",
    "issue19:jsonb_cast_x10_stored",
    "issue19:array_to_string_x10_stored",
    "issue19:repeat_count_from_column",
    "issue19:array_fill_text_cast",
    "issue19:polygon_circle_points",
    "issue19:percentile_disc_fractions",
    "issue19:percentile_cont_fractions",
    "issue19:json_array_elements_text_many",
    "issue19:array_select_series_text",
    "issue19:string_agg_large_values",
    "issue19:array_agg_of_arrays",
    "issue19:jsonb_array_elements_text_many",
    "issue19:json_array_elements_select_list",
    "issue19:array_fill_numeric_cast",
    "issue19:array_fill_bigint_cast",
    "issue19:array_fill_text_cast_column",
    "issue19:array_fill_text_to_int_cast",
    "issue19:stored_array_text_cast",
    "issue19:any_array_fill",
    "issue19:not_equal_all_array_fill",
})
"""Overruns today's guard accepts (issue 19): each one's test is an expected failure until the new guard refuses it."""


def _param(overrun: Overrun) -> Any:
    marks = ()
    if overrun.id in ACCEPTED_TODAY:
        marks = (pytest.mark.xfail(strict=True, reason="accepted by today's guard; issue 19"),)
    return pytest.param(overrun, id=overrun.id, marks=marks)


@pytest.mark.parametrize("overrun", [_param(overrun) for overrun in OVERRUNS if not overrun.harmless])
def test_overrun_is_refused(overrun: Overrun, policy: QueryPolicy) -> None:
    """A statement the audit saw outlive the limit (or take too much memory) is refused before it runs."""
    with pytest.raises(QueryRejected):
        check_query(overrun.statement, AUDIT_TABLES, policy)


def test_accepted_today_names_only_real_overruns() -> None:
    """Every xfail names an overrun the findings still hold (a stale entry could hide nothing, but misleads)."""
    ids = {overrun.id for overrun in OVERRUNS if not overrun.harmless}
    assert ACCEPTED_TODAY <= ids, sorted(ACCEPTED_TODAY - ids)


def test_harmless_overruns_carry_evidence_and_pass_the_guard(policy: QueryPolicy) -> None:
    """A probe marked harmless says why, and the guard really accepts it: the mark hides no refusal."""
    harmless = [overrun for overrun in OVERRUNS if overrun.harmless]
    for overrun in harmless:
        assert len(overrun.harmless or "") >= 40, overrun.id
        check_query(overrun.statement, AUDIT_TABLES, policy)


def test_the_findings_hold_the_small_input_class() -> None:
    """The issue 8 findings still have the audit's small-input overruns (an empty file would prove nothing)."""
    probes = json.loads(ISSUE_8_FINDINGS.read_text(encoding="utf-8"))["probes"]
    names = {probe["name"] for probe in probes if probe["verdict"] == "overruns"
             and (probe["inputs_bytes"] is None and probe["inputs_run"] is None
                  or probe["inputs_bytes"] is not None and int(probe["inputs_bytes"]) < SMALL_INPUT_BYTES)}
    assert len(names) >= 40, sorted(names)
    assert {"ltrim_long_set", "array_overlap", "jsonb_contains_arrays", "poly_distance", "xpath_following_preceding"} <= names


def test_the_statement_findings_hold_overruns_of_every_kind() -> None:
    """The issue 19 findings overran on time and on memory, through the gateway too (an empty file would prove nothing)."""
    audit = json.loads(ISSUE_19_FINDINGS.read_text(encoding="utf-8"))["audit"]
    assert audit["memory_limit_mb"] == MEMORY_LIMIT_MB and audit["through_gateway"] and not audit["interrupted"]
    overruns = [overrun for overrun in OVERRUNS if overrun.source == "issue19"]
    assert len(overruns) >= 20, [overrun.id for overrun in overruns]
    assert any(" s" in overrun.how for overrun in overruns)
    assert any(" MB" in overrun.how for overrun in overruns)
    assert any("gateway" in overrun.how for overrun in overruns)
