"""The SQL guard refuses every small-input overrun the interrupt audit measured, exactly as the audit sent it.

``scripts/interrupt_audit_findings.json`` is the last run of
``scripts/interrupt_audit.py``. Each probe that overran with less than
``SMALL_INPUT_BYTES`` of input is a query a token holder can send cheaply, so
the guard must refuse it; the few the guard lets through on purpose are listed
in ``ACCEPTED_OVERRUNS`` with the bound that holds them (docs/security.md,
"Limits"). Probes that overran only on values of several megabytes are the
linear class the guard does not bound (docs/security.md, "Overruns on large
values"); the runaway accounting of the pool holds those.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drivers.postgres.guard.policy import GuardPolicy as QueryPolicy
from drivers.postgres.guard.sql_guard import check_query
from gateway.errors import QueryRejected

FINDINGS = Path(__file__).resolve().parent.parent / "scripts" / "interrupt_audit_findings.json"

SMALL_INPUT_BYTES = 2 * 1024 * 1024
"""The audit's line between "small inputs" (a product or worse) and "large values" (linear)."""

ACCEPTED_OVERRUNS = {
    "regexp_long_pattern": "PostgreSQL refuses a pattern past its complexity limit ('regular expression is too "
    "complex') within about a second past the statement limit",
    "numeric_modulo": "numeric's own size limit caps the operands; refusing computed operands of '/' and 'mod' would "
    "refuse sum(a) / sum(b)",
    "circle_to_polygon_many_points": "linear in its point count, which PostgreSQL caps below 67 million (a 1 GB "
    "allocation): at most a few seconds past the limit, like the large values",
}
"""Small-input overruns the guard lets through on purpose, and what bounds each."""


def _overruns() -> list[dict[str, Any]]:
    probes = json.loads(FINDINGS.read_text(encoding="utf-8"))["probes"]
    return [probe for probe in probes if probe["verdict"] == "overruns"]


def _small_input(probe: dict[str, Any]) -> bool:
    if probe["inputs_bytes"] is None:
        # Not measured: either the probe builds nothing apart (XMLTABLE), or building its inputs alone failed
        # for their size (a 1 GB allocation), which puts it among the large values.
        return probe["inputs_run"] is None
    return int(probe["inputs_bytes"]) < SMALL_INPUT_BYTES


def _as_sent(probe: dict[str, Any]) -> str:
    size = str(probe["size"])
    return "SELECT " + probe["template"].replace("{n0}", size).replace("{n1}", size)


SMALL_INPUT_OVERRUNS = [probe for probe in _overruns() if _small_input(probe)]


@pytest.mark.parametrize(
    "probe",
    [probe for probe in SMALL_INPUT_OVERRUNS if probe["name"] not in ACCEPTED_OVERRUNS],
    ids=lambda probe: probe["name"],
)
def test_small_input_overrun_is_refused(probe: dict[str, Any], policy: QueryPolicy) -> None:
    """A query the audit saw outlive the statement limit with small inputs is refused before it runs."""
    with pytest.raises(QueryRejected):
        check_query(_as_sent(probe), frozenset(), policy)


def test_the_findings_hold_the_small_input_class() -> None:
    """The findings file still has the audit's small-input overruns (an empty file would prove nothing)."""
    names = {probe["name"] for probe in SMALL_INPUT_OVERRUNS}
    assert len(names) >= 40, sorted(names)
    assert {"ltrim_long_set", "array_overlap", "jsonb_contains_arrays", "poly_distance", "xpath_following_preceding"} <= names


def test_every_accepted_overrun_is_still_a_finding() -> None:
    """An exception names a probe the audit still reports, so a stale exception cannot hide a new overrun."""
    names = {probe["name"] for probe in SMALL_INPUT_OVERRUNS}
    assert set(ACCEPTED_OVERRUNS) <= names, set(ACCEPTED_OVERRUNS) - names


def test_accepted_overruns_really_pass_the_guard(policy: QueryPolicy) -> None:
    """The listed exceptions are the guard's choice, not a refusal the list hides: remove one once it is refused."""
    for probe in SMALL_INPUT_OVERRUNS:
        if probe["name"] in ACCEPTED_OVERRUNS:
            check_query(_as_sent(probe), frozenset(), policy)

