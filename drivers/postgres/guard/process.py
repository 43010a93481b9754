"""Query texts too long for the guard cache, checked in a child process: their parse trees never enter the gateway's.

A 96 KiB text (``SELECT ARRAY[1,1,...]``) parses to 2.3 MB of JSON. In the
pool's guard thread, ``orjson.loads`` turned it into Python objects in one
call of 40-110 ms that holds the GIL, and the walk over those objects is
30-60 ms of Python that hands the GIL to the event loop only every 5 ms
(``sys.getswitchinterval``): the first time each long text was seen, every
other request of the process waited 20-60 ms (``dbgateway_event_loop_lag_seconds``,
docs/performance.md, "Issue 10"). pglast's parse and fingerprint release the
GIL; the rest cannot, and one ``orjson.loads`` call cannot be cut into slices.

So a pool sends texts longer than ``LONG_TEXT_CHARS`` (those the guard cache
does not keep anyway) to a child process of its own (``child.py``),
started when the first such text arrives. The child runs exactly what the
guard thread ran for such a text, ``read_as_only(check_query(sql, None,
policy), partitioned)``, with a policy it builds from the same catalog row and
operator options as the pool (``PolicySource``), and sends back only the
decision: the checked statement (its text, relations, functions, fingerprint)
or the refusal's message and reason. The grant check stays in the gateway, on
every query. The decisions of the last ``REMEMBERED_ANSWERS`` texts are kept,
so a repeated long text costs a dictionary look-up.

The exchange runs on the event loop through pipes (a few hundred microseconds
of pickling for 100 KiB), one text at a time, like the guard thread; a request
cancelled meanwhile does not cut it. If the child dies while it holds a text
(a crash of the parser, the kernel's OOM killer), that query is refused, never
guessed, and the next long text starts a new child. The child runs at a lower
CPU priority (``child.NICENESS``), so the scheduler lets the event loop go first.
"""

from __future__ import annotations

import asyncio
import collections
import pickle
import sys
from typing import Any

import attrs

from drivers.postgres.guard.cache import MAX_CACHED_QUERY_CHARS
from drivers.postgres.guard.child import LENGTH_BYTES, framed
from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.policy import GuardLimits, GuardPolicy
from drivers.postgres.guard.sql_guard import ParsedQuery, raise_refusal, values_kept
from gateway.contract.background import retrieve_outcome
from gateway.errors import QueryRejected, RefusalReason

LONG_TEXT_CHARS = MAX_CACHED_QUERY_CHARS
"""Longer texts are checked in the child; shorter ones by the guard cache, on the loop or in the guard thread."""

REMEMBERED_ANSWERS = 32
"""Decisions kept by (text, partitioned tables): at most a few MiB of text per pool."""

_CHILD_STOP_SECONDS = 5.0
"""How long a closing pool waits for its child to end after closing its input, before killing it."""


@attrs.frozen
class PolicySource:
    """What a pool builds its ``GuardPolicy`` from; the child builds the same policy from the same inputs."""

    catalog_row: tuple[Any, ...]
    """The one row ``catalog.CATALOG_SQL`` answered (seven JSON texts)."""
    allow: frozenset[str]
    """The operator's ``allow_functions``."""
    deny: frozenset[str]
    """The operator's ``deny_functions``."""
    limits: GuardLimits = GuardLimits()
    """The size and cost model's limits."""

    def build_policy(self) -> GuardPolicy:
        return GuardPolicy.from_catalog(
            Catalog.from_row(self.catalog_row), allow=self.allow, deny=self.deny, limits=self.limits
        )


