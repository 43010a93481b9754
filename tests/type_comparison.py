"""The server's answers against a model's, statement by statement; the disagreements listed as safe in
``type_disagreements.toml``; the report, grouped by construct family.

A model is any ``Callable[[str], Answer]``. ``guard_model`` wraps the guard's ``analyze``: its
``AnalysisError`` is an error answer, its ``Unsupported`` an ``unsupported`` one (a disagreement: a
construct the model does not cover is a gap), any other exception a ``crash``. Errors agree with errors
whatever their messages: the model must know *that* PostgreSQL refuses a statement, not say it in
PostgreSQL's words.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from type_generation import Generated
from type_oracle import Answer

Model = Callable[[str], Answer]
TypeNamer = Callable[[int, int], str]

DISAGREEMENTS_FILE = Path(__file__).with_name("type_disagreements.toml")
DIFFERENCES = ("unsupported", "crash", "missed_error", "false_error", "column_count", "type", "typmod", "name")
"""What differs, worst first: the model cannot say; the model broke; the server refuses what the model
types; the model refuses what the server types; the number of columns; a column's type, typmod, name."""


def difference(server: Answer, model: Answer) -> str | None:
    """The first thing in which the model's answer differs from the server's (one of DIFFERENCES), or None."""
    if model.kind in ("unsupported", "crash"):
        return model.kind
    if server.kind == "error" or model.kind == "error":
        if server.kind == model.kind:
            return None
        return "missed_error" if server.kind == "error" else "false_error"
    if len(server.columns) != len(model.columns):
        return "column_count"
    for attribute in ("type", "typmod", "name"):
        for ours, theirs in zip(server.columns, model.columns, strict=True):
            if getattr(ours, attribute) != getattr(theirs, attribute):
                return attribute
    return None


@dataclass(frozen=True)
class Waiver:
    """One entry of type_disagreements.toml: which disagreements it covers and why they are safe."""

    reason: str
    id: str = ""
    pattern: str = ""
    family: str = ""
    difference: str = ""
    server_error: str = ""
    """A regular expression the server's "SQLSTATE message" must match (``^22``: a value PostgreSQL's input
    function rejects while parsing)."""
    model_says: str = ""
    """A regular expression the model's message must match (an ``unsupported`` construct, say)."""

    def covers(self, statement: Generated, what: str, server: Answer | None = None,
               model: Answer | None = None) -> bool:
        if self.id and self.id != statement.id:
            return False
        if self.pattern and not re.search(self.pattern, statement.sql):
            return False
        if self.server_error and (server is None or server.kind != "error"
                                  or not re.search(self.server_error, f"{server.sqlstate} {server.message}")):
            return False
        if self.model_says and (model is None or not re.search(self.model_says, model.message)):
            return False
        if self.family and self.family != statement.family:
            return False
        return not self.difference or self.difference == what


def load_waivers(path: Path = DISAGREEMENTS_FILE) -> list[Waiver]:
    """The ``[[disagreement]]`` entries of the file; each needs a reason and at least one selector."""
    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    waivers = []
    for entry in data.get("disagreement", []):
        unknown = set(entry) - {"reason", "id", "pattern", "family", "difference", "server_error", "model_says"}
        if unknown or not entry.get("reason") or not (
                {"id", "pattern", "family", "server_error", "model_says"} & set(entry)):
            raise ValueError(f"{path.name}: each entry needs a reason and an id, pattern or family: {entry}")
        if entry.get("difference", "") not in ("", *DIFFERENCES):
            raise ValueError(f"{path.name}: difference must be one of {DIFFERENCES}: {entry}")
        waivers.append(Waiver(**entry))
    return waivers


@dataclass(frozen=True)
class Disagreement:
    statement: Generated
    server: Answer
    model: Answer
    what: str


@dataclass
class Comparison:
    """The outcome over all statements."""

    families: dict[str, Counter[str]] = field(default_factory=dict)
    disagreements: list[Disagreement] = field(default_factory=list)
    waived: list[tuple[Disagreement, Waiver]] = field(default_factory=list)
    unused_waivers: list[Waiver] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.disagreements


def compare(
    statements: Sequence[Generated], server: Sequence[Answer], model: Sequence[Answer], waivers: Iterable[Waiver] = ()
) -> Comparison:
    """Every statement's two answers; a disagreement some waiver covers is set aside with that waiver."""
    waivers = list(waivers)
    used: set[int] = set()
    comparison = Comparison()
    for statement, ours, theirs in zip(statements, server, model, strict=True):
        counts = comparison.families.setdefault(statement.family, Counter())
        counts["statements"] += 1
        counts[f"server_{ours.kind}"] += 1
        what = difference(ours, theirs)
        if what is None:
            counts["agree"] += 1
            continue
        found = Disagreement(statement, ours, theirs, what)
        waiver = next((index for index, waiver in enumerate(waivers)
                       if waiver.covers(statement, what, ours, theirs)), None)
        if waiver is None:
            counts["disagree"] += 1
            comparison.disagreements.append(found)
        else:
            counts["waived"] += 1
            used.add(waiver)
            comparison.waived.append((found, waivers[waiver]))
    comparison.unused_waivers = [waiver for index, waiver in enumerate(waivers) if index not in used]
    return comparison


