"""The SQL guard's decision, reused for queries that differ only in their numeric constants.

A dashboard or an application sends the same query again and again with other
numbers in it (``... WHERE id = 17``, then ``= 4711``). Parsing, walking and
checking each text afresh costs several hundred microseconds; PostgreSQL's own
scanner (``pglast.parser.scan``) splits a text into tokens in a tenth of that.
So a pool keeps, per *key*, the decision the guard made for the first query of
that key, and serves later queries of the key from it.

The key is the query's text with every numeric constant (``ICONST``,
``FCONST``, as the scanner finds them) replaced by what the guard reads of it
unless it reads its value: its type (``integer``, ``bigint`` or ``numeric``,
which the value decides: 9223372036854775807 is a bigint, one more is a
numeric) and its printed size (``1e9999`` prints ten thousand digits, ``1e0001``
two: same length, different keys). Everything else is kept as written: names,
keywords, operators, spacing, comments and every string constant (the guard
reads string constants' contents, numbers inside them included). The grammar
decides on token kinds alone, so two texts with the same key parse to trees
that differ at most in the values of their numeric constants. Where the
decision reads a constant's value it is *pinned*: a number a size rule reads
(``repeat``'s count, ``lpad``'s length, ``array_fill``'s dimensions, a series'
bounds: ``ParsedQuery.value_locations``), a numeric token the grammar consumed
instead of making it a constant node (``float(53)`` picks a type by the
number) and a constant inside a type name (``varchar(100)``). A pinned token's
text is kept with the entry, and a query whose pinned texts differ is checked
afresh. ``tests/test_guard_cache.py`` runs every query of the guard's suites
with several sets of constants through both paths and requires the same
decision.

The last answers are also kept by their exact text (texts up to 2 KiB), so a
query sent again as it was skips even the scan. Only accepted queries are kept
(a refusal's message may quote a constant; the guard's own exact-text cache
keeps refusals), texts longer than ``MAX_CACHED_QUERY_CHARS`` are not, and the
grant check runs on every query: the entry says which relations the query
reads, the token's grants decide.
The ONLY rewrite (``inheritance.py``) is kept as edits by token index and made
on the new text; on a miss the edits are made on the first text too and must
give the same tokens as the guard's own rewrite, else nothing is kept.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import orjson
from pglast import parser

from drivers.postgres.guard.inheritance import OnlyEdit, apply_only_edits, inherited_sites, only_edits, read_as_only
from drivers.postgres.guard.sizes.literals import number_shaped, numeric_printed
from drivers.postgres.guard.sql_guard import ParsedQuery, require_granted, values_kept

MAX_CACHED_QUERY_CHARS = 16_384
"""Longer texts are checked afresh every time (they rarely repeat, and their keys would be large)."""

MAX_EXACT_TEXT_CHARS = 2048
"""Texts up to this long are also kept by their exact text (at most ``capacity`` of them: a few MiB)."""

_NUMERIC = frozenset({"ICONST", "FCONST"})
_SKIPPED_AT_END = frozenset({"ASCII_59", "SQL_COMMENT", "C_COMMENT"})  # ';' and comments after the statement

Key = str
ExactKey = str | tuple[str, tuple[str | None, ...]]
"""A query's exact text, with its parameters' values when it has some."""
def parameter_signature(parameters: tuple[str | None, ...]) -> str:
    """What the guard reads of parameter values it does not read the value of (``Param``): NULL or not, a
    number's length and printed size (their type comes from the query, not the value), every other value's
    length in UTF-8 bytes. A value read for more (a count, an array, a jsonb document) is pinned by the entry
    (``CacheEntry.pinned_parameters``): 1 000 names of one length looked up by one query are one entry."""
    parts = []
    for value in parameters:
        if value is None:
            parts.append("\0n")
        elif number_shaped(value):
            parts.append(f"\0#{len(value)}:{numeric_printed(value.strip())}")
        else:
            parts.append(f"\0s{len(value.encode('utf-8'))}")
    return "".join(parts)


@attrs.frozen
class CacheEntry:
    """The guard's decision for one key."""

    pinned: tuple[tuple[int, str], ...]
    """(token index, text) of the numeric tokens whose value the decision depends on."""
    template: ParsedQuery
    """The first query's checked form: relations, functions and fingerprint hold for every query of the key."""
    edits: tuple[OnlyEdit, ...]
    """The ONLY rewrite, by token index."""
    pinned_parameters: tuple[tuple[int, str | None], ...] = ()
    """(n, value) of the parameters ``$n`` whose value the decision depends on."""


