"""Structured logs: JSON lines to stderr and into a ring buffer the Logs endpoint reads.

Each app gets its own logger (``make_logger``) rather than a process-wide
structlog configuration, so two apps in one process (as in the tests) never
share a buffer. A redaction processor runs before rendering: no password and
no whole token reaches stderr or the buffer, whatever key or text carries it.
"""

from __future__ import annotations

import contextvars
import enum
import functools
import re
import sys
from collections import deque
from collections.abc import Iterable, MutableMapping
from typing import Any, TextIO

import orjson
import structlog

REDACTED = "[redacted]"

_SECRET_KEY_PATTERN = re.compile(r"password|passwd|token|secret|dsn", re.IGNORECASE)
# libpq and URL spellings of a password inside free text (error messages, DSNs).
_INLINE_PASSWORD = re.compile(r"(password\s*[=:]\s*)('[^']*'|\S+)|(://[^:/@\s]+:)([^@\s]+)(@)", re.IGNORECASE)
# Secrets shorter than this are not searched for in free text: replacing every "a" would ruin the logs.
_MIN_SECRET_LENGTH = 4

request_secrets: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("request_secrets", default=())
"""Tokens of the request being served, redacted from anything logged while serving it."""


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


class LogRing:
    """The newest rendered log lines with their levels, at most ``capacity`` of them."""

    def __init__(self, capacity: int) -> None:
        self._entries: deque[tuple[int, str]] = deque(maxlen=capacity)

    def append(self, level: LogLevel, line: str) -> None:
        self._entries.append((level, line))

    def read(self, minimum: LogLevel, limit: int | None = None) -> list[str]:
        """Lines at ``minimum`` and above, oldest first; only the newest ``limit`` if given."""
        lines = [line for level, line in list(self._entries) if level >= minimum]
        return lines[-limit:] if limit is not None else lines


class SecretRedactor:
    """A structlog processor that hides secrets by key name and by value.

    Known secrets (the admin token, registered passwords) are searched for in
    every string of the event; so are the tokens of the current request.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= _MIN_SECRET_LENGTH:
            self._secrets.add(secret)

    def discard(self, secret: str | None) -> None:
        self._secrets.discard(secret or "")

    def __call__(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        secrets = self._secrets.union(s for s in request_secrets.get() if len(s) >= _MIN_SECRET_LENGTH)
        for key in list(event_dict):
            event_dict[key] = self._clean(key, event_dict[key], secrets)
        return event_dict

    def redact_text(self, text: str) -> str:
        """Hide known secrets in a free text (used for messages answered to clients too)."""
        return self._clean_text(text, self._secrets)

    def _clean(self, key: Any, value: Any, secrets: set[str]) -> Any:
        if isinstance(key, str) and _names_a_secret(key):
            return REDACTED if value not in (None, "") else value
        if isinstance(value, str):
            return self._clean_text(value, secrets)
        if isinstance(value, dict):
            return {k: self._clean(k, v, secrets) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._clean(None, item, secrets) for item in value]
        return value

    @staticmethod
    def _clean_text(text: str, secrets: set[str]) -> str:
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _INLINE_PASSWORD.sub(_hide_inline_password, text)


@functools.lru_cache(maxsize=4096)
def _names_a_secret(key: str) -> bool:
    # Events reuse a few dozen field names: classify each once, not on every log line.
    return bool(_SECRET_KEY_PATTERN.search(key)) and not key.endswith("fingerprint")


def _hide_inline_password(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return match.group(1) + REDACTED
    return match.group(3) + REDACTED + match.group(5)


class _RingAndStreamSink:
    """The structlog "logger": writes each rendered line to a stream and to the ring."""

    def __init__(self, ring: LogRing, stream: TextIO) -> None:
        self._ring = ring
        self._stream = stream

    def _write(self, level: LogLevel, line: str) -> None:
        self._ring.append(level, line)
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must not break request handling; the ring still has the line

    def debug(self, line: str) -> None:
        self._write(LogLevel.DEBUG, line)

    def info(self, line: str) -> None:
        self._write(LogLevel.INFO, line)

    def warning(self, line: str) -> None:
        self._write(LogLevel.WARNING, line)

    def error(self, line: str) -> None:
        self._write(LogLevel.ERROR, line)

    critical = exception = fatal = error
    warn = warning
    msg = info


def _render_json(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> str:
    return orjson.dumps(event_dict, default=repr).decode()


def make_logger(
    ring: LogRing,
    redactor: SecretRedactor,
    *,
    level: LogLevel = LogLevel.INFO,
    stream: TextIO | None = None,
) -> structlog.typing.FilteringBoundLogger:
    """A logger that writes JSON lines with ``timestamp``, ``level`` and ``event`` to stderr and ``ring``."""
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
        structlog.processors.format_exc_info,
        redactor,
        _render_json,
    ]
    return structlog.wrap_logger(
        _RingAndStreamSink(ring, stream if stream is not None else sys.stderr),
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(int(level)),
    )
