"""scripts/interrupt_audit.py: its catalogues cover issues 8 and 19, the findings files match them, its runners work."""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from repository_scripts import script
from support import dsn_under_test, run_sql

audit = script("interrupt_audit")
backend = script("interrupt_backend")
catalogue = script("interrupt_catalogue")
gateway_module = script("interrupt_gateway")
measure = script("interrupt_measure")
probes = script("interrupt_probes")
runner_module = script("interrupt_runner")
statement_catalogue = script("interrupt_statement_catalogue")
statements = script("interrupt_statements")

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


# -- issue 19: whole statements, time and memory, direct and through a gateway ---------------------------

STATEMENT_FINDINGS = ROOT / "scripts" / "interrupt_statement_findings.json"
ISSUE_19_EXAMPLES = 11
"""Issue 19's examples: printed sizes; nested to_json under ltrim, LIKE and strpos; md5 x 40; the planner's
``= ANY``; five of memory (array cast, polygon of a circle, json_array_length x 10, percentile_disc, and
json_array_elements_text)."""


def test_statement_probes_are_well_formed() -> None:
    """Names are unique, sizes grow, each size gives its own statement, every dimension and example is there."""
    names = [probe.name for probe in statement_catalogue.STATEMENT_PROBES]
    assert len(names) == len(set(names))
    assert {probe.dimension for probe in statement_catalogue.STATEMENT_PROBES} == set(statements.Dimension)
    for probe in statement_catalogue.STATEMENT_PROBES:
        assert probe.sizes and list(probe.sizes) == sorted(set(probe.sizes)), probe.name
        texts = [probe.statement(size) for size in probe.sizes]
        assert len(set(texts)) == len(texts), probe.name
        assert all(text.startswith(("SELECT ", "WITH ")) and "{n}" not in text for text in texts), probe.name
        assert len(texts[-1].encode()) < 100 * 1024, probe.name  # the gateway's max_query_bytes
    examples = [probe for probe in statement_catalogue.STATEMENT_PROBES if probe.example]
    assert len(examples) >= ISSUE_19_EXAMPLES
    quick = audit.select_statement_probes(None, None, quick=True)
    dimensions_in_order = dict.fromkeys(probe.dimension for probe in statement_catalogue.STATEMENT_PROBES)
    assert [probe.dimension for probe in quick] == list(dimensions_in_order)


def test_statement_findings_file_matches_the_catalogue() -> None:
    """The committed statement findings cover every probe once, each at one of its sizes, with its exact statement."""
    document = json.loads(STATEMENT_FINDINGS.read_text())
    assert document["audit"]["limit_seconds"] == 1.0 and document["audit"]["through_gateway"]
    by_name = {finding["name"]: finding for finding in document["probes"]}
    assert len(by_name) == len(document["probes"])
    catalogue_probes = {probe.name: probe for probe in statement_catalogue.STATEMENT_PROBES}
    assert set(by_name) == set(catalogue_probes)
    for name, finding in by_name.items():
        probe = catalogue_probes[name]
        assert finding["verdict"] in {"stops", "overruns"}, name
        assert finding["size"] in probe.sizes and finding["statement"] == probe.statement(finding["size"]), name
        assert finding["gateway"] is not None and finding["gateway"]["http_status"], name
        assert finding["harmless"] == (probe.harmless or None), name


def test_statement_runner_measures_direct_and_through_a_gateway() -> None:
    """A cheap probe runs direct and through a real gateway (its busy time and memory read); a refused one is told."""
    database = runner_module.ScratchDatabase(dsn_under_test())
    database.create()
    monitor = None
    try:
        database.admin_sql("CREATE TABLE public.audit_one (id integer PRIMARY KEY); "
                           "INSERT INTO public.audit_one VALUES (1)", database=database.name)
        monitor = backend.ActivityMonitor(dsn_under_test(), "dbgateway-audit-test")
        cheap = statements.StatementProbe(
            statements.Dimension.MANY_CALLS, "cheap",
            statements.template("SELECT md5(repeat('a', {n} + o.id - o.id)) FROM public.audit_one o"), (1000,),
            "characters")
        refused = statements.StatementProbe(
            statements.Dimension.MANY_CALLS, "refused",
            statements.template("SELECT length(repeat('a', {n}))"), (10_000_000,), "characters")
        with gateway_module.running_gateway(1.0) as gateway:
            assert gateway.register(dsn_under_test(), database.name) == ["audit_public_audit_one"]
            runner = statements.StatementRunner(database, measure.Limits(1.0, 20.0), monitor, gateway)
            ran, refusal = runner.audit(cheap), runner.audit(refused)
    finally:
        if monitor is not None:
            monitor.close()
        database.drop()
    assert ran.verdict is statements.StatementVerdict.STOPS and ran.overran == []
    [direct] = ran.runs
    assert direct.outcome is runner_module.Outcome.COMPLETED and direct.busy_seconds is not None
    assert direct.peak_mb and direct.peak_mb > 0 and direct.memory_method
    assert ran.gateway is not None and ran.gateway.http_status == 200 and ran.gateway.busy_seconds is not None
    assert ran.gateway.peak_mb and ran.gateway.peak_mb > 0
    assert refusal.gateway is not None and refusal.gateway.http_status == 400
    assert refusal.gateway.error_code == "query_rejected" and refusal.gateway.busy_seconds is None
    assert refusal.as_json()["gateway"]["accepted"] is False and ran.as_json()["gateway"]["accepted"] is True
    assert run_sql(None, "SELECT 1 FROM pg_database WHERE datname = %s", (database.name,)) == []
