"""Structured logs: JSON lines to stderr and into a ring buffer the Logs endpoint reads.

Each app gets its own loggers (``make_loggers``) rather than a process-wide
structlog configuration, so two apps in one process (as in the tests) never
share a buffer. A redaction processor runs before rendering: no password and
no whole token reaches stderr, the buffer or the audit file, whatever key or
text carries it. Every entry carries the ``pid`` of its process and the
``instance`` name, and a timestamp of fixed width (microseconds always), so
entries of several processes merge in time order by comparing text.
"""

from __future__ import annotations

import contextvars
import functools
import os
import re
import sys
import time
from collections.abc import Iterable, Mapping, MutableMapping
from types import MappingProxyType
from typing import Any, Protocol, TextIO

import attrs
import orjson
import structlog
from aiohttp import web

from gateway.observability.log_ring import LogLevel, LogRing
from gateway.observability.log_stream import held_lines_for

REDACTED = "[redacted]"

_SECRET_KEY_PATTERN = re.compile(r"password|passwd|token|secret|dsn", re.IGNORECASE)
# libpq and URL spellings of a password inside free text (error messages, DSNs).
_INLINE_PASSWORD = re.compile(r"(password\s*[=:]\s*)('[^']*'|\S+)|(://[^:/@\s]+:)([^@\s]+)(@)", re.IGNORECASE)
# Secrets shorter than this are not searched for in free text: replacing every "a" would ruin the logs.
_MIN_SECRET_LENGTH = 4

request_secrets: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("request_secrets", default=())
"""Tokens of the request being served, redacted from anything logged while serving it."""

request_log_fields: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "request_log_fields", default=MappingProxyType({})
)
"""Fields every entry the request being served causes carries (``request_id``, ``user_token_fingerprint``).

Set once per request, in the request's own task (aiohttp runs each request in a
task with a copy of the context, so the value ends with it): one variable read
per entry, where structlog's ``merge_contextvars`` copies the whole context and
looks at every variable in it. A field given to the log call wins.
"""


