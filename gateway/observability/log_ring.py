"""The log entries a process keeps in memory for ``GET /Logs/``: a ring bounded in entries and in bytes.

Every rendered entry goes to stderr and into this ring (``gateway.observability.logbook``).
The ring keeps the newest ``log_buffer_size`` entries, and no more than
``log_buffer_bytes`` of them in all: entries are of any size (an audit entry
carries its query text, a library record its traceback), so a count alone
bounded nothing (issue 20: 800 refused GetData made ``/Logs/`` answer 76 MiB).
The oldest entries leave first; an entry larger than the whole ring is kept as
a stub that names its size (``gateway.observability.log_bounds``), so the reader still sees
that it happened.
"""

from __future__ import annotations

import enum
from collections import deque

import attrs

from gateway.observability.log_bounds import stub_line, utf8_size


class LogLevel(enum.IntEnum):
    """Levels the Logs endpoint filters on."""

    DEBUG = 10
    INFO = 20
    WARNING = 30
    ERROR = 40

    @classmethod
    def parse(cls, text: str) -> LogLevel:
        """Read a level name, case-insensitively; ``degug`` is the specification's spelling of debug."""
        name = text.strip().lower()
        return cls[("debug" if name == "degug" else name).upper()]


@attrs.frozen
class LogQuery:
    """Which entries a reader of the logs wants."""

    minimum: LogLevel = LogLevel.DEBUG
    """Entries at this level and above."""
    limit: int | None = None
    """Only the newest this many (after the other filters); all when None."""
    event: str | None = None
    """Only entries whose ``event`` is exactly this; any when None."""


TimedLine = tuple[str, str]
"""A rendered entry with its timestamp: ``(timestamp, line)``; tuples of them sort in time order."""


class LogRing:
    """The newest rendered log lines with their level, timestamp and event: at most ``capacity`` of them, and at
    most ``max_bytes`` bytes of lines (UTF-8) in all."""

    def __init__(self, capacity: int, max_bytes: int | None = None) -> None:
        self._capacity = capacity
        self._max_bytes = max_bytes
        self._entries: deque[tuple[int, str, str, str, int]] = deque()
        self._bytes = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def max_bytes(self) -> int | None:
        """The most bytes of lines kept; None: bounded by the count only."""
        return self._max_bytes

    @property
    def size_bytes(self) -> int:
        """The bytes of the lines kept now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def append(self, level: LogLevel, line: str, *, timestamp: str = "", event: str = "") -> None:
        size = utf8_size(line)
        limit = self._max_bytes
        if limit is not None and size > limit:
            line = stub_line(timestamp, LogLevel(level).name.lower(), event, size, limit)
            size = utf8_size(line)
        entries = self._entries
        entries.append((level, timestamp, event, line, size))
        self._bytes += size
        # The oldest leave first: usually one per append, many when a large entry comes.
        while len(entries) > self._capacity or (limit is not None and self._bytes > limit):
            self._bytes -= entries.popleft()[4]

    def read(self, query: LogQuery) -> list[TimedLine]:
        """The entries ``query`` asks for, oldest first."""
        wanted = query.event
        found = [
            (timestamp, line)
            for level, timestamp, event, line, _ in list(self._entries)
            if level >= query.minimum and (wanted is None or event == wanted)
        ]
        return found[-query.limit :] if query.limit is not None else found
