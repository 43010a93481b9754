"""Find built-in functions and operators whose single call ignores PostgreSQL's statement time limit.

Some built-ins loop without checking for interrupts, so ``statement_timeout``, the
gateway's cancel and even ``pg_terminate_backend`` wait until the call returns
(issue 8). This script measures which. It creates a scratch database on the
server, runs each probe of ``interrupt_catalogue.PROBES`` at doubling sizes under
``statement_timeout = <limit>``, times every statement from sending it to its
answer, and drops the database at the end (also after Ctrl-C or an error).

A probe *stops* when every size answered within limit + 0.5 s (done, cancelled,
or refused by a size limit of PostgreSQL); it *overruns* when one answered
later: the call ignored the cancel. It has an *error* when its smallest size
already failed, which means the probe itself is wrong. How an overrun is
confirmed and traced to its arguments is in ``interrupt_measure``. A statement
that has not answered after --max-seconds is abandoned: its connection is
closed and its backend, which runs on until its next interrupt check, is waited
for at the end.

Run it from the repository root (about 10 minutes for every family on 2 busy cores; --quick
takes one probe of each)::

    .venv/bin/python -m scripts.interrupt_audit [--dsn DSN] [--limit 1] [--families text,arrays]
        [--probes NAME,...] [--quick] [--max-seconds 20] [--json scripts/interrupt_audit_findings.json]

The findings of the last full run are in docs/security.md ("Built-ins that
ignore the statement limit") and scripts/interrupt_audit_findings.json.

Issue 19's statement audit (``interrupt_statements``: whole statements, several
calls, inputs from table columns, aggregates, windows, set-returning functions,
array casts, planner work, literals that print long, nested escaping) measures
memory beside time and also runs every probe through a real gateway
(``dbgateway serve`` started from this venv on a free port, its data in a
temporary directory). Busy time is read from pg_stat_activity; peak memory is
the backend's VmHWM from /proc/<pid>/status after resetting it through
/proc/<pid>/clear_refs (``interrupt_backend``; the server must run on this
machine, and the audit as root or as the server's user). About 8 minutes::

    .venv/bin/python -m scripts.interrupt_audit --through-gateway --max-seconds 45
        [--dimensions planner,memory] [--probes NAME,...] [--quick]
        [--json scripts/interrupt_statement_findings.json]

Its findings are in docs/security.md ("Whole statements, memory and the
gateway") and scripts/interrupt_statement_findings.json;
tests/test_audit_findings_guarded.py replays every overrun of both findings
files through the SQL guard.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import psycopg2

from scripts.interrupt_backend import ActivityMonitor
from scripts.interrupt_catalogue import PROBES
from scripts.interrupt_gateway import running_gateway
from scripts.interrupt_measure import GRACE_SECONDS, CostShape, Finding, Limits, ProbeRunner, Verdict
from scripts.interrupt_probes import Family, Probe
from scripts.interrupt_runner import APPLICATION_NAME, Outcome, Run, ScratchDatabase, catalog_entry
from scripts.interrupt_statement_catalogue import STATEMENT_PROBES
from scripts.interrupt_statements import (
    MEMORY_LIMIT_MB, SAFE_MEMORY_MB, SETUP_SQL, Dimension, StatementFinding, StatementProbe, StatementRunner,
)

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


def select_probes(families: Sequence[Family] | None, names: Sequence[str] | None, quick: bool) -> list[Probe]:
    """The probes of ``families`` (all when None), narrowed to ``names`` or, with ``quick``, to each family's first."""
    chosen = [probe for probe in PROBES if families is None or probe.family in families]
    if names:
        unknown = set(names) - {probe.name for probe in PROBES}
        if unknown:
            raise SystemExit(f"unknown probe(s): {', '.join(sorted(unknown))}")
        chosen = [probe for probe in chosen if probe.name in names]
    if quick:
        firsts: dict[Family, Probe] = {}
        for probe in chosen:
            firsts.setdefault(probe.family, probe)
        chosen = list(firsts.values())
    return chosen


