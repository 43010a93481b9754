"""How scripts/interrupt_audit.py measures one probe: doubling sizes, then a closer look at an overrun.

The doubling ends at the first overrun (an answer later than limit + 0.5 s), at
the second cancel in a row, at an error (the first size failing means the probe
is wrong; a later one is a size limit of PostgreSQL), or at the probe's largest
size. One cancel is not enough: it may have come as an uninterruptible call
happened to end just past the limit. At twice the size such a call runs at least
twice as long, so a second cancel within the grace shows the call heeds it.

An overrun is then examined three ways:

- confirmed, unless it was already clear (1 s or more past the grace), by
  running the same size again, which must overrun too;
- its inputs are built alone, without the probed call (``SELECT
  pg_column_size(ROW(<the call's arguments>))``), which also measures their
  size in bytes: when that overruns too, the time belongs to building the
  inputs (a cast such as ``::jsonb``), which has a probe of its own;
- each grown argument is grown alone, the others kept small: the ones that
  overrun alone drive the cost; when none does, the cost is in their product
  (each alone is cheap) or in their sum (each alone takes a good part).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import attrs
from pglast import ast, enums, parse_sql
from pglast.stream import RawStream

from scripts.interrupt_probes import Probe
from scripts.interrupt_runner import CatalogEntry, Outcome, Run, ScratchDatabase, catalog_entry

GRACE_SECONDS = 0.5
"""How far past the limit an answer may come and still count as stopped (scheduling, the cancel's round trip)."""
CLEAR_OVERRUN_SECONDS = GRACE_SECONDS + 1.0
"""An overrun this far past the limit needs no confirming run."""
CANCELS_TO_STOP = 2
"""Doubling ends after this many cancels in a row (each within the grace)."""
PRODUCT_SHARE = 0.25
"""Arguments grown alone that each take less than this share of the joint run cost in their product."""


class Verdict(enum.Enum):
    """What the audit concludes about one probe."""

    STOPS = "stops"
    OVERRUNS = "overruns"
    ERROR = "error"


class CostShape(enum.Enum):
    """How an overrun's cost arguments combine."""

    ALONE = "alone"
    """Each cost argument overruns when grown on its own (or it is the only one grown)."""
    PRODUCT = "product"
    """Only growing them together overruns, and each alone is cheap: the cost is in the product of their sizes."""
    SUM = "sum"
    """Only growing them together overruns, but each alone takes a good part of the time: the costs add up."""


@attrs.frozen
class Limits:
    """The time bounds of one audit."""

    statement_seconds: float
    """The statement_timeout every probe runs under."""
    max_seconds: float
    """How long the client waits for one statement before abandoning it."""

    def overran(self, run: Run) -> bool:
        return run.outcome is Outcome.ABANDONED or run.seconds > self.statement_seconds + GRACE_SECONDS

    def clear(self, run: Run) -> bool:
        return run.outcome is Outcome.ABANDONED or run.seconds >= self.statement_seconds + CLEAR_OVERRUN_SECONDS


@attrs.frozen
class SizedRun:
    """A run of a probe with its grown arguments at ``size``."""

    size: int
    run: Run
    grown_alone: int | None = None
    """In a variant: the one argument grown; the others were at the probe's ``small`` size."""

    def as_json(self) -> dict[str, Any]:
        fields = {"size": self.size, **self.run.as_json()}
        return fields if self.grown_alone is None else {"argument": self.grown_alone, **fields}


@attrs.frozen
class Finding:
    """Everything measured about one probe."""

    probe: Probe
    limits: Limits
    """The limits it was measured under."""
    catalog: tuple[CatalogEntry, ...]
    """What pg_catalog says about the probe's functions."""
    runs: tuple[SizedRun, ...]
    """The doubling runs, smallest first, then the confirming run (at the overrunning size) if there was one."""
    verdict: Verdict
    deciding: SizedRun
    """The run the verdict rests on: the first overrun, else the last doubling run."""
    confirmed: bool = False
    """An overrun that was clear at once or overran again when repeated."""
    inputs: SizedRun | None = None
    """An overrun's inputs built alone at the overrunning size (None when not derivable); its value is their bytes."""
    variants: tuple[SizedRun, ...] = ()
    """An overrun's grown arguments, each grown alone at the overrunning size."""
    cost_arguments: tuple[int, ...] = ()
    """The argument positions that drive the cost (all grown ones unless variants singled some out)."""
    cost_shape: CostShape | None = None
    """How the cost arguments combine (for an overrun)."""
    inputs_overran: bool | None = None
    """Whether the inputs built alone overran too (then building them, not the call, may hold the cancel)."""
    inputs_bytes: int | None = None
    """The size of the overrun's inputs: ``pg_column_size`` of the row of the call's arguments."""


    @property
    def growth_exponent(self) -> float | None:
        """A rough slope of log(seconds) over log(size): the last three sizes whose runs took 0.1 s or more whole.

        A run ran whole when it completed or overran; one the limit cancelled in time says
        when the cancel came, not how long the call takes. Other work on the machine only
        adds time, so each size counts with its fastest run.
        """
        fastest: dict[int, float] = {}
        for sized in self.runs:
            if sized.run.outcome is Outcome.COMPLETED or self.limits.overran(sized.run):
                fastest[sized.size] = min(sized.run.seconds, fastest.get(sized.size, math.inf))
        points = [(math.log(size), math.log(seconds))
                  for size, seconds in sorted(fastest.items()) if seconds >= 0.1][-3:]
        if len(points) < 2:
            return None
        mean_x = sum(x for x, _ in points) / len(points)
        mean_y = sum(y for _, y in points) / len(points)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
        return round(slope, 2)



def statement(probe: Probe, sizes: dict[int, int]) -> str:
    return f"SELECT ({probe.expression(sizes)}) IS NULL"


def inputs_statement(probe: Probe, sizes: dict[int, int]) -> str | None:
    """``SELECT pg_column_size(ROW(<the probed call's arguments>))``: the inputs alone (None if there is no call)."""
    [raw] = parse_sql(statement(probe, sizes))
    assert isinstance(raw.stmt, ast.SelectStmt) and raw.stmt.targetList
    call = raw.stmt.targetList[0].val.arg
    arguments: Sequence[Any]
    if isinstance(call, ast.FuncCall | ast.XmlExpr):
        arguments = call.args or ()
    elif isinstance(call, ast.A_Expr):
        arguments = [operand for operand in (call.lexpr, call.rexpr) if operand is not None]
    elif isinstance(call, ast.TypeCast):
        arguments = [call.arg]
    else:
        return None
    row = ast.RowExpr(args=tuple(arguments), row_format=enums.CoercionForm.COERCE_EXPLICIT_CALL)
    size = ast.FuncCall(funcname=(ast.String(sval="pg_column_size"),), args=(row,))
    return str(RawStream()(ast.SelectStmt(targetList=(ast.ResTarget(val=size),))))


class ProbeRunner:
    """Measures probes in one scratch database under one set of limits."""

    def __init__(self, database: ScratchDatabase, limits: Limits) -> None:
        self.database = database
        self.limits = limits

    def time(self, sql: str) -> Run:
        return self.database.timed(sql, self.limits.statement_seconds, self.limits.max_seconds)

    def at(self, probe: Probe, size: int) -> SizedRun:
        return SizedRun(size, self.time(statement(probe, dict.fromkeys(probe.varied_arguments, size))))

    def grow(self, probe: Probe) -> tuple[list[SizedRun], Verdict]:
        """Run ``probe`` at doubling sizes until it overruns, stops for sure, fails, or reaches its largest size."""
        runs: list[SizedRun] = []
        size, cancels = probe.start, 0
        while True:
            runs.append(self.at(probe, size))
            run = runs[-1].run
            if self.limits.overran(run):
                return runs, Verdict.OVERRUNS
            if run.outcome is Outcome.ERROR:
                return runs, Verdict.ERROR if len(runs) == 1 else Verdict.STOPS
            cancels = cancels + 1 if run.outcome is Outcome.CANCELLED else 0
            if cancels == CANCELS_TO_STOP:
                return runs, Verdict.STOPS
            if size >= probe.max_size:
                return runs, Verdict.STOPS
            size = min(size * 2, probe.max_size)

    def grown_alone(self, probe: Probe, deciding: SizedRun) -> tuple[tuple[SizedRun, ...], tuple[int, ...], CostShape]:
        """Grow each argument alone to the overrunning size: the variants, the cost arguments and how they combine."""
        varied = probe.varied_arguments
        if len(varied) == 1:
            return (), varied, CostShape.ALONE
        variants = []
        for argument in varied:
            sizes = {other: deciding.size if other == argument else probe.small for other in varied}
            variants.append(SizedRun(deciding.size, self.time(statement(probe, sizes)), grown_alone=argument))
        alone = tuple(argument for argument, variant in zip(varied, variants) if self.limits.overran(variant.run))
        if alone:
            return tuple(variants), alone, CostShape.ALONE
        cheap = all(variant.run.seconds < deciding.run.seconds * PRODUCT_SHARE for variant in variants)
        return tuple(variants), varied, CostShape.PRODUCT if cheap else CostShape.SUM

    def inputs_of(self, probe: Probe, size: int) -> tuple[SizedRun | None, int | None]:
        """The inputs built alone under the limit, and their bytes (measured without the limit if it cut them off)."""
        sql = inputs_statement(probe, dict.fromkeys(probe.varied_arguments, size))
        if sql is None:
            return None, None
        inputs = SizedRun(size, self.time(sql))
        measured = inputs.run
        if measured.outcome is not Outcome.COMPLETED:
            measured = self.database.timed(sql, self.limits.max_seconds, self.limits.max_seconds)
        return inputs, measured.value if measured.outcome is Outcome.COMPLETED else None

    def audit(self, probe: Probe) -> Finding:
        catalog = tuple(catalog_entry(self.database, signature) for signature in probe.functions)
        runs, verdict = self.grow(probe)
        deciding = runs[-1]
        if verdict is not Verdict.OVERRUNS:
            return Finding(probe, self.limits, catalog, tuple(runs), verdict, deciding,
                           cost_arguments=probe.varied_arguments)
        confirmed = self.limits.clear(deciding.run)
        if not confirmed:
            runs.append(self.at(probe, deciding.size))
            confirmed = self.limits.overran(runs[-1].run)
        inputs, inputs_bytes = self.inputs_of(probe, deciding.size)
        variants, cost_arguments, cost_shape = self.grown_alone(probe, deciding)
        inputs_overran = None if inputs is None else self.limits.overran(inputs.run)
        return Finding(probe, self.limits, catalog, tuple(runs), verdict, deciding, confirmed, inputs, variants,
                       cost_arguments, cost_shape, inputs_overran, inputs_bytes)
