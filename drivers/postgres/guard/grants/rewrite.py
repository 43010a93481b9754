"""Every reference to a narrowed relation read through a fenced sub-select of its granted columns and rows.

``[ONLY] s.t [AS x [(a, b)]]`` becomes, wherever it is written (FROM, joins, sub-selects, CTEs, set
operations)::

    (SELECT "id", "name" FROM [ONLY] s.t [AS x] WHERE (<copied condition>) AND ... OFFSET 0) AS x [(a, b)]

or, with a row filter::

    (SELECT COALESCE("id") AS "id", ... FROM [ONLY] s.t [AS x] WHERE true AND (<copied condition>) AND ...
        AND (<row filter>) OFFSET 0) AS x [(a, b)]

- only the granted columns leave the sub-select, so ``*``, ``t.*``, the whole row ``t`` and
  ``row_to_json(t)`` see those; system columns are not there at all;
- ``OFFSET 0`` is a fence: the planner neither pulls the sub-select up nor pushes the query's conditions
  into it, so every condition the user wrote runs on rows the filter already passed;
- the WHERE conditions that are leakproof and read that relation alone (``leakproof.py``) are copied inside
  as well, where its indexes serve them (``id = 5`` stays an index scan); they stay outside too. With a
  row filter, only those the planner estimates without the table's statistics are copied (``column =
  value`` on a column that alone keys a unique index, ``leakproof.estimated_blind``): the statistics
  describe the hidden rows too, and an estimate from them picks a plan that tells about them;
- with a row filter, each column leaves the sub-select as ``COALESCE(c)``: the planner looks through a
  sub-select's plain columns to the table's statistics (most common values, histogram), which describe the
  hidden rows too, and runs the query's operators on them to estimate; a plan chosen from them (a join
  order, hence the order of the rows) could tell a hidden value. PostgreSQL withholds them likewise behind a
  security-barrier view. Through ``COALESCE`` the estimates are the defaults, whatever the hidden rows hold.

Edits are by token range of the original text (``spans.py``), so a decision reused for other numeric
constants (``cache.py``) makes the same sub-selects with the new constants. ``verify_fenced`` checks the
outcome on the analysed rewritten query: a narrowed relation is read nowhere but in such a sub-select,
with nothing but the filter and leakproof conditions inside.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from drivers.postgres.guard.grants.leakproof import estimated_blind, inner_relations, leakproof, where_conjuncts
from drivers.postgres.guard.grants.spans import character_offsets, conjunct_spans, relation_span
from drivers.postgres.guard.grants.table_grant import Narrowing
from drivers.postgres.guard.model.ir import Cast, Coalesce, Const, Expr, Query, RangeEntry, Var, subqueries
from gateway.errors import QueryRejected, RefusalReason


@attrs.frozen
class TokenCopy:
    """The text of the tokens ``first``..``last`` of the query being rewritten."""

    first: int
    last: int


@attrs.frozen
class TextEdit:
    """Tokens ``first``..``last`` replaced by ``pieces`` (text, or copies of other tokens)."""

    first: int
    last: int
    pieces: tuple[str | TokenCopy, ...]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _cannot_rewrite() -> QueryRejected:
    return QueryRejected("a narrowed table is written in a way the gateway cannot read it through its grant; write "
                         "it as schema.table [AS alias], without comments inside", reason=RefusalReason.CONSTRUCT)


def narrowing_edits(sql: str, tokens: Sequence[Any], root: Query, narrowing: Narrowing) -> tuple[TextEdit, ...]:
    """The edits that read every narrowed relation of the analysed ``root`` through its fence."""
    offsets = character_offsets(sql)
    copies: dict[int, list[tuple[int, int]]] = {}
    blind: dict[int, list[tuple[int, int]]] = {}
    edits: list[TextEdit] = []
    for level in subqueries(root):
        conjuncts = where_conjuncts(level)
        spans = conjunct_spans(sql, tokens, level.where_raw) if level.where_raw is not None else None
        if spans is not None and len(spans) == len(conjuncts):
            for entry in inner_relations(level):
                copies[id(entry)] = [span for span, condition in zip(spans, conjuncts) if leakproof(condition, entry)]
                blind[id(entry)] = [span for span, condition in zip(spans, conjuncts)
                                    if estimated_blind(condition, entry)]
        for entry in level.entries:
            relation = entry.relation
            if entry.kind != "relation" or relation is None or not relation.narrowed:
                continue
            grant = narrowing[(relation.schema, relation.name)]
            if not 0 <= entry.location < len(offsets):
                raise _cannot_rewrite()
            span = relation_span(tokens, offsets[entry.location], entry.inherited, entry.has_alias)
            if span is None:
                raise _cannot_rewrite()
            if grant.row_filter:
                # COALESCE(c) is c, but not a plain column: the planner then keeps the table's statistics,
                # drawn from the rows the filter removes too, from the query's own conditions (as PostgreSQL
                # does for a security-barrier view), so a plan cannot tell about hidden rows' values.
                columns = ", ".join(f"COALESCE({_quoted(c.name)}) AS {_quoted(c.name)}" for c in relation.columns)
            else:
                columns = "*" if grant.columns is None else ", ".join(_quoted(c.name) for c in relation.columns)
            pieces: list[str | TokenCopy] = [f"(SELECT {columns} FROM ", "" if entry.inherited else "ONLY ",
                                             TokenCopy(*span.name)]
            if span.alias is not None:
                pieces += [" AS ", TokenCopy(span.alias, span.alias)]
            # The filter last: the parser flattens a left AND operand into the list, never a right one.
            # Copied conditions name the alias's columns; with a column list they would not resolve inside.
            copied = copies.get(id(entry), []) if span.columns is None else []
            if grant.row_filter:  # estimated from statistics that describe the hidden rows: value-blind ones only
                copied = [span for span in copied if span in blind.get(id(entry), ())]
            conditions: list[str | TokenCopy] = [TokenCopy(first, last) for first, last in copied]
            if grant.row_filter:
                # A leading true keeps the filter one AND term whatever it holds: with nothing before it, the
                # parser would make the filter's own AND terms the WHERE's (verify_fenced counts on the last).
                conditions = ["true", *conditions, grant.row_filter]
            for number, condition in enumerate(conditions):
                pieces += [" WHERE (" if number == 0 else " AND (", condition, ")"]
            pieces += [" OFFSET 0) AS ", TokenCopy(span.alias, span.alias) if span.alias is not None
                       else _quoted(relation.name)]
            if span.columns is not None:
                pieces += [" ", TokenCopy(*span.columns)]
            first = span.first
            if first > 0 and tokens[first - 1].name == "TABLE":  # TABLE s.t names a relation: SELECT * FROM it
                first, pieces = first - 1, ["SELECT * FROM ", *pieces]
            edits.append(TextEdit(first, span.last, tuple(pieces)))
    return tuple(sorted(edits, key=lambda edit: edit.first))


def apply_edits(sql: str, tokens: Sequence[Any], edits: Sequence[TextEdit]) -> str:
    """``sql`` (scanned into ``tokens``, comments left out) with ``edits`` made."""
    out: list[str] = []
    copied = 0
    for edit in edits:
        out.append(sql[copied : tokens[edit.first].start])
        for piece in edit.pieces:
            out.append(piece if isinstance(piece, str) else sql[tokens[piece.first].start : tokens[piece.last].end + 1])
        copied = tokens[edit.last].end + 1
    out.append(sql[copied:])
    return "".join(out)


def verify_fenced(root: Query, narrowing: Narrowing) -> None:
    """Raise ``QueryRejected`` unless every narrowed relation of the analysed rewritten ``root`` is read only as
    the one FROM item of a fenced sub-select of its granted columns, with the filter and leakproof conditions."""
    fences = {id(entry.query) for level in subqueries(root) for entry in level.entries
              if entry.kind == "subquery" and entry.query is not None}
    for level in subqueries(root):
        for entry in level.entries:
            relation = entry.relation
            if entry.kind == "relation" and relation is not None and (relation.schema, relation.name) in narrowing:
                if id(level) not in fences or not _fenced(level, entry, narrowing):
                    raise QueryRejected("an internal check of the narrowed grant's rewrite failed; the query was not "
                                        "run", reason=RefusalReason.OTHER)


def _fenced(level: Query, entry: RangeEntry, narrowing: Narrowing) -> bool:
    relation = entry.relation
    assert relation is not None
    grant = narrowing[(relation.schema, relation.name)]
    offset = level.offset
    while isinstance(offset, Cast):
        offset = offset.arg
    if level.from_items != [entry] or level.setop is not None or level.ctes or level.group or level.having \
            or level.has_aggregates or level.has_window_functions or level.sort or level.distinct \
            or level.distinct_on or level.limit is not None or not (isinstance(offset, Const) and offset.text == "0"):
        return False
    wanted = [c.name for c in relation.columns if grant.columns is None or c.name in grant.columns]
    targets = [t for t in level.targets if not t.junk]
    if [t.name for t in targets] != wanted or not all(_column_of(t.expr, entry, grant.row_filter is not None)
                                                      for t in targets):
        return False
    conditions = where_conjuncts(level)
    if not grant.row_filter:
        return all(leakproof(c, entry) for c in conditions)
    if len(conditions) < 2 or not (isinstance(conditions[0], Const) and conditions[0].text in ("t", "true")):
        return False
    return all(leakproof(c, entry) and estimated_blind(c, entry) for c in conditions[1:-1])


def _column_of(expr: Expr, entry: RangeEntry, filtered: bool) -> bool:
    """``expr`` is a column of ``entry``: plain, or (rows filtered) inside a one-argument COALESCE."""
    if filtered:
        if not (isinstance(expr, Coalesce) and len(expr.args) == 1):
            return False
        expr = expr.args[0]
    return isinstance(expr, Var) and expr.entry is entry and expr.column > 0
