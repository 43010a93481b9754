"""scripts/interrupt_audit.py: its catalogue covers issue 8's families, the findings file matches it, its runner works."""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from scripts import interrupt_audit as audit
from scripts import interrupt_catalogue as catalogue
from scripts import interrupt_measure as measure
from scripts import interrupt_probes as probes
from scripts import interrupt_runner as runner_module
from support import dsn_under_test, run_sql

ROOT = Path(__file__).resolve().parent.parent
FINDINGS = ROOT / "scripts" / "interrupt_audit_findings.json"
ISSUE_FAMILIES = {"text", "bytea", "bitstring", "arrays", "json", "fulltext", "xml", "geometry", "ranges", "numeric"}


def test_every_issue_family_has_probes_and_every_probe_a_family() -> None:
    """Each family issue 8 names has at least one probe; each probe is in a known family."""
    assert {family.value for family in probes.REQUIRED_FAMILIES} == ISSUE_FAMILIES
    assert ISSUE_FAMILIES <= {probe.family.value for probe in catalogue.PROBES}
    assert all(isinstance(probe.family, probes.Family) for probe in catalogue.PROBES)


def test_probes_are_well_formed() -> None:
    """Names are unique, every template grows some argument, sizes are sane, and --quick takes one per family."""
    names = [probe.name for probe in catalogue.PROBES]
    assert len(names) == len(set(names))
    for probe in catalogue.PROBES:
        assert probe.varied_arguments, probe.name
        assert 1 <= probe.small <= probe.start <= probe.max_size, probe.name
        assert probe.functions or probe.syntax, probe.name
        assert "{n" not in probe.expression(dict.fromkeys(probe.varied_arguments, 7)), probe.name
    quick = audit.select_probes(None, None, quick=True)
    assert sorted(probe.family.value for probe in quick) == sorted(family.value for family in probes.Family)


def test_probed_functions_exist_in_the_server_catalog() -> None:
    """Every signature a probe names resolves in the server's pg_catalog."""
    signatures = sorted({signature for probe in catalogue.PROBES for signature in probe.functions})
    missing = run_sql(None, "SELECT s FROM unnest(%s::text[]) s WHERE to_regprocedure(s) IS NULL", (signatures,))
    assert missing == []


def test_findings_file_matches_the_catalogue() -> None:
    """The committed findings cover every probe once, and each overrun names what to guard and what drives it."""
    document = json.loads(FINDINGS.read_text())
    assert document["audit"]["limit_seconds"] == 1.0 and not document["audit"]["interrupted"]
    by_name = {finding["name"]: finding for finding in document["probes"]}
    assert len(by_name) == len(document["probes"])
    assert set(by_name) == {probe.name for probe in catalogue.PROBES}
    for finding in by_name.values():
        assert finding["verdict"] in {"stops", "overruns"}, finding["name"]
        if finding["verdict"] == "overruns":
            assert finding["functions"] or finding["syntax"], finding["name"]
            assert finding["cost_arguments"] and finding["cost_shape"] in {"alone", "product", "sum"}, finding["name"]
            assert finding["seconds"] > document["audit"]["limit_seconds"] + document["audit"]["grace_seconds"]


def test_runner_reports_a_cheap_probe_as_stopping() -> None:
    """One probe at its smallest size, in a scratch database of its own, completes and is reported as stopping."""
    [probe] = audit.select_probes(None, ["md5_long"], quick=False)
    probe = attrs.evolve(probe, max_size=probe.start)
    database = runner_module.ScratchDatabase(dsn_under_test())
    database.create()
    try:
        finding = measure.ProbeRunner(database, measure.Limits(1.0, 20.0)).audit(probe)
    finally:
        database.drop()
    assert finding.verdict is measure.Verdict.STOPS
    assert [(run.size, run.run.outcome) for run in finding.runs] == [(probe.start, runner_module.Outcome.COMPLETED)]
    assert [entry.name for entry in finding.catalog] == ["md5"]
    assert run_sql(None, "SELECT 1 FROM pg_database WHERE datname = %s", (database.name,)) == []
