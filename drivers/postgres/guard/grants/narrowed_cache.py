"""The guard cache for tokens with narrowed grants: decisions reused across numeric constants, per narrowing.

A point lookup of a narrowed table must cost about what one of a whole table costs (issue 22: at least 0.9
of its rate), so the rewrite is kept by key as ``cache.py`` keeps decisions: per (narrowing, the text with
its numeric constants replaced by what the guard reads of them). On a hit the narrowing's edits are made on
the new text (``rewrite.apply_edits``: its copied conditions carry the new constants), then the ONLY
rewrite's edits on that. The constants pinned are those the check of the original text read (the rewrite
copies the original's conditions, so the rewritten check reads no value the original's did not). The
grant check runs on every query. Where every ONLY the second rewrite adds goes before a relation name the
first one copied (a point lookup of a plain table), an entry holds both as one edit of the original's tokens
(``_combined``), kept only if it makes exactly what the two steps make for the entry's own text: a hit
then scans the text once, as a whole grant's hit does.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

import attrs

from drivers.postgres.guard.cache import (
    MAX_EXACT_TEXT_CHARS,
    CacheEntry,
    cache_key,
    cache_tokens,
    entry_for,
    pinned_tokens,
    statement_text,
    token_text,
)
from drivers.postgres.guard.grants.enforce import NarrowedQuery
from drivers.postgres.guard.grants.rewrite import TextEdit, TokenCopy, apply_edits
from drivers.postgres.guard.grants.spans import significant_tokens
from drivers.postgres.guard.inheritance import apply_only_edits, read_as_only
from drivers.postgres.guard.sql_guard import ParsedQuery, require_granted

NarrowingKey = Any
"""``table_grant.narrowing_key`` of the token's narrowing (hashable)."""


_COMMENTS = frozenset({"SQL_COMMENT", "C_COMMENT"})
_SKIPPED_AT_END = frozenset({"ASCII_59", *_COMMENTS})
"""As ``cache.statement_text`` skips them: ';' and comments after the statement."""


def _statement_of(sql: str, tokens: Any, significant: list[Any], edits: tuple[TextEdit, ...],
                  rewritten: str) -> str | None:
    """``statement_text`` of ``rewritten`` without scanning it, when no ONLY edit applies: the rewrite changes
    nothing before the original's first token or after its last statement token, so the statement is
    ``rewritten`` less the original's lead and tail (None when an edit reaches either: scan then)."""
    last = len(tokens) - 1
    while last > 0 and tokens[last].name in _SKIPPED_AT_END:
        last -= 1
    lead, end = tokens[0].start, tokens[last].end + 1
    if any(significant[edit.first].start <= lead or significant[edit.last].end + 1 > end for edit in edits):
        return None
    return rewritten[lead : len(rewritten) - (len(sql) - end)]


def _combined(edits: tuple[TextEdit, ...], significant: list[Any], rewritten_tokens: Any,
              only: tuple[Any, ...]) -> tuple[TextEdit, ...] | None:
    """``edits`` with ``ONLY `` written before each copied relation name the ONLY rewrite marks, or None when an
    ONLY edit is anything else (a removed ``*``, a place outside the copies)."""
    if not all(edit.insert_only for edit in only):
        return None
    targets = {rewritten_tokens[edit.token].start for edit in only}
    combined: list[TextEdit] = []
    position = copied = 0  # in the rewritten text without the ONLYs, where the rewrite tokens were found
    for edit in edits:
        position += significant[edit.first].start - copied
        pieces: list[str | TokenCopy] = []
        for piece in edit.pieces:
            if isinstance(piece, str):
                size = len(piece)
            else:
                if position in targets:
                    targets.discard(position)
                    pieces.append("ONLY ")
                size = significant[piece.last].end + 1 - significant[piece.first].start
            pieces.append(piece)
            position += size
        combined.append(attrs.evolve(edit, pieces=tuple(pieces)))
        copied = significant[edit.last].end + 1
    return tuple(combined) if not targets else None


@attrs.frozen
class _NarrowedEntry:
    entry: CacheEntry
    """The decision on the rewritten text: template, ONLY edits by its tokens; pins by the original's tokens."""
    narrowing: tuple[TextEdit, ...]
    """The rewrite, by the original text's tokens without comments."""
    combined: tuple[TextEdit, ...] | None = None
    """The rewrite and the ONLY rewrite as one edit of the original's tokens, when every ONLY goes before a
    copied relation name (None: made in two steps, scanning the rewritten text)."""


