"""With ``workers`` > 1: each worker serves its log ring to its siblings, so ``GET /Logs/`` shows them all.

The supervisor makes a private runtime folder (mode 0700, in the system's
temporary folder: a socket path must stay under 108 bytes, which a data folder
need not) before it forks, and removes it when it exits; when it was killed,
the last worker to stop removes it. Each worker listens there on ``<pid>.sock``; the
worker that answers ``GET /Logs/`` asks every other socket in the folder for
the entries the query wants (each already filtered and cut to ``limit``),
waits at most ``LOG_GATHER_SECONDS`` for all of them together, and merges them
with its own in time order. A sibling that is gone or too slow is left out and
named in a ``logs_incomplete`` warning, which the answer then carries; the
answer keeps the contract's shape.

Protocol, one exchange per connection: the asker sends the ``LogQuery`` as one
JSON line; the worker answers a JSON array of ``[timestamp, line]`` pairs and
closes.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import heapq
import os
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import orjson
from aiohttp import web

from gateway.observability.log_bounds import utf8_size
from gateway.observability.log_ring import LogLevel, LogQuery, LogRing, TimedLine

LOG_GATHER_SECONDS = 2.0
"""How long ``GET /Logs/`` waits for its siblings' entries, all of them together."""

SOCKET_SUFFIX = ".sock"


class LogSiblings:
    """The other workers of this gateway, reached through the runtime folder."""

    def __init__(self, folder: Path, own_pid: int) -> None:
        self.folder = folder
        self.own_pid = own_pid

    def socket_path(self, pid: int) -> Path:
        return self.folder / f"{pid}{SOCKET_SUFFIX}"

    def pids(self) -> list[int]:
        """Workers with a socket in the folder now, this one excepted."""
        found = []
        for path in self.folder.glob(f"*{SOCKET_SUFFIX}"):
            stem = path.name.removesuffix(SOCKET_SUFFIX)
            if stem.isdigit() and int(stem) != self.own_pid:
                found.append(int(stem))
        return sorted(found)

    async def gather(self, query: LogQuery) -> tuple[list[list[TimedLine]], dict[int, str]]:
        """Every sibling's entries for ``query``, and the siblings left out with the reason."""
        pids = self.pids()
        tasks = [asyncio.ensure_future(self._ask(pid, query)) for pid in pids]
        if tasks:
            await asyncio.wait(tasks, timeout=LOG_GATHER_SECONDS)
        found: list[list[TimedLine]] = []
        missing: dict[int, str] = {}
        for pid, task in zip(pids, tasks, strict=True):
            if not task.done():
                task.cancel()
                missing[pid] = f"no answer within {LOG_GATHER_SECONDS:g} s"
            elif task.exception() is not None:
                missing[pid] = f"unreachable ({type(task.exception()).__name__})"
            else:
                found.append(task.result())
        return found, missing

    async def _ask(self, pid: int, query: LogQuery) -> list[TimedLine]:
        reader, writer = await asyncio.open_unix_connection(self.socket_path(pid))
        try:
            writer.write(orjson.dumps({"minimum": int(query.minimum), "limit": query.limit, "event": query.event}) + b"\n")
            await writer.drain()
            return [(timestamp, line) for timestamp, line in orjson.loads(await reader.read())]
        finally:
            writer.close()


LOG_SIBLINGS = web.AppKey("log_siblings", LogSiblings)
"""Set only in a worker of ``workers`` > 1 (re-exported by ``gateway.web.keys``)."""


def share_logs(app: web.Application, ring: LogRing, folder: Path) -> None:
    """Make this worker's ``ring`` readable by its siblings and theirs by it, while ``app`` runs."""
    siblings = LogSiblings(folder, os.getpid())
    app[LOG_SIBLINGS] = siblings
    parent = os.getppid()

    async def serve_ring(_: web.Application) -> AsyncIterator[None]:
        path = siblings.socket_path(siblings.own_pid)
        server = await asyncio.start_unix_server(lambda r, w: _answer(ring, r, w), path=path)
        try:
            yield
        finally:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            if os.getppid() != parent:
                # The supervisor died (it removes the folder otherwise): the last worker out removes it.
                with contextlib.suppress(OSError):
                    folder.rmdir()

    app.cleanup_ctx.append(serve_ring)


async def _answer(ring: LogRing, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        async with asyncio.timeout(LOG_GATHER_SECONDS):
            asked = orjson.loads(await reader.readline())
        query = LogQuery(minimum=LogLevel(asked["minimum"]), limit=asked["limit"], event=asked["event"])
        writer.write(orjson.dumps(ring.read(query)))
        await writer.drain()
    except (TimeoutError, orjson.JSONDecodeError, KeyError, ValueError, TypeError, OSError):
        pass  # a confused or vanished asker gets nothing; it says so in its own answer
    finally:
        writer.close()


def merge_newest(parts: Iterable[list[TimedLine]], most: int, most_bytes: int | None = None) -> list[TimedLine]:
    """The newest entries of several time-ordered lists, oldest first: at most ``most`` of them, and at most
    ``most_bytes`` bytes of lines (each worker's ring holds that much; the merged answer no more than one)."""
    newest = collections.deque(heapq.merge(*parts), maxlen=most)
    if most_bytes is None:
        return list(newest)
    kept: list[TimedLine] = []
    total = 0
    for entry in reversed(newest):
        total += utf8_size(entry[1])
        if total > most_bytes:
            break
        kept.append(entry)
    kept.reverse()
    return kept
