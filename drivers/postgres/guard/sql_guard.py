"""Layer 1 of GetData's defence: one read-only SELECT over granted tables, typed and costed as the server would.

``check_query`` runs the guard's passes in order:

1. parse with pglast (PostgreSQL's own parser) and walk the raw tree
   (``structure.py``): one plain SELECT, allowed node kinds only, relations
   schema-qualified, functions, operators, types and collations built in;
2. the grant check: every relation the query reads is granted, before
   anything looks at a column (so no refusal tells what an ungranted table
   holds);
3. the type model (``analysis.py``): every name resolved and every
   expression typed as PostgreSQL's parse analysis does, against the
   database's catalog; an error PostgreSQL would raise is raised here;
4. the checks of the analysed query (``checks.py``): functions, types, value
   sizes and the work of one row's evaluation.

The outcome of passes 1, 3 and 4 depends only on the text and the policy, so
it is cached by (text, policy); the grant check runs on every query.
"""

from __future__ import annotations

import functools

import attrs
import orjson
from pglast import parser

from drivers.postgres.guard.checks import check_query_tree
from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.analysis import Analyzer
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.refusal_reasons import PostgresRefusal
from drivers.postgres.guard.rules.type_rules import CATALOG_LOOKUP_TYPES, PLUMBING_TYPES, REFUSED_TO_NAME
from drivers.postgres.guard.structure.names import builtin_name_of, display_name, friendly_node_name
from drivers.postgres.guard.structure.walk import RangeVarSite, SelectTreeWalker
from gateway.errors import QueryFailed, QueryRejected, RefusalReason

__all__ = ["ParsedQuery", "Refusal", "check_query", "checked_outcome", "display_name", "parse_query",
           "raise_refusal", "require_granted"]


@attrs.frozen
class ParsedQuery:
    """One checked SELECT and everything it reads or calls."""

    sql: str
    """The statement's own text, trimmed, without a trailing ';' (may end in a ``--`` comment)."""
    relations: frozenset[tuple[str, str]]
    """Every (schema, relation) read anywhere, spelled as PostgreSQL resolves it."""
    functions: frozenset[str]
    """Every pg_catalog function it runs (called by name, behind an operator, as a cast)."""
    range_vars: tuple[RangeVarSite, ...] = ()
    """Every schema-qualified relation reference, located in UTF-8 bytes of ``sql`` (for ``inheritance.py``)."""
    fingerprint: str = ""
    """pglast's fingerprint of the statement as sent: equal for queries that differ only in constants, spacing,
    comments (``inheritance.py`` keeps it through the ONLY rewrite, so the audit names the query the client sent)."""
    parameter_types: tuple[int, ...] = ()
    """The type OID deduced for each ``$n`` (issue 23): the values are bound to the statement as these types."""
    parameters_read: frozenset[int] = frozenset()
    """The ``n`` of each ``$n`` whose value the decision read (a count, a dimension): ``cache.py`` reuses the
    decision only for the same values of those."""
    value_locations: frozenset[int] = frozenset()
    """UTF-8 byte offsets in ``sql`` of the numeric constants whose values the guard's decision read (a
    ``repeat`` count, an ``array_fill`` dimension): ``cache.py`` reuses the decision only for the same values."""


@attrs.frozen
class Refusal:
    """A refusal, with the relations the query reads when the walk found them (the grant check comes first)."""

    message: str
    reason: str
    relations: frozenset[tuple[str, str]] | None
    database_error: bool = False
    """PostgreSQL's parse analysis would refuse the query with this message (an unknown column, a function of
    no such arguments): the client hears it as the database's error, ``query_failed``."""


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


def _walk(sql: str) -> tuple[SelectTreeWalker, dict, str, int]:
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
    return walker, body, text, start


def _parsed(walker: SelectTreeWalker, text: str, start: int, functions: frozenset[str],
            value_locations: frozenset[int] = frozenset(), parameter_types: tuple[int, ...] = (),
            parameters_read: frozenset[int] = frozenset()) -> ParsedQuery:
    return ParsedQuery(
        sql=text,
        relations=frozenset(walker.relations),
        functions=functions,
        range_vars=tuple(attrs.evolve(site, location=site.location - start) for site in walker.range_vars),
        fingerprint=parser.fingerprint(text),
        value_locations=frozenset(location - start for location in value_locations if location >= start),
        parameter_types=parameter_types,
        parameters_read=parameters_read,
    )


@functools.lru_cache(maxsize=1024)
def parse_query(sql: str) -> ParsedQuery:
    """Parse and walk ``sql`` (no catalog checks); raise ``QueryRejected`` unless it is one plain SELECT."""
    walker, _, text, start = _walk(sql)
    return _parsed(walker, text, start, frozenset(walker.functions))


