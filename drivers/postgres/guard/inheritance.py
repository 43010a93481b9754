"""GetData reads every table as ONLY: a granted table never returns the rows of its inheritance children.

PostgreSQL checks privileges on the relation a query names, not on the
inheritance children it reads along with it. With only ``pub.items`` granted,
``SELECT * FROM pub.items`` would also return the rows of ``sec.items_child``
(``CREATE TABLE sec.items_child () INHERITS (pub.items)``), even when neither
the token nor the database account may read schema ``sec``. So, once the guard
(``sql_guard.check_query``) has accepted a query, ``read_as_only`` rewrites its
text: ``ONLY`` goes before every relation written without it, and the legacy
``pub.items*`` spelling loses its ``*``. The rewritten text is parsed again and
checked (every reference now ONLY, the same relations, functions and attribute
names as before), so a mistake in the rewrite refuses the query instead of
running something else. A child granted too is read by naming it. The result
keeps the original query's fingerprint (the one the audit trail records), not
the rewritten text's.

Partitioned tables are the exception: ``ONLY`` on one returns no rows, and its
partitions hold the table's own rows, so granting a partitioned table grants
its partitions' rows (a query naming a partition directly still needs that
partition granted). Which tables are partitioned is read from the database's
catalog once per pool (``PARTITIONED_TABLES_SQL``); the pool is new after a
refresh. A table that became partitioned since is read as ONLY and answers no
rows, never more rows.

The rewrite is positional, never a regular expression over SQL: the parser
gives each reference's byte offset, and pglast's scanner (PostgreSQL's own
lexer) finds the tokens of the name and of a ``*`` after it. Unqualified
references are CTE names (the guard refuses any other) and are left alone.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
from pglast import parser

from drivers.postgres.guard.sql_guard import ParsedQuery, parse_query
from drivers.postgres.guard.structure.walk import RangeVarSite
from gateway.errors import QueryRejected, RefusalReason

PARTITIONED_TABLES_SQL = """
SELECT n.nspname, c.relname
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.relkind = 'p'
"""

_DOT = "ASCII_46"
_STAR = "ASCII_42"

Relation = tuple[str, str]


def read_as_only(parsed: ParsedQuery, partitioned: frozenset[Relation]) -> ParsedQuery:
    """``parsed`` with every relation but the ``partitioned`` tables read ONLY; ``parsed`` itself if nothing changes.

    Raises ``QueryRejected`` if the rewritten text does not check out.
    """
    if not inherited_sites(parsed.range_vars, partitioned):
        return parsed
    return _rewritten(parsed, partitioned & parsed.relations)


def inherited_sites(sites: Iterable[RangeVarSite], partitioned: frozenset[Relation]) -> list[RangeVarSite]:
    return [site for site in sites if site.inherited and (site.schema, site.name) not in partitioned]


@functools.lru_cache(maxsize=1024)
def _rewritten(parsed: ParsedQuery, partitioned: frozenset[Relation]) -> ParsedQuery:
    text = _with_only(parsed.sql, inherited_sites(parsed.range_vars, partitioned))
    try:
        again = parse_query(text)
    except QueryRejected:
        raise _check_failed() from None
    names_before = sorted((site.schema, site.name) for site in parsed.range_vars)
    names_after = sorted((site.schema, site.name) for site in again.range_vars)
    if (
        inherited_sites(again.range_vars, partitioned)
        or names_after != names_before
        or again.relations != parsed.relations
    ):
        raise _check_failed()
    # The audit names the query the client sent: the rewrite's own fingerprint differs (ONLY is part of it).
    # What the model found of the parameters holds for the rewritten text too (ONLY changes no expression).
    return attrs.evolve(again, fingerprint=parsed.fingerprint, parameter_types=parsed.parameter_types,
                        parameters_read=parsed.parameters_read)


@attrs.frozen
class OnlyEdit:
    """One change of the ONLY rewrite, by token: ``ONLY `` goes before a token, or a token (a ``*``) goes."""

    token: int
    """Index of the token in ``pglast.parser.scan``'s list for the text."""
    insert_only: bool
    """True: write ``ONLY `` before the token; False: remove the token."""


def only_edits(tokens: Sequence[Any], starts: Iterable[int]) -> list[OnlyEdit]:
    """The edits that make each reference starting at a character in ``starts`` read ONLY.

    Raises ``QueryRejected`` if a start is not where a token begins.
    """
    position_by_start = {token.start: position for position, token in enumerate(tokens)}
    edits: list[OnlyEdit] = []
    for start in starts:
        position = position_by_start.get(start)
        if position is None:
            raise _check_failed()
        edits.append(OnlyEdit(position, insert_only=True))
        while position + 2 < len(tokens) and tokens[position + 1].name == _DOT:
            position += 2  # schema . name: the reference ends at its last name part
        if position + 1 < len(tokens) and tokens[position + 1].name == _STAR:
            edits.append(OnlyEdit(position + 1, insert_only=False))
    return edits


def apply_only_edits(sql: str, tokens: Sequence[Any], edits: Iterable[OnlyEdit]) -> str:
    """``sql`` (scanned into ``tokens``) with ``edits`` made."""
    changes = sorted(
        ((tokens[edit.token].start, tokens[edit.token].start, "ONLY ") if edit.insert_only
         else (tokens[edit.token].start, tokens[edit.token].end + 1, "") for edit in edits),
        reverse=True,
    )  # fmt: skip
    for first, after, replacement in changes:
        sql = sql[:first] + replacement + sql[after:]
    return sql


def _with_only(sql: str, sites: list[RangeVarSite]) -> str:
    """``sql`` with ``ONLY`` before each site and the ``*`` after its name removed."""
    encoded = sql.encode("utf-8")
    try:
        tokens = parser.scan(sql)
    except parser.ParseError:
        raise _check_failed() from None
    starts = []
    for site in sites:
        if not 0 <= site.location < len(encoded):
            raise _check_failed()
        try:
            starts.append(len(encoded[: site.location].decode("utf-8")))  # the scanner counts characters
        except UnicodeDecodeError:
            raise _check_failed() from None
    return apply_only_edits(sql, tokens, only_edits(tokens, starts))


def _check_failed() -> QueryRejected:
    return QueryRejected(
        "the query could not be prepared safely (an internal check of its rewrite to ONLY failed); "
        "please report the query to the gateway's operator",
        reason=RefusalReason.OTHER,
    )
