"""Layer 1 of GetData's defence: refuse any SQL but one plain read-only SELECT over granted tables.

``parse_query`` parses the text with pglast (PostgreSQL's own parser) and
walks the *whole* raw parse tree (``select_walker.py``). Only node kinds known to be harmless inside
a SELECT pass (an allowlist); everything else is refused with a sentence that
names it. On the way it collects every relation read and every function
called, and records every type named, call, cast and operator application.

``check_query`` then holds that record against the database's
``QueryPolicy`` (``query_checks.py``: types, functions, operators, the
arguments of functions PostgreSQL cannot interrupt) and the token's grants.
The walk and the catalog checks are cached by (query text, policy), so a
repeated query costs a cache lookup and the grant check's set difference.

What the walk relies on from the session (set by ``pool.py``):
``search_path=pg_catalog`` (unqualified functions, operators, types and
collations then resolve to built-ins only) and ``standard_conforming_strings=on``
(the server must split string literals exactly as pglast did).
"""

from __future__ import annotations

import functools

import attrs
import orjson
from pglast import parser

from drivers.postgres.query_checks import check_against_catalog
from drivers.postgres.query_policy import QueryPolicy
from drivers.postgres.select_walker import RangeVarSite, SelectTreeWalker, display_name, friendly_node_name
from gateway.errors import QueryRejected, RefusalReason

__all__ = ["ParsedQuery", "check_query", "display_name", "parse_query", "require_granted"]


@attrs.frozen
class ParsedQuery:
    """One checked SELECT and everything it reads or calls."""

    sql: str
    """The statement's own text, trimmed, without a trailing ';' (may end in a ``--`` comment)."""
    relations: frozenset[tuple[str, str]]
    """Every (schema, relation) read anywhere, spelled as PostgreSQL resolves it."""
    functions: frozenset[str]
    """Every pg_catalog function called by name (schema prefix removed)."""
    attribute_names: frozenset[str] = frozenset()
    """Last names of ``a.b`` / ``(expr).b`` references: PostgreSQL calls ``b(a)`` if ``a`` has no column ``b``."""
    range_vars: tuple[RangeVarSite, ...] = ()
    """Every schema-qualified relation reference, located in UTF-8 bytes of ``sql`` (for ``inheritance.py``)."""
    fingerprint: str = ""
    """pglast's fingerprint of the statement as sent: equal for queries that differ only in constants, spacing,
    comments (``inheritance.py`` keeps it through the ONLY rewrite, so the audit names the query the client sent)."""


@attrs.frozen
class _Refusal:
    """A cached refusal: raised afresh each time (a raised exception keeps its traceback)."""

    message: str
    reason: str


def _parse_error_message(error: parser.ParseError) -> str:
    message, index = (tuple(error.args) + (None, None))[:2]
    return str(message) if index is None else f"{message} (at character {index + 1})"


def _statement_text(encoded: bytes, raw_statement: dict) -> tuple[str, int]:
    """The statement's own text and the byte offset where it starts; pglast reports places in UTF-8 bytes."""
    start = raw_statement.get("stmt_location", 0)
    length = raw_statement.get("stmt_len", 0)
    chunk = encoded[start : start + length] if length else encoded[start:]
    untrimmed = chunk.decode("utf-8")
    text = untrimmed.strip()
    start += len(untrimmed[: len(untrimmed) - len(untrimmed.lstrip())].encode("utf-8"))
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text, start


def _walk(sql: str) -> tuple[SelectTreeWalker, str, int]:
    """Parse and walk ``sql``; raise ``QueryRejected`` unless it is one plain read-only SELECT."""
    if "\x00" in sql:
        raise QueryRejected("the query contains a NUL character", reason=RefusalReason.SYNTAX)
    try:
        encoded = sql.encode("utf-8")
        tree = orjson.loads(parser.parse_sql_json(sql))
    except UnicodeEncodeError:
        raise QueryRejected("the query is not valid UTF-8 text", reason=RefusalReason.SYNTAX) from None
    except parser.ParseError as error:
        raise QueryRejected(_parse_error_message(error), reason=RefusalReason.SYNTAX) from None
    except orjson.JSONDecodeError:
        raise QueryRejected("the query is nested too deeply to be checked", reason=RefusalReason.SYNTAX) from None
    statements = tree.get("stmts", [])
    if not statements:
        raise QueryRejected("the query is empty: send one SELECT statement", reason=RefusalReason.STATEMENT)
    if len(statements) > 1:
        raise QueryRejected(
            f"only one SELECT statement is allowed, found {len(statements)} statements",
            reason=RefusalReason.STATEMENT,
        )
    ((statement_type, body),) = statements[0]["stmt"].items()
    if statement_type != "SelectStmt":
        raise QueryRejected(
            f"only one SELECT statement is allowed, found {friendly_node_name(statement_type)}",
            reason=RefusalReason.STATEMENT,
        )
    walker = SelectTreeWalker()
    walker.walk_select(body)
    text, start = _statement_text(encoded, statements[0])
    return walker, text, start


def _parsed(walker: SelectTreeWalker, text: str, start: int) -> ParsedQuery:
    return ParsedQuery(
        sql=text,
        relations=frozenset(walker.relations),
        functions=frozenset(walker.functions),
        attribute_names=frozenset(walker.attribute_names),
        range_vars=tuple(attrs.evolve(site, location=site.location - start) for site in walker.range_vars),
        fingerprint=parser.fingerprint(text),
    )


@functools.lru_cache(maxsize=1024)
def parse_query(sql: str) -> ParsedQuery:
    """Parse and walk ``sql`` (no catalog checks); raise ``QueryRejected`` unless it is one plain SELECT."""
    return _parsed(*_walk(sql))


@functools.lru_cache(maxsize=1024)
def _checked(sql: str, policy: QueryPolicy) -> ParsedQuery | _Refusal:
    try:
        walker, text, start = _walk(sql)
        check_against_catalog(walker, policy)
    except QueryRejected as refusal:
        return _Refusal(refusal.message, refusal.reason)
    return _parsed(walker, text, start)


def check_query(sql: str, granted: frozenset[tuple[str, str]] | None, policy: QueryPolicy) -> ParsedQuery:
    """``parse_query`` plus the catalog checks of ``policy``, and every relation in ``granted`` (unless None)."""
    outcome = _checked(sql, policy)
    if isinstance(outcome, _Refusal):
        raise QueryRejected(outcome.message, reason=outcome.reason)
    return outcome if granted is None else require_granted(outcome, granted)


def require_granted(parsed: ParsedQuery, granted: frozenset[tuple[str, str]]) -> ParsedQuery:
    """``parsed`` if every relation it reads is in ``granted``; else ``QueryRejected`` naming one that is not."""
    not_granted = parsed.relations - granted
    if not_granted:
        raise QueryRejected(
            f"table {display_name(*min(not_granted))} is not granted to this token",
            reason=RefusalReason.NOT_GRANTED,
        )
    return parsed