class NarrowedGuardCache:
    """Decisions for narrowed tokens, the least recently used dropped beyond ``capacity``."""

    def __init__(self, capacity: int = 4096) -> None:
        self._entries: collections.OrderedDict[tuple[NarrowingKey, str], _NarrowedEntry] = collections.OrderedDict()
        self._answers: collections.OrderedDict[tuple[NarrowingKey, str], ParsedQuery] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity
        self.hits = 0
        """Queries answered from an entry (for tests and the benchmark)."""

    def check(self, sql: str, granted: frozenset[tuple[str, str]], narrowing: NarrowingKey,
              fresh_check: Callable[[str], NarrowedQuery], partitioned: frozenset[tuple[str, str]]) -> ParsedQuery:
        """What ``read_as_only(fresh_check(sql).parsed, partitioned)`` answers, from an entry when one applies."""
        with self._lock:
            known = self._answers.get((narrowing, sql))
        if known is not None:
            return require_granted(known, granted)
        tokens = cache_tokens(sql)
        if tokens is None:
            return require_granted(read_as_only(fresh_check(sql).parsed, partitioned), granted)
        key = (narrowing, cache_key(sql, tokens))
        with self._lock:
            found = self._entries.get(key)
        if found is not None and all(token_text(sql, tokens[i]) == text for i, text in found.entry.pinned):
            with self._lock:
                self.hits += 1
            significant = [token for token in tokens if token.name not in _COMMENTS]  # significant_tokens, unscanned
            if found.combined is not None:  # the point lookup's path: no second scan
                final = _statement_of(sql, tokens, significant, found.combined,
                                      apply_edits(sql, significant, found.combined))
                if final is not None:
                    return require_granted(self._remember(narrowing, sql, attrs.evolve(
                        found.entry.template, sql=final, range_vars=())), granted)
            rewritten = apply_edits(sql, significant, found.narrowing)
            rewritten_tokens = cache_tokens(rewritten)
            if rewritten_tokens is not None:
                final = statement_text(apply_only_edits(rewritten, rewritten_tokens, found.entry.edits), rewritten,
                                       rewritten_tokens, found.entry.edits)
                return require_granted(self._remember(narrowing, sql, attrs.evolve(
                    found.entry.template, sql=final, range_vars=())), granted)
        narrowed = fresh_check(sql)
        answer = read_as_only(narrowed.parsed, partitioned)
        entry = self._entry(sql, tokens, narrowed, answer, partitioned)
        if entry is not None:
            with self._lock:
                self._entries[key] = entry
                self._entries.move_to_end(key)
                while len(self._entries) > self._capacity:
                    self._entries.popitem(last=False)
            self._remember(narrowing, sql, answer)
        return require_granted(answer, granted)

    @staticmethod
    def _entry(sql: str, tokens: Any, narrowed: NarrowedQuery, answer: ParsedQuery,
               partitioned: frozenset[tuple[str, str]]) -> _NarrowedEntry | None:
        rewritten = apply_edits(sql, significant_tokens(sql), narrowed.edits)
        rewritten_tokens = cache_tokens(rewritten)
        if rewritten_tokens is None:
            return None
        entry = entry_for(rewritten, rewritten_tokens, narrowed.parsed, answer, partitioned)
        if entry is None:
            return None
        seen = narrowed.seen
        lead = len(sql) - len(sql.lstrip())
        if not sql[lead:].startswith(seen.sql):
            return None
        encoded = seen.sql.encode("utf-8")
        read = {lead + len(encoded[:location].decode("utf-8", errors="ignore")) for location in seen.value_locations}
        significant = significant_tokens(sql)
        combined = _combined(narrowed.edits, significant, rewritten_tokens, entry.edits)
        if combined is not None:  # used only if it makes, here, exactly what the two steps make
            two_steps = statement_text(apply_only_edits(rewritten, rewritten_tokens, entry.edits), rewritten,
                                       rewritten_tokens, entry.edits)
            if _statement_of(sql, tokens, significant, combined, apply_edits(sql, significant, combined)) != two_steps:
                combined = None
        return _NarrowedEntry(attrs.evolve(entry, pinned=pinned_tokens(sql, tokens, read)), narrowed.edits, combined)

    def _remember(self, narrowing: NarrowingKey, sql: str, answer: ParsedQuery) -> ParsedQuery:
        if len(sql) <= MAX_EXACT_TEXT_CHARS:
            with self._lock:
                self._answers[(narrowing, sql)] = answer
                while len(self._answers) > self._capacity:
                    self._answers.popitem(last=False)
        return answer