class GuardCache:
    """Decisions of the guard by key, the least recently used dropped beyond ``capacity``."""

    def __init__(self, capacity: int = 4096) -> None:
        self._entries: collections.OrderedDict[Key, CacheEntry] = collections.OrderedDict()
        self._answers: collections.OrderedDict[ExactKey, ParsedQuery] = collections.OrderedDict()
        """The last answers by exact text (texts up to ``MAX_EXACT_TEXT_CHARS``): a repeated text skips the scan."""
        # The event loop checks texts up to 2 KiB, the pool's guard thread those up to 16 KiB: both use the
        # entries. Longer texts go to the pool's child process (process.py) and never reach this cache.
        self._lock = threading.Lock()
        self._capacity = capacity
        self.hits = 0
        """Queries answered from an entry (for tests and the benchmark)."""
        self.exact_hits = 0
        """Queries answered by their exact text, without a scan."""

    def check(
        self,
        sql: str,
        granted: frozenset[tuple[str, str]],
        fresh_check: Callable[[str], ParsedQuery],
        partitioned: frozenset[tuple[str, str]],
        parameters: tuple[str | None, ...] = (),
    ) -> ParsedQuery:
        """What ``read_as_only(fresh_check(sql), partitioned)`` answers, from an entry when one applies.

        ``fresh_check`` is the guard without its grant check (for these ``parameters``, the values of
        ``$1``..``$n``); the grant check runs here, on every query.
        """
        exact: ExactKey = (sql, parameters) if parameters else sql
        with self._lock:
            known = self._answers.get(exact)
            if known is not None:
                self._answers.move_to_end(exact)
                self.exact_hits += 1
        if known is not None:
            return require_granted(known, granted)
        tokens = cache_tokens(sql)
        if tokens is None:
            return require_granted(read_as_only(fresh_check(sql), partitioned), granted)
        key = cache_key(sql, tokens) + parameter_signature(parameters)
        with self._lock:
            entry = self._entries.get(key)
        if entry is not None and all(token_text(sql, tokens[i]) == text for i, text in entry.pinned) and all(
                parameters[n - 1] == value for n, value in entry.pinned_parameters):
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                self.hits += 1
            rewritten = statement_text(apply_only_edits(sql, tokens, entry.edits), sql, tokens, entry.edits)
            answer = self._remember(exact, attrs.evolve(entry.template, sql=rewritten, range_vars=()))
            return require_granted(answer, granted)
        checked = fresh_check(sql)
        answer = read_as_only(checked, partitioned)
        new_entry = entry_for(sql, tokens, checked, answer, partitioned)
        pinned_values = tuple((n, parameters[n - 1]) for n in sorted(checked.parameters_read) if n <= len(parameters))
        if new_entry is not None and values_kept(tuple(value for _, value in pinned_values)):
            new_entry = attrs.evolve(new_entry, pinned_parameters=pinned_values)
            with self._lock:
                self._entries[key] = new_entry
                self._entries.move_to_end(key)
                while len(self._entries) > self._capacity:
                    self._entries.popitem(last=False)
            self._remember(exact, answer)
        return require_granted(answer, granted)

    def _remember(self, exact: ExactKey, answer: ParsedQuery) -> ParsedQuery:
        """Keep ``answer`` for the exact text (and parameters) of a short query: the same again needs no scan."""
        short = len(exact) <= MAX_EXACT_TEXT_CHARS if isinstance(exact, str) else (
            len(exact[0]) <= MAX_EXACT_TEXT_CHARS and values_kept(exact[1]))
        if short:
            with self._lock:
                self._answers[exact] = answer
                while len(self._answers) > self._capacity:
                    self._answers.popitem(last=False)
        return answer


def cache_tokens(sql: str) -> Sequence[Any] | None:
    if len(sql) > MAX_CACHED_QUERY_CHARS or "\x00" in sql:
        return None
    try:
        tokens = parser.scan(sql)
    except parser.ParseError:
        return None
    return tokens if tokens else None


def token_text(sql: str, token: Any) -> str:
    return sql[token.start : token.end + 1]


_INT8_LIMIT = 1 << 63


def _signature(text: str, kind: str) -> str:
    """What the guard reads of a numeric constant it does not read the value of: its type and printed size."""
    if kind == "ICONST":
        return f"I{len(text)}"
    if text.isdigit() and len(text) <= 19 and int(text) < _INT8_LIMIT:
        return f"L{len(text)}"
    return f"N{numeric_printed(text)}"


