"""The guard cache for tokens with narrowed grants: decisions reused across numeric constants, per narrowing.

A point lookup of a narrowed table must cost about what one of a whole table costs (issue 22: at least 0.9
of its rate), so the rewrite is kept by key as ``cache.py`` keeps decisions: per (narrowing, the text with
its numeric constants replaced by what the guard reads of them). On a hit the narrowing's edits are made on
the new text (``rewrite.apply_edits``: its copied conditions carry the new constants), then the ONLY
rewrite's edits on that. The constants pinned are those the check of the original text read (the rewrite
copies the original's conditions, so the rewritten check reads no value the original's did not). The
grant check runs on every query.
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
from drivers.postgres.guard.grants.rewrite import TextEdit, apply_edits
from drivers.postgres.guard.grants.spans import significant_tokens
from drivers.postgres.guard.inheritance import apply_only_edits, read_as_only
from drivers.postgres.guard.sql_guard import ParsedQuery, require_granted

NarrowingKey = Any
"""``table_grant.narrowing_key`` of the token's narrowing (hashable)."""


@attrs.frozen
class _NarrowedEntry:
    entry: CacheEntry
    """The decision on the rewritten text: template, ONLY edits by its tokens; pins by the original's tokens."""
    narrowing: tuple[TextEdit, ...]
    """The rewrite, by the original text's tokens without comments."""


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
            rewritten = apply_edits(sql, significant_tokens(sql), found.narrowing)
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
        return _NarrowedEntry(attrs.evolve(entry, pinned=pinned_tokens(sql, tokens, read)), narrowed.edits)

    def _remember(self, narrowing: NarrowingKey, sql: str, answer: ParsedQuery) -> ParsedQuery:
        if len(sql) <= MAX_EXACT_TEXT_CHARS:
            with self._lock:
                self._answers[(narrowing, sql)] = answer
                while len(self._answers) > self._capacity:
                    self._answers.popitem(last=False)
        return answer
