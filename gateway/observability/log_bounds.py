"""How much of what a request sends may reach the logs, and how much the in-memory log may hold.

Anyone who reaches the port can make the gateway log something: a refused
GetData was audited with its whole query text (up to ``max_query_bytes``), and
aiohttp's record of a malformed request quotes the malformed bytes. Issue 20
filled the ``/Logs/`` buffer that way without any valid token: 11 000 refused
GetData took a gateway from 75 MB to 771 MB, and 800 of them made ``/Logs/``
answer 76 MiB. Two bounds hold that:

- **Per entry**, for what a request chooses: the query text of a GetData whose
  token has no grant in that database (or which came without a token) keeps
  its first ``UNAUTHORISED_QUERY_CHARS`` characters, the ``request`` line's
  path its first ``LOGGED_PATH_CHARS``, a library record's message and
  traceback their first ``LIBRARY_MESSAGE_CHARS`` / ``LIBRARY_EXCEPTION_CHARS``.
  Each shortened field says how long it was. A token holder's refused or
  accepted query is kept whole: the holder is known and accountable, and the
  audit trail is what it is for.
- **For the whole buffer**, whoever wrote the entries: ``log_buffer_bytes``
  (``LogRing``), besides ``log_buffer_size`` entries. The oldest entries go
  first; an entry larger than the whole buffer is kept as a short stub naming
  its size (stderr and the audit file still get it whole).

Sizes are counted in characters for fields (a JSON line writes one character in
at most six bytes, ``\\u0001``) and in UTF-8 bytes for the buffer.
"""

from __future__ import annotations

from typing import Any

import orjson

LOGGED_PATH_CHARS = 256
"""The most of a request's path its ``request`` line carries (every route the gateway serves is far shorter)."""

UNAUTHORISED_QUERY_CHARS = 1024
"""The most of a query text an audit entry keeps when the request was refused before its token was known to have
a grant in that database (401 ``token_required``, 403 ``access_denied``)."""

LIBRARY_MESSAGE_CHARS = 1024
"""The most of an aiohttp or asyncio record's message a ``library_log`` entry carries."""

LIBRARY_EXCEPTION_CHARS = 4096
"""The most of a ``library_log`` entry's traceback: its head and its last lines, where the error is named."""


def shortened(text: str, limit: int) -> tuple[str, int | None]:
    """``(text, None)`` when it has at most ``limit`` characters, else ``(its first limit, its length)``."""
    if len(text) <= limit:
        return text, None
    return text[:limit], len(text)


def shortened_path(path: str) -> str:
    """A path for the ``request`` line: itself, or its head and how long it was."""
    head, length = shortened(path, LOGGED_PATH_CHARS)
    return head if length is None else f"{head}...[{length} characters]"


def shortened_traceback(text: str) -> str:
    """A traceback for a ``library_log`` entry: itself, or its head and its end (the error's own lines)."""
    if len(text) <= LIBRARY_EXCEPTION_CHARS:
        return text
    head = LIBRARY_EXCEPTION_CHARS // 4
    tail = LIBRARY_EXCEPTION_CHARS - head
    return f"{text[:head]}\n...[{len(text) - head - tail} of {len(text)} characters left out]...\n{text[-tail:]}"


def utf8_size(line: str) -> int:
    """The bytes ``line`` takes in UTF-8; a JSON line is almost always ASCII, measured without encoding it."""
    return len(line) if line.isascii() else len(line.encode())


def stub_line(timestamp: str, level: str, event: str, size: int, limit: int) -> str:
    """What the buffer keeps of an entry larger than the whole buffer: when, what, and how large it was."""
    fields: dict[str, Any] = {
        "timestamp": timestamp,
        "level": level,
        "event": event,
        "entry_bytes": size,
        "note": f"this entry is larger than log_buffer_bytes ({limit}); stderr has it whole",
    }
    return orjson.dumps(fields).decode()
