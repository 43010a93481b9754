"""Results held open past ``row_limit`` for their next pages, and the tokens that fetch them.

A GetData answer cut at ``row_limit`` on a driver that ``holds_results`` keeps
the rest of its result open (``driver_protocol.HeldResult``: for PostgreSQL the
connection, its REPEATABLE READ snapshot and the cursor) and carries a
continuation token; GetData's ``continuation`` input fetches the next page from
it. ``Continuations`` holds them:

- per token: each held result keeps one of its token's turns on its database
  (``TokenQueryLimiter``), so a token never holds more connections than
  ``token_query_limit``; a query of the token that finds its turns all taken,
  some by idle held results, closes the oldest idle one (``make_room``) instead
  of waiting, and that one's token answers 410 saying so;
- in all: at most ``continuation_limit`` held at once in the process, and at
  most half of ``pool_max_size`` (at least 1) per database, so idle held
  results of several tokens never take a whole pool from the others; a cut
  answer past either carries no token (it is cut, as without continuations);
- in time: one idle for ``continuation_expiry_seconds`` is closed by a timer;
  shutdown closes them all (the app's clean-up), a failed or abandoned page
  (the client went away) closes its own.

A token is base64url of (result id, page number, process id) and an
HMAC-SHA256 of those and the user token's hash, under ``TOKEN_KEY``, made at
import in the parent process, before ``workers`` fork, so every worker checks
every worker's tokens. A token whose MAC fails (altered, forged, or presented
with another user token) answers exactly as an unknown or closed result does:
410, naming no reason. Once the MAC holds, the answer may say why (read already,
expired, closed to make room), since only the token's own holder can see it.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import hashlib
import hmac
import os
import secrets
import struct
from collections.abc import Mapping
from typing import Any

import attrs

from gateway.contract.background import keep_running
from gateway.contract.driver_protocol import CheckedQuery, HeldResult, TableRef
from gateway.databases.token_queries import QueryKey, TokenQueryLimiter
from gateway.errors import BadRequest, ContinuationGone

TOKEN_KEY = secrets.token_bytes(32)
"""The tokens' HMAC key: new at each start, so a restart invalidates every token (their results are gone too)."""

_LAYOUT = struct.Struct(">16sIi")  # result id, page number, process id
_MAC_BYTES = 32
_TOKEN_BYTES = _LAYOUT.size + _MAC_BYTES
ENDED_REMEMBERED = 4096
"""Results closed lately whose reason a token still gets told (410 with the reason); older ones are unknown."""

UNKNOWN = "this continuation is unknown or no longer open; run the query again"
READ_ALREADY = "this page of the result was read already (a continuation token fetches its page once)"
EXPIRED = "this continuation expired (idle longer than continuation_expiry_seconds); run the query again"
MADE_ROOM = (
    "this continuation was closed to make room for another query of the same token on the database "
    "(its held results count against token_query_limit); run the query again"
)
SHUT_DOWN = "this continuation was closed when the gateway stopped; run the query again"
REVOKED = "this continuation was closed: its token lost a grant the query reads"
FAILED = "this continuation was closed when one of its pages failed or was not read to its end; run the query again"


class HeldElsewhere(Exception):
    """A real token (its MAC holds) of a result another worker process holds: forward the request there."""

    def __init__(self, pid: int) -> None:
        super().__init__(pid)
        self.pid = pid


@attrs.define(eq=False)
class Continuation:
    """One held result and what its next page is checked against."""

    result_id: bytes
    """Random: names the result in its tokens."""
    key: QueryKey
    """(token hash, database) whose turn it holds."""
    query_digest: bytes
    """SHA-256 of the query text: a next page's request must send the same query."""
    checked: CheckedQuery
    """The checked query: its relations are checked against the grants again on every page."""
    held: HeldResult
    """The driver's held result."""
    release_turn: Any
    """Gives its token's turn back (once)."""
    narrowing: Mapping[TableRef, Any] = attrs.field(factory=dict)
    """The token's narrowed grants of the relations the query reads, as at its first answer: a page is read only
    while they are the same (the held cursor was opened through that narrowing)."""
    page: int = 1
    """The page its current token fetches (the first answer is page 0)."""
    busy: bool = True
    """A page is being served: neither expiry nor ``make_room`` closes it."""
    timer: asyncio.TimerHandle | None = None
    """Its expiry, armed while idle."""


