"""aiohttp's and asyncio's own log records, written through the gateway's structlog chain.

Both libraries log through the standard ``logging`` module: an exception in
aiohttp's connection handling, a task that failed with nobody awaiting it. Left
alone, such a record went to Python's last-resort handler: a bare traceback on
stderr that was not JSON, not redacted and not in ``/Logs/``. While an app
serves, a handler on the ``aiohttp`` and ``asyncio`` loggers hands every record
that reaches it (warning and above with the standard levels; the gateway does
not lower the libraries' own levels) to the app's logger as one
``library_log`` event with ``logger`` (the library's logger name), ``message``
and, for a record with an exception, ``exception`` (the formatted traceback),
each within the bounds of ``gateway.observability.log_bounds``.
It then goes through the same redaction and to the same places as every event.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from gateway.observability.log_bounds import LIBRARY_MESSAGE_CHARS, shortened, shortened_traceback
from gateway.observability.logbook import LOGGER

LIBRARY_LOGGERS = ("aiohttp", "asyncio")
"""The standard-library loggers whose records join the gateway's log."""


class LibraryLogBridge(logging.Handler):
    """A ``logging.Handler`` that writes each record as a ``library_log`` event of a structlog logger."""

    def __init__(self, logger: structlog.typing.FilteringBoundLogger) -> None:
        super().__init__(level=logging.NOTSET)
        self._logger = logger

    def emit(self, record: logging.LogRecord) -> None:
        try:
            # Bounded: aiohttp's record of a malformed request quotes the request's bytes (25 KB of log for a
            # 5 KB request, from anyone who reaches the port).
            message, _ = shortened(record.getMessage(), LIBRARY_MESSAGE_CHARS)
            fields = {"logger": record.name, "message": message}
            if record.exc_info and record.exc_info[0] is not None:
                fields["exception"] = shortened_traceback(logging.Formatter().formatException(record.exc_info))
            self._logger.log(_level_of(record), "library_log", **fields)
        except Exception:  # a log handler must never raise into the code that logged
            self.handleError(record)


def _level_of(record: logging.LogRecord) -> int:
    # The gateway knows debug, info, warning and error: a custom level counts as the standard one
    # below it, CRITICAL as error.
    return max(logging.DEBUG, min(logging.ERROR, record.levelno // 10 * 10))


async def library_logs(app: web.Application) -> AsyncIterator[None]:
    """``cleanup_ctx``: the libraries' records go to this app's log while it runs."""
    bridge = LibraryLogBridge(app[LOGGER])
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).addHandler(bridge)
    try:
        yield
    finally:
        for name in LIBRARY_LOGGERS:
            logging.getLogger(name).removeHandler(bridge)
