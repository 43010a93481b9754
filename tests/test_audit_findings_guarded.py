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

The guard counts the administrator's stored values at ``assumed_data_value_bytes``
(64 KiB by default; the operator sets it to the largest value their tables
hold). The audit stores values of up to 64 MiB in ``public.audit_values``, so a
statement that reads that table is checked with the setting an operator of
that data would give: the largest value of the row it reads (``list``, four
bytes per element, is the largest column).

A probe the findings mark ``harmless`` (its catalogue entry carries the
evidence: PostgreSQL itself bounds it) is skipped. No overrun is excused
otherwise: one the guard accepts fails its test.
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
from repository_scripts import script

AUDIT_TABLES = script("interrupt_statements").AUDIT_TABLES
MEMORY_LIMIT_MB = script("interrupt_statements").MEMORY_LIMIT_MB
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
    stored_bytes: int = 0
    """The largest stored value the statement reads (0: it reads none of ``audit_values``)."""

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
            stored = 4 * int(probe["size"]) if "public.audit_values" in probe["statement"] else 0
            overruns.append(Overrun("issue19", probe["name"], probe["statement"], ", ".join(how), probe["harmless"],
                                    stored))
    return overruns


OVERRUNS = _issue_8_overruns() + _issue_19_overruns()

@pytest.mark.parametrize("overrun", [pytest.param(overrun, id=overrun.id) for overrun in OVERRUNS
                                     if not overrun.harmless])
def test_overrun_is_refused(overrun: Overrun, policy: QueryPolicy) -> None:
    """A statement the audit saw outlive the limit (or take too much memory) is refused before it runs, with the
    stored data counted at the size the audit stored."""
    if overrun.stored_bytes:
        limits = attrs.evolve(policy.limits, assumed_data_value_bytes=overrun.stored_bytes)
        policy = QueryPolicy(policy.catalog, policy.functions, limits)
    with pytest.raises(QueryRejected):
        check_query(overrun.statement, AUDIT_TABLES, policy)


def test_harmless_overruns_carry_evidence() -> None:
    """A probe marked harmless says why PostgreSQL itself bounds it (the guard may still refuse it: the
    regexp probe's inputs can build 12 MiB of captures, over max_built_value_bytes)."""
    harmless = [overrun for overrun in OVERRUNS if overrun.harmless]
    assert {overrun.name for overrun in harmless} == {"regexp_long_pattern", "numeric_modulo"}
    for overrun in harmless:
        assert len(overrun.harmless or "") >= 40, overrun.id


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