def show(answer: Answer, type_name: TypeNamer | None = None) -> str:
    """One answer on one line: ``('name' type, ...)``, ``ERROR [sqlstate] message``, ``UNSUPPORTED ...``."""
    if answer.kind != "typed":
        state = f" [{answer.sqlstate}]" if answer.sqlstate else ""
        return f"{answer.kind.upper()}{state} {answer.message}"
    namer = type_name or (lambda oid, typmod: f"{oid}" + (f" (typmod {typmod})" if typmod != -1 else ""))
    return "(" + ", ".join(f"{column.name!r} {namer(column.type, column.typmod)}" for column in answer.columns) + ")"


def report(comparison: Comparison, type_name: TypeNamer | None = None, limit: int = 30) -> str:
    """The counts per family, what differs per family, then up to ``limit`` disagreements: taken in turn from
    each (family, difference) group so that every kind of gap shows, and listed by family."""
    lines = [f"{'family':<24}{'statements':>11}{'typed':>7}{'error':>7}{'agree':>7}{'waived':>8}{'disagree':>10}"]
    for family, counts in comparison.families.items():
        lines.append(
            f"{family:<24}{counts['statements']:>11}{counts['server_typed']:>7}{counts['server_error']:>7}"
            f"{counts['agree']:>7}{counts['waived']:>8}{counts['disagree']:>10}"
        )
    groups: dict[tuple[str, str], list[Disagreement]] = {}
    for found in comparison.disagreements:
        groups.setdefault((found.statement.family, found.what), []).append(found)
    kinds = Counter(found.what for found in comparison.disagreements)
    lines.append(f"disagreements: {len(comparison.disagreements)}" + (f" {dict(kinds)}" if kinds else ""))
    families: dict[str, Counter[str]] = {}
    for (family, what), group in groups.items():
        families.setdefault(family, Counter())[what] = len(group)
    lines.extend(f"  {family}: {dict(counts)}" for family, counts in families.items())
    order = sorted(groups, key=lambda key: (list(comparison.families).index(key[0]), DIFFERENCES.index(key[1])))
    chosen: list[Disagreement] = []
    for turn in range(limit):
        chosen.extend(groups[key][turn] for key in order if turn < len(groups[key]))
        if len(chosen) >= limit:
            break
    chosen = sorted(chosen[:limit], key=lambda found: order.index((found.statement.family, found.what)))
    family = ""
    for found in chosen:
        if found.statement.family != family:
            family = found.statement.family
            lines.append(f"\n== {family}")
        lines.append(f"[{found.what}] {found.statement.id}\n  {found.statement.sql}")
        lines.append(f"  server: {show(found.server, type_name)}\n  model:  {show(found.model, type_name)}")
    if len(comparison.disagreements) > len(chosen):
        lines.append(f"\n... and {len(comparison.disagreements) - len(chosen)} more (type_harness.py --limit N)")
    for waiver in comparison.unused_waivers:
        lines.append(f"listed in {DISAGREEMENTS_FILE.name} but no longer met: {waiver}")
    return "\n".join(lines)


def guard_model(catalog_row: Sequence[Any]) -> Model:
    """The guard's type model over the catalog ``CATALOG_SQL`` returned (imported here: it may not exist yet)."""
    from drivers.postgres.guard.model.analysis import analyze
    from drivers.postgres.guard.model.catalog import Catalog
    from drivers.postgres.guard.errors import AnalysisError, Unsupported

    catalog = Catalog.from_row(catalog_row)

    def model(sql: str) -> Answer:
        try:
            analysis = analyze(sql, catalog)
        except AnalysisError as error:
            return Answer.error(error.message)
        except Unsupported as error:
            return Answer("unsupported", message=str(getattr(error, "message", error)))
        except Exception as error:  # noqa: BLE001 - a model that breaks is a finding, not a harness failure
            return Answer("crash", message=f"{type(error).__name__}: {error}")
        return Answer.typed((column.name, column.type, column.typmod) for column in analysis.columns)

    return model


def answers_model(answers: Mapping[str, Answer]) -> Model:
    """A model that knows the answer to every statement beforehand (the server's own, fed back)."""
    return lambda sql: answers[sql]
