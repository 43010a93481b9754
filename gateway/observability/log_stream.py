"""Log lines to a stream (stderr): the lines of one turn of the event loop in one write.

Every request writes two lines (its ``request`` line and, for GetData, its
``audit`` entry), through two loggers, and a ``write`` per line cost about 3 µs
of a point lookup's CPU. Held back until the turn's callbacks have run, the
lines of the turn (of several requests, of both loggers) go out together.

A pipe that several workers share (stderr under systemd or Docker) must never
see one worker's line split by another's: the kernel keeps a write of at most
``ATOMIC_WRITE_BYTES`` whole, so the held lines go out in pieces no larger,
cut at line ends, and a longer line alone, as it always did. Outside a running
event loop (start-up, the supervisor, a timer's thread, after the loop closed)
a line is written at once with any held before it. What is held when the
process exits is written at exit (``flush_held_lines``, also called before
``os._exit``); a forked worker forgets what its parent held (the parent writes
it).
"""

from __future__ import annotations

import asyncio
import atexit
import io
import os
import threading
import weakref
from collections.abc import Iterable
from typing import TextIO

ATOMIC_WRITE_BYTES = 4096
"""PIPE_BUF on Linux: a write this size or smaller into a pipe is never interleaved with another process's."""


class HeldLines:
    """The lines waiting for one stream's next write."""

    __slots__ = ("_stream", "_lines", "_lock", "__weakref__")

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lines: list[str] = []
        # Other threads log too (the shutdown deadline's timer, the registry's reload): a line appended while
        # another thread takes the list to write it must be in that list or the next, never lost. Reentrant:
        # the supervisor's signal handlers log, and may interrupt a line being held or written.
        self._lock = threading.RLock()

    def write(self, line: str) -> None:
        """Write ``line`` (which ends with a newline) once the event loop's turn ends; now if no loop runs."""
        with self._lock:
            lines = self._lines
            lines.append(line)
            first = len(lines) == 1
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop runs in this thread: now, with what is held (a closed loop's too)
            self.flush()
            return
        if first:  # else a write is scheduled already, and takes this line too
            loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write the lines held back, in order."""
        with self._lock:
            lines, self._lines = self._lines, []
        if not lines:
            return
        try:
            for piece in _atomic_pieces(lines):
                self._stream.write(piece)
                self._stream.flush()  # one write per piece, whatever buffering the stream has
        except (OSError, ValueError):
            pass  # a closed stderr must not break request handling; the ring still has the line

    def forget(self) -> None:
        """Drop what is held (in a forked child: the parent writes it), and the lock, which a thread of the
        parent may have held when it forked."""
        self._lines = []
        self._lock = threading.RLock()


def _atomic_pieces(lines: list[str]) -> Iterable[str]:
    """``lines`` joined into pieces of at most ``ATOMIC_WRITE_BYTES`` bytes of UTF-8, each ending at a line
    end; a longer line is a piece of its own."""
    piece: list[str] = []
    size = 0
    for line in lines:
        line_bytes = len(line) if line.isascii() else len(line.encode())
        if piece and size + line_bytes > ATOMIC_WRITE_BYTES:
            yield "".join(piece)
            piece, size = [], 0
        piece.append(line)
        size += line_bytes
    if piece:
        yield "".join(piece)


_held_by_stream: weakref.WeakValueDictionary[int, HeldLines] = weakref.WeakValueDictionary()
"""One ``HeldLines`` per stream (by identity) while a logger uses it: every logger writing to stderr shares one."""


def held_lines_for(stream: TextIO) -> HeldLines:
    """The ``HeldLines`` of ``stream``, made on first use; the caller keeps it alive.

    While it lives it holds ``stream``, so no other stream can have that id meanwhile.
    """
    held = _held_by_stream.get(id(stream))
    if held is None:
        held = _held_by_stream[id(stream)] = HeldLines(stream)
    return held


@atexit.register
def flush_held_lines() -> None:
    """Write every line held back for any stream (at exit; call it before ``os._exit``)."""
    for held in list(_held_by_stream.values()):
        held.flush()


def _forget_held_lines() -> None:
    for held in list(_held_by_stream.values()):
        held.forget()


os.register_at_fork(after_in_child=_forget_held_lines)


class CapturedLog(io.StringIO):
    """A stream to give ``create_app`` in tests: what it holds, read with ``getvalue``, includes the lines held back."""

    def getvalue(self) -> str:
        held = _held_by_stream.get(id(self))
        if held is not None:
            held.flush()
        return super().getvalue()