def cache_key(sql: str, tokens: Sequence[Any]) -> Key:
    """``sql`` with each numeric constant replaced by its signature between NULs (no query holds a NUL)."""
    parts: list[str] = []
    copied = 0
    for token in tokens:
        if token.name in _NUMERIC:
            parts.append(sql[copied : token.start])
            parts.append(f"\0{_signature(sql[token.start : token.end + 1], token.name)}\0")
            copied = token.end + 1
    parts.append(sql[copied:])
    return "".join(parts)


def statement_text(edited: str, original: str, tokens: Sequence[Any], edits: Sequence[OnlyEdit]) -> str:
    """The statement's own text out of ``edited``: from its first token to its last but ';' and comments."""
    last = len(tokens) - 1
    while last > 0 and tokens[last].name in _SKIPPED_AT_END:
        last -= 1
    first = tokens[0].start
    end = tokens[last].end + 1
    # Edits before the end moved it: ONLY inserted adds five characters, a removed '*' takes one.
    for edit in edits:
        token = tokens[edit.token]
        if token.start < end:
            end += 5 if edit.insert_only else -(token.end + 1 - token.start)
    return edited[first:end]


def entry_for(
    sql: str, tokens: Sequence[Any], checked: ParsedQuery, answer: ParsedQuery, partitioned: frozenset[Any]
) -> CacheEntry | None:
    """The entry for ``sql``'s key, or None when this query's decision cannot be reused safely."""
    lead = len(sql) - len(sql.lstrip())
    if not sql[lead:].startswith(checked.sql):
        return None
    encoded = checked.sql.encode("utf-8")
    sites = inherited_sites(checked.range_vars, partitioned)
    starts = [lead + len(encoded[: site.location].decode("utf-8")) for site in sites]
    edits = tuple(only_edits(tokens, starts))
    rewritten = statement_text(apply_only_edits(sql, tokens, edits), sql, tokens, edits)
    if _significant(rewritten) != _significant(answer.sql):
        return None
    read_values = {lead + len(encoded[:location].decode("utf-8", errors="ignore")) for location in checked.value_locations}
    pinned = pinned_tokens(sql, tokens, read_values)
    return CacheEntry(pinned=pinned, template=answer, edits=edits)


def _significant(sql: str) -> list[str]:
    """The tokens of ``sql`` without comments and a final ';', as text."""
    tokens = [token for token in parser.scan(sql) if token.name not in ("SQL_COMMENT", "C_COMMENT")]
    while tokens and tokens[-1].name == "ASCII_59":
        tokens.pop()
    return [token_text(sql, token) for token in tokens]


def pinned_tokens(sql: str, tokens: Sequence[Any], read_values: set[int]) -> tuple[tuple[int, str], ...]:
    """The numeric tokens that are not a constant node of their own, sit in a type name, or whose value the
    decision read (``read_values``: character offsets in ``sql``; a negative constant starts at its sign)."""
    tree = orjson.loads(parser.parse_sql_json(sql))
    constants: set[int] = set()
    in_type_names: set[int] = set()
    _numeric_constants(tree, constants, in_type_names, inside_type_name=False)
    byte_offsets = _byte_offsets(sql)
    by_byte = {byte_offsets[token.start]: index for index, token in enumerate(tokens)}
    plain = {by_byte[location] for location in constants - in_type_names if location in by_byte}
    for index, token in enumerate(tokens):
        if token.start in read_values:
            plain.discard(index)
            if token.name == "ASCII_45":  # a negative constant: its number is the next token
                plain.discard(index + 1)
    return tuple(
        (index, token_text(sql, token))
        for index, token in enumerate(tokens)
        if token.name in _NUMERIC and index not in plain
    )


def _byte_offsets(sql: str) -> Sequence[int]:
    """The UTF-8 byte offset of each character of ``sql`` (the parser counts bytes, the scanner characters)."""
    if sql.isascii():
        return range(len(sql) + 1)
    offsets = [0]
    for character in sql:
        offsets.append(offsets[-1] + len(character.encode("utf-8")))
    return offsets


def _numeric_constants(node: Any, constants: set[int], in_type_names: set[int], *, inside_type_name: bool) -> None:
    """Collect the byte locations of numeric ``A_Const`` nodes, and of those inside a ``TypeName``."""
    stack: list[tuple[Any, bool]] = [(node, inside_type_name)]
    while stack:
        item, in_type = stack.pop()
        if isinstance(item, dict):
            constant = item.get("A_Const")
            if isinstance(constant, dict) and ("ival" in constant or "fval" in constant):
                location = constant.get("location", -1)
                constants.add(location)
                if in_type:
                    in_type_names.add(location)
            for name, value in item.items():
                stack.append((value, in_type or name in ("typeName", "TypeName")))
        elif isinstance(item, list):
            stack.extend((value, in_type) for value in item)
