"""Layer 1 of GetData's defence: refuse any SQL but one plain read-only SELECT over granted tables.

``parse_query`` parses the text with pglast (PostgreSQL's own parser) and
walks the *whole* raw parse tree (``select_walker.py``). Only node kinds known to be harmless inside
a SELECT pass (an allowlist); everything else is refused with a sentence that
names it. On the way it collects every relation read and every function
called, so ``check_query`` can compare them with the token's grants and the
database's ``FunctionPolicy`` in a couple of set operations.

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

from drivers.postgres.function_policy import FunctionPolicy
from drivers.postgres.select_walker import SelectTreeWalker, display_name, friendly_node_name
from gateway.errors import QueryRejected, RefusalReason

__all__ = ["ParsedQuery", "check_query", "display_name", "parse_query"]


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
    fingerprint: str = ""
    """pglast's fingerprint of the statement: equal for queries that differ only in constants, spacing, comments."""


def _parse_error_message(error: parser.ParseError) -> str:
    message, index = (tuple(error.args) + (None, None))[:2]
    return str(message) if index is None else f"{message} (at character {index + 1})"


def _statement_text(encoded: bytes, raw_statement: dict) -> str:
    """The statement's own text; pglast reports its place in UTF-8 bytes."""
    start = raw_statement.get("stmt_location", 0)
    length = raw_statement.get("stmt_len", 0)
    chunk = encoded[start : start + length] if length else encoded[start:]
    text = chunk.decode("utf-8").strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text


@functools.lru_cache(maxsize=1024)
def parse_query(sql: str) -> ParsedQuery:
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
    return ParsedQuery(
        sql=_statement_text(encoded, statements[0]),
        relations=frozenset(walker.relations),
        functions=frozenset(walker.functions),
        attribute_names=frozenset(walker.attribute_names),
        fingerprint=parser.fingerprint(sql),
    )


def check_query(sql: str, granted: frozenset[tuple[str, str]], functions: FunctionPolicy) -> ParsedQuery:
    """``parse_query`` plus: every relation is in ``granted`` and every function allowed by ``functions``."""
    parsed = parse_query(sql)
    refused_functions = parsed.functions - functions.allowed
    if refused_functions:
        raise QueryRejected(
            f"function {display_name(min(refused_functions))} is not allowed",
            reason=RefusalReason.FUNCTION,
        )
    for name in sorted(parsed.attribute_names - functions.allowed):
        if functions.refuses_attribute(name):
            raise QueryRejected(
                f"function {display_name(name)} is not allowed: "
                f'PostgreSQL calls it for ".{name}" when there is no such column',
                reason=RefusalReason.FUNCTION,
            )
    not_granted = parsed.relations - granted
    if not_granted:
        raise QueryRejected(
            f"table {display_name(*min(not_granted))} is not granted to this token",
            reason=RefusalReason.NOT_GRANTED,
        )
    return parsed