def check_type_name(type_name: dict, policy: GuardPolicy) -> None:
    """A type a query names (a cast, a typed literal, a column definition) must be a plain built-in data type."""
    written = [item.get("String", {}).get("sval", "?") for item in type_name.get("names", ())]
    name = builtin_name_of(type_name.get("names", ())) or "?"
    if policy.nameable_type(name, len(type_name.get("arrayBounds", ()))) is not None:
        return
    info = policy.catalog.types_by_name.get(name)
    if info is None:
        why = "it is not a built-in data type of schema pg_catalog"
    elif info.is_array and info.element in policy.catalog.types:
        why = f"it is an array of {policy.catalog.types[info.element].name}, which may not be named either"
    elif info.relation:
        why = "it is the row type of a catalog relation, whose fields carry catalog references"
    elif info.name in CATALOG_LOOKUP_TYPES:
        why = "it looks catalog objects up by name"
    elif info.name in REFUSED_TO_NAME:
        why = "a cast to xml parses text with libxml2, which PostgreSQL cannot interrupt"
    elif info.name in PLUMBING_TYPES or info.kind == "p":
        why = "it is internal plumbing, not a data type"
    else:
        why = "only plain built-in data types may be named"
    raise QueryRejected(f"type {display_name(*written)} is not allowed: {why}", reason=PostgresRefusal.TYPE)


@functools.lru_cache(maxsize=1024)
def _checked(sql: str, policy: GuardPolicy, parameters: tuple[str | None, ...] = ()) -> ParsedQuery | Refusal:
    relations: frozenset[tuple[str, str]] | None = None
    try:
        walker, body, text, start = _walk(sql)
        relations = frozenset(walker.relations)
        for type_name in walker.type_names:
            check_type_name(type_name, policy)
        refused = walker.functions - policy.functions.allowed
        if refused:
            name = min(refused)
            raise QueryRejected(
                f"function {display_name(name)} is not allowed: {policy.functions.refusal_reason(name)}",
                reason=RefusalReason.FUNCTION,
            )
        analyzer = Analyzer(policy.catalog, policy.coercions, parameters)
        try:
            query = analyzer.analyze_statement(body)
        except RecursionError:
            raise Unsupported("the query is nested too deeply to be checked") from None
        functions, value_locations, parameters_read = check_query_tree(query, policy)
        value_locations |= analyzer.value_locations
    except AnalysisError as error:
        return Refusal(error.message, error.reason, relations, database_error=True)
    except QueryRejected as refusal:
        return Refusal(refusal.message, refusal.reason, relations)
    return _parsed(walker, text, start, functions, value_locations, tuple(analyzer.parameter_types), parameters_read)


MAX_KEPT_VALUE_CHARS = 2048
"""Decisions are kept by their parameter values (``_checked``'s memo, the guard cache's exact answers, the long
texts' answers) only for values this long in all: a key holds its values, and a body may hold a MiB of them."""


def values_kept(parameters: tuple[str | None, ...]) -> bool:
    """Whether a decision for these values may be kept by them (see ``MAX_KEPT_VALUE_CHARS``)."""
    return sum(len(value) for value in parameters if value is not None) <= MAX_KEPT_VALUE_CHARS


def _outcome(sql: str, policy: GuardPolicy, parameters: tuple[str | None, ...]) -> ParsedQuery | Refusal:
    if values_kept(parameters):
        return _checked(sql, policy, parameters)
    return _checked.__wrapped__(sql, policy, parameters)  # type: ignore[attr-defined, no-any-return]


def checked_outcome(sql: str, policy: GuardPolicy, parameters: tuple[str | None, ...] = ()) -> ParsedQuery | Refusal:
    """Passes 1, 3 and 4 of the guard (no grant check): the checked query, or why it is refused."""
    return _outcome(sql, policy, tuple(parameters))


def raise_refusal(refusal: Refusal, granted: frozenset[tuple[str, str]] | None) -> None:
    """Raise ``refusal``, after the grant check of the relations it reads (unless ``granted`` is None)."""
    if granted is not None and refusal.relations is not None:
        _require_relations(refusal.relations, granted)
    if refusal.database_error:
        raise QueryFailed(f"the database would refuse the query: {refusal.message}")
    raise QueryRejected(refusal.message, reason=refusal.reason)


def check_query(sql: str, granted: frozenset[tuple[str, str]] | None, policy: GuardPolicy,
                parameters: tuple[str | None, ...] = ()) -> ParsedQuery:
    """Every pass of the guard, with the values of ``$1``..``$n`` (``parameters``) where the query has them; the
    grant check (unless ``granted`` is None) before any refusal of the model."""
    outcome = _outcome(sql, policy, tuple(parameters))
    if isinstance(outcome, Refusal):
        raise_refusal(outcome, granted)
    assert isinstance(outcome, ParsedQuery)
    return outcome if granted is None else require_granted(outcome, granted)


def require_granted(parsed: ParsedQuery, granted: frozenset[tuple[str, str]]) -> ParsedQuery:
    """``parsed`` if every relation it reads is in ``granted``; else ``QueryRejected`` naming one that is not."""
    _require_relations(parsed.relations, granted)
    return parsed


def _require_relations(relations: frozenset[tuple[str, str]], granted: frozenset[tuple[str, str]]) -> None:
    not_granted = relations - granted
    if not_granted:
        raise QueryRejected(
            f"table {display_name(*min(not_granted))} is not granted to this token",
            reason=RefusalReason.NOT_GRANTED,
        )
