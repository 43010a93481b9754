"""How many times each select-list expression of a sub-select runs for one row of the statement.

PostgreSQL pulls simple sub-selects in FROM (``LATERAL`` or not) and CTEs it
inlines up into the level that reads them, and copies a pulled-up column's
expression into every place that reads the column: ``SELECT f(x), f(x), f(x)
FROM (SELECT costly(col) AS x FROM t) s`` evaluates ``costly`` three times
per row, in one stretch the cancel cannot cut. The red team's 85
``LATERAL (SELECT btrim(b.body, ...))`` sub-selects, each within the budget,
ran 7.4 s under a 1 s limit as one projection.

So the guard charges every level of a statement to one budget (``checks.py``:
an upper bound whether or not a sub-select is pulled up), and charges a FROM
sub-select's or an inlined CTE's select-list expression once for each
reference to its column, weighted by how often the reference itself runs
(``expression_repeats``). A CTE PostgreSQL materializes (``MATERIALIZED``,
recursive, or read more than once without ``NOT MATERIALIZED``) runs once: a
reference reads its stored rows.
"""

from __future__ import annotations

from collections import Counter

from drivers.postgres.guard.model.ir import Query, Var, subqueries, walk


def _pulled_up(query: Query, references: int) -> bool:
    """Whether PostgreSQL copies the CTE ``query`` into each of its ``references`` instead of storing it."""
    if query.materialized == "always":
        return False
    return query.materialized == "never" or references <= 1


def expression_repeats(root: Query) -> dict[int, int]:
    """``id`` of a select-list expression of a sub-select or CTE -> times it runs per row of the statement
    (at least 1; expressions not listed run once)."""
    levels = list(subqueries(root))
    cte_references: Counter[int] = Counter()
    for level in levels:
        for entry in level.entries:
            if entry.kind == "cte" and entry.query is not None:
                cte_references[id(entry.query)] += 1
    counted = {id(level) for level in levels if cte_references[id(level)] == 0 or _pulled_up(
        level, cte_references[id(level)])}
    repeats: dict[int, int] = {}
    for _ in range(len(levels) + 1):  # references flow from outer levels in; a chain settles within its depth
        reads: Counter[tuple[int, int]] = Counter()
        for level in levels:
            for top in level.expressions():
                weight = repeats.get(id(top), 1)
                for expr in walk(top):
                    if isinstance(expr, Var) and expr.entry.query is not None and expr.entry.kind in (
                            "subquery", "cte"):
                        reads[(id(expr.entry.query), expr.column)] += weight
        found: dict[int, int] = {}
        for level in levels:
            if id(level) not in counted or level is root:
                continue
            whole_row = reads[(id(level), 0)]
            for index in range(len(level.targets)):
                times = reads[(id(level), index + 1)] + whole_row
                if times > 1:
                    _repeat_column(level, index, times, found)
        if found == repeats:
            break
        repeats = found
    return repeats


def _repeat_column(level: Query, index: int, times: int, found: dict[int, int]) -> None:
    """Column ``index`` of ``level`` runs ``times`` per row; of a set operation, in each branch (a pulled-up
    ``UNION ALL`` copies every branch's expression)."""
    if index < len(level.targets):
        key = id(level.targets[index].expr)
        found[key] = max(found.get(key, 1), times)
    if level.setop is not None:
        for branch in level.setop[2:]:
            _repeat_column(branch, index, times, found)