def merge_request_fields(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The structlog processor adding ``request_log_fields`` to an entry."""
    for key, value in request_log_fields.get().items():
        event_dict.setdefault(key, value)
    return event_dict


class SecretRedactor:
    """A structlog processor that hides secrets by key name and by value.

    Known secrets (the admin token, registered passwords) are searched for in
    every string of the event; so are the tokens of the current request.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        """Replaced whole on a change, never changed in place: an entry being cleaned (in another thread, say)
        goes on iterating the set it took."""
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= _MIN_SECRET_LENGTH and secret not in self._secrets:
            self._secrets = self._secrets | {secret}

    def discard(self, secret: str | None) -> None:
        if secret in self._secrets:
            self._secrets = self._secrets - {secret}

    def __call__(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        secrets = self._secrets
        # The request's own tokens are searched for beside the known secrets, not joined to them: no set
        # made per request and none kept between entries.
        tokens = request_secrets.get()
        for key, value in event_dict.items():  # values are replaced in place: the keys stay as they are
            kind = _FIELD_KINDS.get(key) if key.__class__ is str else _FREE_TEXT
            if kind is None:
                kind = _field_kind(key)
            if kind is _FREE_TEXT and value.__class__ is str and key.__class__ is str:  # what _clean would do
                event_dict[key] = self._clean_text(value, secrets, tokens)
                continue
            if kind is _WRITTEN_BY_THE_GATEWAY or value is None or value.__class__ in _PLAIN_VALUE_TYPES:
                if kind is not _NAMES_A_SECRET:
                    continue
            event_dict[key] = self._clean(key, value, secrets, tokens)
        return event_dict

    def redact_text(self, text: str) -> str:
        """Hide known secrets in a free text (used for messages answered to clients too)."""
        return self._clean_text(text, self._secrets, ())

    def _clean(self, key: Any, value: Any, secrets: set[str], tokens: tuple[str, ...]) -> Any:
        if isinstance(key, str) and _names_a_secret(key):
            return REDACTED if value not in (None, "") else value
        if isinstance(value, str):
            return self._clean_text(value, secrets, tokens)
        if isinstance(value, dict):
            return {k: self._clean(k, v, secrets, tokens) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._clean(None, item, secrets, tokens) for item in value]
        return value

    @staticmethod
    def _clean_text(text: str, secrets: set[str], tokens: tuple[str, ...]) -> str:
        for token in tokens:
            if len(token) >= _MIN_SECRET_LENGTH and token in text:
                text = text.replace(token, REDACTED)
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        # Most texts (names, paths) hold neither spelling: a substring test is several times cheaper than the
        # pattern. casefold, not lower: the pattern ignores case the Unicode way ("paſsword" matches it too).
        if "://" not in text and "password" not in text.casefold():
            return text
        return _INLINE_PASSWORD.sub(_hide_inline_password, text)


@functools.lru_cache(maxsize=4096)
def _names_a_secret(key: str) -> bool:
    # Events reuse a few dozen field names: classify each once, not on every log line.
    return bool(_SECRET_KEY_PATTERN.search(key)) and not key.endswith("fingerprint")


_WRITTEN_BY_THE_GATEWAY = "written by the gateway"
_NAMES_A_SECRET = "names a secret"
_FREE_TEXT = "free text"
_GATEWAY_FIELDS = frozenset({"timestamp", "level", "event", "pid", "instance", "request_id"})
"""Fields whose values the gateway makes itself (processors, event names, sanitised ids): nothing to redact."""
_PLAIN_VALUE_TYPES = frozenset({int, float, bool})


_FIELD_KINDS: dict[str, str] = {}
"""``_field_kind`` of each field name seen so far: events reuse a few dozen names (a dictionary, read per field)."""
_MAX_FIELD_KINDS = 4096


def _field_kind(key: str) -> str:
    """How the redactor treats a field: skipped (the gateway wrote it: a timestamp, a fingerprint), hidden
    whole (its name says it holds a secret), or searched (anything a request or a database could put text in)."""
    if key in _GATEWAY_FIELDS or key.endswith("fingerprint"):
        kind = _WRITTEN_BY_THE_GATEWAY
    else:
        kind = _NAMES_A_SECRET if _names_a_secret(key) else _FREE_TEXT
    if len(_FIELD_KINDS) < _MAX_FIELD_KINDS:
        _FIELD_KINDS[key] = kind
    return kind


def _hide_inline_password(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return match.group(1) + REDACTED
    return match.group(3) + REDACTED + match.group(5)


class LineSink(Protocol):
    """Somewhere else a logger's rendered lines go (the audit file)."""

    def write_line(self, line: str) -> None: ...


class _RingAndStreamSink:
    """The structlog "logger": writes each rendered line to the ring, an optional extra sink and a stream.

    The ring and the extra sink get each line at once; the stream gets the lines
    of one turn of the event loop together (``gateway.observability.log_stream``).
    """

    def __init__(self, ring: LogRing, stream: TextIO, extra: LineSink | None) -> None:
        self._ring = ring
        self._stream = held_lines_for(stream)
        self._extra = extra

    def _write(self, level: LogLevel, line: str, timestamp: str, event: str, shown: str | None = None) -> None:
        self._ring.append(level, line, timestamp=timestamp, event=event)
        if self._extra is not None:
            self._extra.write_line(line)
        self._stream.write((line if shown is None else shown) + "\n")

    def write_info(self, line: str, timestamp: str, event: str) -> None:
        """An info line rendered elsewhere (``FixedEventLogger``)."""
        self._write(LogLevel.INFO, line, timestamp, event)

    def debug(self, line: str, **meta: str) -> None:
        self._write(LogLevel.DEBUG, line, **meta)

    def info(self, line: str, **meta: str) -> None:
        self._write(LogLevel.INFO, line, **meta)

    def warning(self, line: str, **meta: str) -> None:
        self._write(LogLevel.WARNING, line, **meta)

    def error(self, line: str, **meta: str) -> None:
        self._write(LogLevel.ERROR, line, **meta)

    critical = exception = fatal = error
    warn = warning
    msg = info


_second_prefix: list[Any] = [None, ""]
"""The whole second last formatted, and its text: a log line's timestamp formats its second once, not per line."""


def utc_timestamp() -> str:
    """Now in ISO 8601, UTC, always with microseconds (``2026-11-21T23:43:37.000000Z``): sortable as text."""
    now = time.time()
    second = int(now)
    if second != _second_prefix[0]:
        _second_prefix[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _second_prefix[0] = second
    return f"{_second_prefix[1]}.{int((now - second) * 1_000_000):06d}Z"


def _add_timestamp(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    event_dict["timestamp"] = utc_timestamp()
    return event_dict


_process_id = [os.getpid()]
"""This process's id, read again in a forked child (a worker logs its own), not by a system call per entry."""
os.register_at_fork(after_in_child=lambda: _process_id.__setitem__(0, os.getpid()))


class _AddOrigin:
    """Adds the process id and the instance name."""

    def __init__(self, instance: str) -> None:
        self._instance = instance

    def __call__(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        event_dict["pid"] = _process_id[0]
        event_dict["instance"] = self._instance
        return event_dict


def _render_json(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> tuple[tuple[str], dict[str, str]]:
    line = orjson.dumps(event_dict, default=repr).decode()
    return (line,), {"timestamp": event_dict["timestamp"], "event": str(event_dict.get("event", ""))}


class _RenderBoth:
    """JSON for the ring and the audit file (readers parse it), and a line for people on the stream."""

    def __init__(self, colors: bool) -> None:
        self._console = structlog.dev.ConsoleRenderer(colors=colors, sort_keys=False)

    def __call__(
        self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
    ) -> tuple[tuple[str], dict[str, str]]:
        (line,), meta = _render_json(logger, method_name, event_dict)
        shown = dict(event_dict)
        shown.pop("instance", None)  # the same on every line of one console
        meta["shown"] = self._console(logger, method_name, shown)
        return (line,), meta


class FixedEventLogger:
    """Writes the gateway's own per-request events (the access line, the audit entry) at info.

    The entry is the one structlog's chain of ``make_loggers`` writes for the same
    call (bound context, ``level``, ``timestamp``, ``pid``, ``instance``, redaction,
    JSON), built in one function rather than through seven processors: these
    events come with every request, so their cost is the gateway's cost. On a
    console (people reading) it hands the event to structlog, whose rendering it
    does not repeat.
    """

    def __init__(
        self,
        logger: structlog.typing.FilteringBoundLogger,
        sink: _RingAndStreamSink,
        redactor: SecretRedactor,
        *,
        level: LogLevel,
        instance: str,
        console: bool,
    ) -> None:
        self._logger = logger
        self._sink = sink
        self._redactor = redactor
        self._enabled = level <= LogLevel.INFO
        self._instance = instance
        self._console = console

    def info(self, event: str, **fields: Any) -> None:
        """Log ``event`` with ``fields`` at info, as ``logger.info(event, **fields)`` would."""
        if not self._enabled:
            return
        if self._console:
            self._logger.info(event, **fields)
            return
        fields["event"] = event
        merge_request_fields(None, "info", fields)
        fields["level"] = "info"
        timestamp = fields["timestamp"] = utc_timestamp()
        fields["pid"] = _process_id[0]
        fields["instance"] = self._instance
        self._redactor(None, "info", fields)
        (line,), _ = _render_json(None, "info", fields)
        self._sink.write_info(line, timestamp, event)


@attrs.frozen
class Loggers:
    """The two ways one app writes to one log: structlog for every event, and the fast path for per-request ones."""

    structured: structlog.typing.FilteringBoundLogger
    """The structlog logger: any event, any level."""
    fixed: FixedEventLogger
    """The same output, for the events every request writes."""


LOGGER = web.AppKey("logger", structlog.typing.FilteringBoundLogger)
"""Where the app keeps its ``Loggers.structured``: re-exported by ``gateway.web.keys``, read by ``library_logs``."""


def make_loggers(
    ring: LogRing,
    redactor: SecretRedactor,
    *,
    level: LogLevel = LogLevel.INFO,
    stream: TextIO | None = None,
    instance: str = "",
    extra_sink: LineSink | None = None,
    console: bool = False,
) -> Loggers:
    """Loggers writing JSON lines (``timestamp``, ``level``, ``event``, ``pid``, ``instance``) to stderr and ``ring``.

    ``extra_sink`` also gets every line they write (the audit logger's file). With
    ``console`` the stream gets structlog's console rendering instead (level, event, key=value;
    coloured on a terminal); the ring and ``extra_sink`` keep JSON.
    """
    stream = stream if stream is not None else sys.stderr
    processors: list[Any] = [
        merge_request_fields,
        structlog.processors.add_log_level,
        _add_timestamp,
        _AddOrigin(instance),
        structlog.processors.format_exc_info,
        redactor,
        _RenderBoth(colors=_is_terminal(stream)) if console else _render_json,
    ]
    sink = _RingAndStreamSink(ring, stream, extra_sink)
    # Built directly, not through structlog.wrap_logger: its lazy proxy binds a new logger on every call.
    # (structlog types the class as its protocol, which declares no constructor.)
    bound_logger_class: Any = structlog.make_filtering_bound_logger(int(level))
    logger: structlog.typing.FilteringBoundLogger = bound_logger_class(sink, processors=processors, context={})
    fixed = FixedEventLogger(logger, sink, redactor, level=level, instance=instance, console=console)
    return Loggers(structured=logger, fixed=fixed)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def wants_console(log_format: str, stream: TextIO | None) -> bool:
    """Whether ``log_format`` (auto, json, console) renders for people on ``stream`` (stderr when None)."""
    if log_format == "auto":
        return _is_terminal(stream if stream is not None else sys.stderr)
    return log_format == "console"
