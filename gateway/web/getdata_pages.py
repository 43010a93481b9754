"""GetData past ``row_limit``: the first answer holds the rest of its result, a continuation reads the next page.

A first answer that the row limit cut, in JSON or NDJSON, on a pool that
``holds_results``, holds the rest of the result (``QueryResult.hold``) and
carries the token of the next page (``next`` in the body, ``X-Continuation``
when sent whole); ``gateway.databases.continuations`` keeps it. GetData with
``continuation`` (and the same query) takes it back, checks the grants again
(a table the token lost: 403, the result closed), and answers the next
``row_limit`` rows from the same cursor, held again while more remain. A page
that fails, is cut off or whose client leaves closes the result; so does its
last page.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from gateway.contract.driver_protocol import CheckedQuery, DatabasePool, NarrowedGrant, QueryResult, TableRef
from gateway.databases.continuations import FAILED, REVOKED, Continuation, Continuations, HeldElsewhere
from gateway.errors import AccessDenied, BadRequest
from gateway.observability.getdata_tally import GetDataTally
from gateway.results.result_formats import ResultFormat
from gateway.web.getdata_body import answer
from gateway.web.getdata_forward import forward
from gateway.web.keys import CONFIG, CONTINUATIONS, LOGGER, REQUEST_CONTEXT, TOKEN_QUERIES


class _FirstPage:
    """The ``Holding`` of a first answer: registers the held result when the row limit cut it."""

    def __init__(self, continuations: Continuations, token_hash: str, database: str, query: str, checked: CheckedQuery,
                 narrowing: Mapping[TableRef, NarrowedGrant]):
        self._continuations = continuations
        self._opening = (token_hash, database, query, checked)
        self._narrowing = _read_by(checked, narrowing)
        self.entry: Continuation | None = None

    def __call__(self, result: QueryResult) -> str | None:
        if not self._continuations.has_room(self._opening[1]):
            return None  # a bound reached: the answer is cut without a token, as before continuations
        hold = getattr(result, "hold", None)
        held = hold() if hold is not None else None
        if held is None:
            return None
        self.entry = self._continuations.open(*self._opening, held, self._narrowing)
        return self._continuations.token(self.entry, self.entry.page)


class _NextPage:
    """The ``Holding`` of a next page: holds the result again when this page too was cut."""

    def __init__(self, continuations: Continuations, entry: Continuation) -> None:
        self._continuations = continuations
        self._entry = entry
        self.held_again = False

    def __call__(self, result: QueryResult) -> str | None:
        hold = getattr(result, "hold", None)
        if hold is None or hold() is None:
            return None
        self.held_again = True
        return self._continuations.token(self._entry, self._entry.page + 1)


def _read_by(checked: CheckedQuery, narrowing: Mapping[TableRef, NarrowedGrant]) -> dict[TableRef, NarrowedGrant]:
    """The narrowed grants of the relations the query reads."""
    return {ref: grant for ref, grant in narrowing.items() if ref in checked.relations}


async def first_page(
    request: web.Request,
    pool: DatabasePool,
    checked: CheckedQuery,
    tally: GetDataTally,
    result_format: ResultFormat,
    key: tuple[str, str],
    query: str,
    values: Mapping[str, Any],
    narrowing: Mapping[TableRef, NarrowedGrant],
) -> web.StreamResponse:
    """A query's first answer; its rest held when the row limit cut it and the pool can hold it.

    ``values`` are the keyword arguments of ``run_query`` beside the checked query (its parameter values, when
    the request sent some); ``narrowing`` the token's narrowed grants, which its next pages must still have.
    """
    continuations = request.app[CONTINUATIONS]
    if not (getattr(pool, "holds_results", False) and result_format.ends_with_counts and continuations.limit > 0):
        return await answer(request, pool.run_query(checked, **values), tally, result_format)
    holding = _FirstPage(continuations, key[0], key[1], query, checked, narrowing)
    running = pool.run_query(checked, hold_seconds=continuations.expiry_seconds, **values)  # type: ignore[call-arg]
    try:
        response = await answer(request, running, tally, result_format, holding)
    except BaseException:
        if holding.entry is not None:
            await continuations.close(holding.entry, FAILED)
        raise
    if holding.entry is not None:
        if tally.late_error is not None or tally.stalled:
            await continuations.close(holding.entry, FAILED)
        else:
            continuations.idle(holding.entry)
    return response


async def next_page(
    request: web.Request,
    continuation: str,
    tally: GetDataTally,
    result_format: ResultFormat,
    key: tuple[str, str],
    query: str,
    now: datetime.datetime,
    narrowing: Mapping[TableRef, NarrowedGrant],
) -> web.StreamResponse:
    """The page a continuation token names: the next ``row_limit`` rows of its held result.

    Its grants are checked again as of ``now``: every relation the query reads still granted, and granted no
    narrower or wider than when the result was opened (``narrowing``, the token's narrowed grants now).
    """
    if not result_format.ends_with_counts:
        raise BadRequest(
            f"a continuation is read as json or ndjson, whose answers can carry the next token; "
            f"{result_format.name} cannot"
        )
    app = request.app
    continuations = app[CONTINUATIONS]
    token_hash, database = key
    try:
        entry = continuations.take(continuation, token_hash, database, query)  # 400 or 410
    except HeldElsewhere as elsewhere:  # workers > 1: the sibling that holds it answers
        return await forward(request, elsewhere.pid)
    tally.checked = entry.checked
    state = request[REQUEST_CONTEXT].registry
    # Grants are checked again on every page: a token that lost a table the query reads reads no further.
    if (
        database not in state.databases
        or not entry.checked.relations <= state.granted_refs(token_hash, database, now)
        or _read_by(entry.checked, narrowing) != entry.narrowing
    ):
        await continuations.close(entry, REVOKED)
        app[LOGGER].info("continuation_closed", reason="grant_revoked")
        raise AccessDenied("access denied: this token no longer has every table the query reads granted as it was")
    holding = _NextPage(continuations, entry)
    try:
        with app[TOKEN_QUERIES].lingering_counted(key):
            running = entry.held.next_page(app[CONFIG].row_limit)
            response = await answer(request, running, tally, result_format, holding)
    except BaseException:
        await continuations.close(entry, FAILED)
        raise
    if tally.late_error is not None or tally.stalled:
        await continuations.close(entry, FAILED)
    elif holding.held_again:
        entry.page += 1
        continuations.idle(entry)
    else:
        continuations.ended(entry)
    return response