class Continuations:
    """The held results of this process, by result id."""

    def __init__(
        self, limiter: TokenQueryLimiter, *, limit: int, per_database: int, expiry_seconds: float, logger: Any
    ) -> None:
        self.limit = limit
        self.per_database = per_database
        self.expiry_seconds = expiry_seconds
        self._limiter = limiter
        self._logger = logger
        self._open: dict[bytes, Continuation] = {}
        self._ended: collections.OrderedDict[bytes, str] = collections.OrderedDict()
        self._pid = os.getpid()
        limiter.make_room = self.make_room

    @property
    def count(self) -> int:
        """Held results open now (a metric reads it)."""
        return len(self._open)

    def has_room(self, database: str) -> bool:
        """Whether one more result may be held, in all and on ``database``."""
        if len(self._open) >= self.limit:
            return False
        return sum(1 for entry in self._open.values() if entry.key[1] == database) < self.per_database

    def open(self, token_hash: str, database: str, query: str, checked: CheckedQuery, held: HeldResult,
             narrowing: Mapping[TableRef, Any] | None = None) -> Continuation:
        """Register a result just held, busy while its first answer is sent; it takes a turn of its token."""
        key = (token_hash, database)
        entry = Continuation(
            result_id=secrets.token_bytes(16),
            key=key,
            query_digest=hashlib.sha256(query.encode()).digest(),
            checked=checked,
            held=held,
            release_turn=self._limiter.held_turn(key),
            narrowing=dict(narrowing or {}),
        )
        self._open[entry.result_id] = entry
        return entry

    def token(self, entry: Continuation, page: int) -> str:
        """The token that fetches page ``page`` of ``entry`` (its first answer was page 0)."""
        payload = _LAYOUT.pack(entry.result_id, page, self._pid)
        return base64.urlsafe_b64encode(payload + _mac(payload, entry.key[0])).rstrip(b"=").decode()

    def take(self, text: str, token_hash: str, database: str, query: str) -> Continuation:
        """The held result a token names, marked busy; 400 for what is no token at all, else 410 ``UNKNOWN``."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (ValueError, TypeError):
            raw = b""
        if len(raw) != _TOKEN_BYTES:
            raise BadRequest("parameter 'continuation' is not a continuation token")
        payload, mac = raw[: _LAYOUT.size], raw[_LAYOUT.size :]
        if not hmac.compare_digest(mac, _mac(payload, token_hash)):
            raise ContinuationGone(UNKNOWN)  # altered, forged, or another token's: as unknown, no oracle
        result_id, page, pid = _LAYOUT.unpack(payload)
        if pid != self._pid:
            raise HeldElsewhere(pid)
        entry = self._open.get(result_id)
        if entry is None or entry.key != (token_hash, database):
            raise ContinuationGone(self._ended.get(result_id, UNKNOWN))
        if page != entry.page or entry.busy:
            raise ContinuationGone(READ_ALREADY)
        if not hmac.compare_digest(entry.query_digest, hashlib.sha256(query.encode()).digest()):
            raise BadRequest("parameter 'continuation' belongs to another query: send the query that began it")
        if entry.held.closed:  # its pool closed (the database changed or was unregistered)
            self._drop(entry, UNKNOWN)
            raise ContinuationGone(UNKNOWN)
        entry.busy = True
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None
        return entry

    def idle(self, entry: Continuation) -> None:
        """An answer of it was sent and the result held: idle until the token of ``entry.page`` comes, or expiry."""
        entry.busy = False
        entry.timer = asyncio.get_running_loop().call_later(self.expiry_seconds, self._expire, entry)

    def ended(self, entry: Continuation) -> None:
        """Its last page was sent: the driver closed it; its turn goes back."""
        self._drop(entry, READ_ALREADY)

    async def close(self, entry: Continuation, reason: str) -> None:
        """Close it now (its turn back at once, its connection once the driver gave it back)."""
        if self._drop(entry, reason):
            await asyncio.shield(keep_running(entry.held.close()))

    async def make_room(self, key: QueryKey) -> bool:
        """Close the oldest idle held result of ``key`` (a token that needs a turn); False when there is none."""
        for entry in self._open.values():  # in order of opening
            if entry.key == key and not entry.busy:
                self._logger.info("continuation_closed", reason="make_room")
                await self.close(entry, MADE_ROOM)
                return True
        return False

    async def close_all(self) -> None:
        """Shutdown: every held result closed."""
        entries = list(self._open.values())
        for entry in entries:
            self._drop(entry, SHUT_DOWN)
        await asyncio.gather(*(entry.held.close() for entry in entries), return_exceptions=True)

    def _expire(self, entry: Continuation) -> None:
        if not entry.busy and entry.result_id in self._open:
            self._logger.info("continuation_closed", reason="expired")
            keep_running(self.close(entry, EXPIRED))

    def _drop(self, entry: Continuation, reason: str) -> bool:
        """Forget it and give its turn back; False when it was gone already."""
        if self._open.pop(entry.result_id, None) is None:
            return False
        if entry.timer is not None:
            entry.timer.cancel()
        entry.release_turn()
        self._ended[entry.result_id] = reason
        while len(self._ended) > ENDED_REMEMBERED:
            self._ended.popitem(last=False)
        return True


def _mac(payload: bytes, token_hash: str) -> bytes:
    return hmac.new(TOKEN_KEY, payload + token_hash.encode(), hashlib.sha256).digest()
