"""The log entries a process keeps in memory for ``GET /Logs/`` (moved from ``gateway.logbook``)."""

from __future__ import annotations

import enum
from collections import deque

import attrs


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
    """The newest rendered log lines with their level, timestamp and event, at most ``capacity`` of them."""

    def __init__(self, capacity: int) -> None:
        self._entries: deque[tuple[int, str, str, str]] = deque(maxlen=capacity)

    @property
    def capacity(self) -> int:
        return self._entries.maxlen or 0

    def append(self, level: LogLevel, line: str, *, timestamp: str = "", event: str = "") -> None:
        self._entries.append((level, timestamp, event, line))

    def read(self, query: LogQuery) -> list[TimedLine]:
        """The entries ``query`` asks for, oldest first."""
        wanted = query.event
        found = [
            (timestamp, line)
            for level, timestamp, event, line in list(self._entries)
            if level >= query.minimum and (wanted is None or event == wanted)
        ]
        return found[-query.limit :] if query.limit is not None else found