def finding_json(finding: Finding) -> dict[str, Any]:
    """One probe's object in the JSON findings."""
    probe, deciding, limits = finding.probe, finding.deciding, finding.limits
    return {
        "family": probe.family.value,
        "name": probe.name,
        "verdict": finding.verdict.value,
        "harmless": probe.harmless or None,
        "confirmed": finding.confirmed,
        "growth_exponent": finding.growth_exponent,
        "functions": sorted({entry.name for entry in finding.catalog}),
        "signatures": [entry.signature for entry in finding.catalog],
        "implementations": [entry.implementation for entry in finding.catalog],
        "operators": list(probe.operators),
        "operator_signatures": sorted({signature for entry in finding.catalog for signature in entry.operators
                                       if signature.split(" ")[1] in probe.operators}),
        "syntax": probe.syntax or None,
        "cost_arguments": list(finding.cost_arguments),
        "cost_shape": finding.cost_shape.value if finding.cost_shape else None,
        "inputs_overran": finding.inputs_overran,
        "inputs_bytes": finding.inputs_bytes,
        "template": probe.template,
        "unit": probe.unit,
        "size": deciding.size,
        "seconds": round(deciding.run.seconds, 3),
        "outcome": deciding.run.outcome.value,
        "overrun_seconds": round(max(0.0, deciding.run.seconds - limits.statement_seconds), 3),
        "runs": [run.as_json() for run in finding.runs],
        "inputs_run": finding.inputs.as_json() if finding.inputs else None,
        "variants": [variant.as_json() for variant in finding.variants],
    }


def shape(template: str, width: int = 64) -> str:
    text = " ".join(template.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def seconds_text(run: Run) -> str:
    return f">={run.seconds:.0f}" if run.outcome is Outcome.ABANDONED else f"{run.seconds:.2f}"


def verdict_text(finding: Finding) -> str:
    notes = ["unconfirmed" if finding.verdict is Verdict.OVERRUNS and not finding.confirmed else "",
             "inputs too" if finding.inputs_overran else ""]
    notes = [note for note in notes if note]
    return finding.verdict.value + (f" ({', '.join(notes)})" if notes else "")


def bytes_text(count: int | None) -> str:
    if count is None:
        return ""
    return f"{count / (1 << 20):.1f} MiB" if count >= 1 << 20 else f"{count / 1024:.0f} KiB"


COST_JOINERS = {CostShape.ALONE: ",", CostShape.PRODUCT: "×", CostShape.SUM: "+"}


def cost_text(finding: Finding) -> str:
    """The cost arguments: ``0`` (one), ``0,1`` (each alone), ``0×1`` (their product), ``0+1`` (their sum)."""
    if finding.cost_shape is None:
        return ""
    return COST_JOINERS[finding.cost_shape].join(str(argument) for argument in finding.cost_arguments)


def table_line(finding: Finding) -> str:
    deciding = finding.deciding
    return (
        f"{finding.probe.family.value:<9} {finding.probe.name:<31} {deciding.size:>9} {seconds_text(deciding.run):>6} "
        f"{deciding.run.outcome.value:<9} {verdict_text(finding):<32} {bytes_text(finding.inputs_bytes):>9} "
        f"{cost_text(finding):<5} {shape(finding.probe.template)}"
    )


def print_table(findings: Sequence[Finding]) -> None:
    print(f"{'family':<9} {'probe':<31} {'size':>9} {'secs':>6} {'outcome':<9} {'verdict':<32} {'inputs':>9} "
          f"{'cost':<5} shape")
    for finding in sorted(findings, key=lambda f: (f.verdict is not Verdict.OVERRUNS, f.probe.family.value)):
        print(table_line(finding))


def select_statement_probes(dimensions: Sequence[Dimension] | None, names: Sequence[str] | None,
                            quick: bool) -> list[StatementProbe]:
    """The statement probes of ``dimensions`` (all when None), narrowed to ``names`` or, with ``quick``, to each first."""
    chosen = [probe for probe in STATEMENT_PROBES if dimensions is None or probe.dimension in dimensions]
    if names:
        unknown = set(names) - {probe.name for probe in STATEMENT_PROBES}
        if unknown:
            raise SystemExit(f"unknown statement probe(s): {', '.join(sorted(unknown))}")
        chosen = [probe for probe in chosen if probe.name in names]
    if quick:
        firsts: dict[Dimension, StatementProbe] = {}
        for probe in chosen:
            firsts.setdefault(probe.dimension, probe)
        chosen = list(firsts.values())
    return chosen


def busy_text(seconds: float | None, still_running: bool = False) -> str:
    if seconds is None:
        return "-"
    return f">={seconds:.0f}" if still_running else f"{seconds:.2f}"


def statement_line(finding: StatementFinding) -> str:
    deciding, gateway = finding.deciding, finding.gateway
    through = "" if gateway is None else (
        f"{gateway.http_status} {gateway.error_code or 'ok':<15} {busy_text(gateway.busy_seconds, gateway.still_running):>6} "
        f"{gateway.grown_mb if gateway.grown_mb is not None else '-':>7}")
    overran = "+".join(finding.overran) or "-"
    return (f"{finding.probe.dimension.value:<13} {finding.probe.name:<36} {deciding.size:>10} "
            f"{busy_text(deciding.busy_seconds, deciding.still_running):>6} {deciding.grown_mb or 0:>7.1f} "
            f"{finding.verdict.value:<8} {overran:<11} {through}")


def print_statement_table(findings: Sequence[StatementFinding]) -> None:
    print(f"{'dimension':<13} {'probe':<36} {'size':>10} {'busy':>6} {'grew MB':>7} {'verdict':<8} {'overran':<11} "
          f"gateway: status, error, busy, grew MB")
    for finding in findings:
        print(statement_line(finding))


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dsn", default=os.environ.get("DBGATEWAY_TEST_DSN", DEFAULT_DSN),
                        help="the server (default: DBGATEWAY_TEST_DSN or the local postgres)")
    parser.add_argument("--limit", type=float, default=1.0, help="statement_timeout in seconds (default 1)")
    parser.add_argument("--families", help="comma-separated: " + ",".join(family.value for family in Family))
    parser.add_argument("--probes", help="comma-separated probe names")
    parser.add_argument("--quick", action="store_true", help="only the first probe of each chosen family")
    parser.add_argument("--max-seconds", type=float, default=20.0,
                        help="abandon a statement that has not answered after this long (default 20)")
    parser.add_argument("--drain-seconds", type=float, default=180.0,
                        help="at the end, wait this long for abandoned backends to end (default 180)")
    parser.add_argument("--json", type=Path, help="write every measurement to this file")
    parser.add_argument("--statements", action="store_true",
                        help="run issue 19's statement probes (time and memory) instead of issue 8's expressions")
    parser.add_argument("--through-gateway", action="store_true",
                        help="with --statements: also send each probe through a dbgateway serve process")
    parser.add_argument("--dimensions", help="with --statements, comma-separated: "
                        + ",".join(dimension.value for dimension in Dimension))
    arguments = parser.parse_args(argv)
    if arguments.through_gateway:
        arguments.statements = True
    try:
        arguments.dimensions = ([Dimension(name) for name in arguments.dimensions.split(",")]
                                if arguments.dimensions else None)
    except ValueError as error:
        parser.error(str(error))
    try:
        arguments.families = [Family(name) for name in arguments.families.split(",")] if arguments.families else None
    except ValueError as error:
        parser.error(str(error))
    arguments.probes = arguments.probes.split(",") if arguments.probes else None
    return arguments