class LongTextGuard:
    """One pool's child process for long texts, and the decisions it sent back lately."""

    def __init__(self, source: PolicySource) -> None:
        self._source = source
        self._child: asyncio.subprocess.Process | None = None
        self._exchanging = asyncio.Lock()
        self._closed = False
        self._answers: collections.OrderedDict[tuple[Any, ...], tuple[Any, ...]] = collections.OrderedDict()
        self.children_started = 0
        """How many child processes this guard started (for tests)."""
        self.remembered = 0
        """Queries answered from the decisions kept here, without the child (for tests)."""

    async def check(self, sql: str, partitioned: frozenset[tuple[str, str]],
                    granted: frozenset[tuple[str, str]] | None = None,
                    parameters: tuple[str | None, ...] = ()) -> ParsedQuery:
        """``read_as_only(check_query(sql, granted, policy), partitioned)``, as the guard thread answers it.

        The grant check of an accepted query is the caller's (``require_granted``); a refused one is checked
        against ``granted`` first (unless None), so a refusal never describes an ungranted table."""
        key = (sql, partitioned, parameters)
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
            self.remembered += 1
        else:
            # Shielded: a request cancelled while the child reads its text must not leave an answer unread.
            exchange = asyncio.ensure_future(self._exchange(sql, partitioned, parameters))
            exchange.add_done_callback(retrieve_outcome)  # a cancelled request leaves it unawaited
            answer = await asyncio.shield(exchange)
            if answer[0] != "failed" and values_kept(parameters):
                self._answers[key] = answer
                while len(self._answers) > REMEMBERED_ANSWERS:
                    self._answers.popitem(last=False)
        if answer[0] == "accepted":
            parsed: ParsedQuery = answer[1]
            return parsed
        if answer[0] == "refused":
            raise_refusal(answer[1], granted)
        raise RuntimeError(f"the SQL guard's child process failed: {answer[1]}")

    async def _exchange(self, sql: str, partitioned: frozenset[tuple[str, str]],
                        parameters: tuple[str | None, ...] = ()) -> tuple[Any, ...]:
        async with self._exchanging:
            if self._closed:
                raise RuntimeError("the pool is closed")
            child, first = self._child, False
            if child is None or child.returncode is not None:
                child, first = await self._start_child(), True
            assert child.stdin is not None and child.stdout is not None
            try:
                child.stdin.write(framed((sql, self._source if first else None, partitioned, parameters)))
                await child.stdin.drain()
                head = await child.stdout.readexactly(LENGTH_BYTES)
                body = await child.stdout.readexactly(int.from_bytes(head, "big"))
            except (asyncio.IncompleteReadError, ConnectionError) as error:
                # The child died with this text in its hands, perhaps because of it: refuse, never guess.
                self._child = None
                await self._stop(child)
                raise QueryRejected(
                    "the query could not be checked: the checker stopped while reading it", reason=RefusalReason.OTHER
                ) from error
            return _loads(body)

    async def _start_child(self) -> asyncio.subprocess.Process:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "drivers.postgres.guard.child",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        self.children_started += 1
        if self._closed:  # the pool closed while the child started
            await self._stop(child)
            raise RuntimeError("the pool is closed")
        self._child = child
        return child

    def child_pid(self) -> int | None:
        """The running child's process id, if one runs (for tests that stop it)."""
        child = self._child
        return child.pid if child is not None and child.returncode is None else None

    async def close(self) -> None:
        """End the child, if one runs: close its input, wait for it, kill it if it does not end.

        The child reads its input to the end: a text it holds meanwhile still gets its answer, unless the
        child takes longer than ``_CHILD_STOP_SECONDS`` (then it is killed and the text refused). Later
        texts fail, as the guard thread does after its shutdown.
        """
        self._closed = True
        child, self._child = self._child, None
        if child is not None:
            await self._stop(child)

    @staticmethod
    async def _stop(child: asyncio.subprocess.Process) -> None:
        if child.stdin is not None:
            child.stdin.close()
        try:
            await asyncio.wait_for(child.wait(), _CHILD_STOP_SECONDS)
        except asyncio.TimeoutError:
            child.kill()
            await child.wait()


def _loads(body: bytes) -> tuple[Any, ...]:
    # The child is the gateway's own process, started by it with its own code: its answers are trusted.
    answer: tuple[Any, ...] = pickle.loads(body)
    return answer
