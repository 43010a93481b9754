"""The guard for a token whose grants narrow some relations: checked as the token sees them, rewritten, checked again.

1. The query is checked against the token's view of the catalog (``catalog_view.py``), the grant check
   first: a hidden column is as unknown as one that does not exist, ``*`` means the granted columns.
2. If it reads a narrowed relation, every reference is rewritten through its fence (``rewrite.py``).
3. The rewritten text goes through the whole guard again, against the full catalog (the filter may read
   columns the token cannot), and ``rewrite.verify_fenced`` checks on its analysis that no narrowed
   relation is read any other way.

The answer is the rewritten statement, with the fingerprint of the text the client sent (the audit names
that one). Steps 2 and 3 are remembered per (text, policy, narrowing); the grant check runs every time.
"""

from __future__ import annotations

import functools

import attrs

from drivers.postgres.guard.grants.catalog_view import narrowed_policy
from drivers.postgres.guard.grants.rewrite import TextEdit, apply_edits, narrowing_edits, verify_fenced
from drivers.postgres.guard.grants.spans import significant_tokens
from drivers.postgres.guard.grants.table_grant import Narrowing, TableGrant, narrowing_key
from drivers.postgres.guard.model.analysis import Analyzer, parse_select
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.sql_guard import ParsedQuery, check_query
from gateway.errors import QueryFailed, QueryRejected, RefusalReason

Relation = tuple[str, str]


@attrs.frozen
class NarrowedQuery:
    """A checked query of a token with narrowed grants, and how its text was rewritten."""

    parsed: ParsedQuery
    """The rewritten statement as the guard checked it (the original's when nothing was narrowed)."""
    edits: tuple[TextEdit, ...]
    """The rewrite, by token of the original text without comments (empty: nothing narrowed)."""
    seen: ParsedQuery
    """The original text as the token's view checked it: the numeric constants whose values the decision
    read are found there (the rewrite only copies the original's conditions)."""


def check_narrowed(sql: str, granted: frozenset[Relation], policy: GuardPolicy, narrowing: Narrowing,
                   parameters: tuple[str | None, ...] = ()) -> NarrowedQuery:
    """The guard for a token with ``narrowing``, with the values of ``$1``..``$n`` where the query has them;
    raises ``QueryRejected``/``QueryFailed`` as ``check_query`` does."""
    seen = narrowed_policy(policy, narrowing)
    parsed = check_query(sql, granted, seen, parameters)
    key = narrowing_key({r: g for r, g in narrowing.items() if r in parsed.relations})
    if not key:
        return NarrowedQuery(parsed, (), parsed)
    # The rewrite and its verification read the query's shape, not its values: NULLs in their place type the
    # $n as the values do (PostgreSQL types a parameter by where it stands), and keep the values, a MiB each
    # perhaps, out of the memoised keys.
    placeholders = (None,) * len(parameters)
    rewritten, edits = _rewrite(sql, seen, key, placeholders)
    try:
        final = check_query(rewritten, granted, policy, parameters)
    except (QueryRejected, QueryFailed) as refused:
        # The rewritten text holds the administrator's filters, which the token must not see: a refusal of it
        # (a cost naming the filter's call, a position counted in the longer text) is told without it.
        reason = refused.reason if isinstance(refused, QueryRejected) else RefusalReason.OTHER
        raise QueryRejected(
            "the query is refused as it reads through this token's narrowed grants (their row filters make it "
            "larger or costlier than the guard's limits allow, or a narrowed table is written in a way that cannot "
            "be read through its grant): read fewer narrowed tables at once, or write them as schema.table "
            "[AS alias]", reason=reason,
        ) from None
    _verify(rewritten, policy, key, placeholders)
    return NarrowedQuery(attrs.evolve(final, fingerprint=parsed.fingerprint), edits, parsed)


@functools.lru_cache(maxsize=1024)
def _rewrite(sql: str, seen: GuardPolicy, key: tuple[tuple[Relation, TableGrant], ...],
             parameters: tuple[str | None, ...] = ()) -> tuple[str, tuple[TextEdit, ...]]:
    # The values only type the query's $n as check_query did; the rewrite copies the text, never a value.
    query = Analyzer(seen.catalog, seen.coercions, parameters).analyze_statement(parse_select(sql))
    tokens = significant_tokens(sql)
    edits = narrowing_edits(sql, tokens, query, dict(key))
    return apply_edits(sql, tokens, edits), edits


@functools.lru_cache(maxsize=1024)
def _verify(rewritten: str, policy: GuardPolicy, key: tuple[tuple[Relation, TableGrant], ...],
            parameters: tuple[str | None, ...] = ()) -> None:
    analyzer = Analyzer(policy.catalog, policy.coercions, parameters)
    verify_fenced(analyzer.analyze_statement(parse_select(rewritten)), dict(key))