def run_audit(probes: Sequence[Probe], runner: ProbeRunner) -> tuple[list[Finding], bool]:
    """Audit each probe in turn, with a progress line on stderr; returns the findings and whether Ctrl-C stopped it."""
    started = time.monotonic()
    findings: list[Finding] = []
    try:
        for number, probe in enumerate(probes, 1):
            findings.append(runner.audit(probe))
            print(f"[{number}/{len(probes)} {time.monotonic() - started:4.0f} s] {table_line(findings[-1])}",
                  file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print("interrupted: cleaning up", file=sys.stderr)
        return findings, True
    return findings, False


def clean_up(database: ScratchDatabase, drain_seconds: float) -> list[int]:
    """Wait for abandoned backends, drop the scratch database; return the pids still running."""
    still_running = database.drain(drain_seconds)
    try:
        database.drop()
    except psycopg2.Error as error:
        print(f"could not drop {database.name} ({' '.join(str(error).split())}); backends still running: "
              f"{still_running}. Drop it later: DROP DATABASE \"{database.name}\" WITH (FORCE)", file=sys.stderr)
    return still_running


def stop_on_sigterm() -> None:
    """SIGTERM ends the audit as Ctrl-C does: the statement under way is abandoned and the database dropped."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def run_statement_audit(arguments: argparse.Namespace, limits: Limits, argv: Sequence[str] | None) -> int:
    """Issue 19's statement probes: direct, and through a gateway with --through-gateway."""
    probes = select_statement_probes(arguments.dimensions, arguments.probes, arguments.quick)
    database = ScratchDatabase(arguments.dsn)
    database.create()
    started, started_at = time.monotonic(), datetime.datetime.now(datetime.UTC)
    findings: list[StatementFinding] = []
    interrupted = False
    monitor = None
    try:
        [(server_version,)] = database.admin_sql("SHOW server_version", database=database.name)
        database.admin_sql(SETUP_SQL, database=database.name)
        monitor = ActivityMonitor(arguments.dsn, APPLICATION_NAME + "-monitor")
        gateway_context = running_gateway(limits.statement_seconds) if arguments.through_gateway else None
        with gateway_context or contextlib.nullcontext() as gateway:
            if gateway is not None:
                gateway.register(arguments.dsn, database.name)
            runner = StatementRunner(database, limits, monitor, gateway)
            try:
                for number, probe in enumerate(probes, 1):
                    findings.append(runner.audit(probe))
                    print(f"[{number}/{len(probes)} {time.monotonic() - started:4.0f} s] {statement_line(findings[-1])}",
                          file=sys.stderr, flush=True)
            except KeyboardInterrupt:
                print("interrupted: cleaning up", file=sys.stderr)
                interrupted = True
    finally:
        if monitor is not None:
            monitor.close()
        still_running = clean_up(database, arguments.drain_seconds)
    total = time.monotonic() - started
    print_statement_table(findings)
    overruns = sum(bool(finding.overran) for finding in findings)
    print(f"\n{len(findings)} statement probes, {overruns} overran (time past {limits.statement_seconds:g} s + "
          f"{GRACE_SECONDS} s, or memory grown by more than {MEMORY_LIMIT_MB:g} MB); {total:.0f} s in all.")
    if arguments.json:
        audit = {
            "kind": "statements",
            "started_at": started_at.isoformat(timespec="seconds"),
            "total_seconds": round(total, 1),
            "interrupted": interrupted,
            "server_version": server_version,
            "limit_seconds": limits.statement_seconds,
            "grace_seconds": GRACE_SECONDS,
            "max_seconds": limits.max_seconds,
            "memory_limit_mb": MEMORY_LIMIT_MB,
            "safe_memory_mb": SAFE_MEMORY_MB,
            "through_gateway": arguments.through_gateway,
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average": os.getloadavg()},
            "command": " ".join(["python -m scripts.interrupt_audit", *(sys.argv[1:] if argv is None else argv)]),
            "abandoned_backends_still_running": still_running,
        }
        document = {"audit": audit, "probes": [finding.as_json() for finding in findings]}
        arguments.json.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return 130 if interrupted else 0


def main(argv: Sequence[str] | None = None) -> int:
    stop_on_sigterm()
    arguments = parse_arguments(argv)
    limits = Limits(arguments.limit, arguments.max_seconds)
    if arguments.statements:
        return run_statement_audit(arguments, limits, argv)
    probes = select_probes(arguments.families, arguments.probes, arguments.quick)
    database = ScratchDatabase(arguments.dsn)
    database.create()
    started, started_at = time.monotonic(), datetime.datetime.now(datetime.UTC)
    findings: list[Finding] = []
    interrupted = False
    try:
        [(server_version,)] = database.admin_sql("SHOW server_version", database=database.name)
        for probe in probes:  # fail before measuring anything if a probe names a function the server lacks
            for signature in probe.functions:
                catalog_entry(database, signature)
        findings, interrupted = run_audit(probes, ProbeRunner(database, limits))
    finally:
        still_running = clean_up(database, arguments.drain_seconds)
    total = time.monotonic() - started
    print_table(findings)
    overruns = sum(finding.verdict is Verdict.OVERRUNS for finding in findings)
    print(f"\n{len(findings)} probes, {overruns} overran the {limits.statement_seconds:g} s limit; "
          f"{total:.0f} s in all." + (f" Abandoned backends still running: {still_running}." if still_running else ""))
    if arguments.json:
        audit = {
            "started_at": started_at.isoformat(timespec="seconds"),
            "total_seconds": round(total, 1),
            "interrupted": interrupted,
            "server_version": server_version,
            "limit_seconds": limits.statement_seconds,
            "grace_seconds": GRACE_SECONDS,
            "max_seconds": limits.max_seconds,
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average": os.getloadavg()},
            "command": " ".join(["python -m scripts.interrupt_audit", *(sys.argv[1:] if argv is None else argv)]),
            "abandoned_backends_still_running": still_running,
        }
        document = {"audit": audit, "probes": [finding_json(finding) for finding in findings]}
        arguments.json.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
