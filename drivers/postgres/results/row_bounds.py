"""Memory bounded by bytes: the row-size check the database runs, and fetch sizes that follow the rows' sizes.

libpq receives a whole FETCH result before the gateway sees any row of it, so a
size check in Python comes too late: the bound has to come from the database.
The user's (already checked) SQL runs wrapped in ``bounded_sql``: a filter that
lets a row through only when its size (``pg_column_size`` of the whole row, and
for larger rows its text form too) is at most the cap read from the custom
setting ``dbgateway.row_cap``, and otherwise makes the database fail with an
invalid boolean input carrying ``ROW_TOO_LARGE_MARKER`` and the size, before the
row is sent. The runner sets
that cap in the same message as a FETCH whose cap changes (``FetchPlan``), so it can follow the
rows asked: about ``FETCH_BUDGET_BYTES`` per FETCH in all, and never more than
``max_row_bytes`` for one row. ``row_too_large`` turns the database's error back
into ``ResultTooLarge``.

``release_memory`` hands freed heap back to the operating system after an
answer that moved large batches (glibc keeps freed large arenas otherwise).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
from collections.abc import Callable

import attrs
import psycopg2

from gateway.contract.row_slices import rows_per_slice
from gateway.errors import ResultTooLarge

ROW_CAP_SETTING = "dbgateway.row_cap"
"""The custom setting the wrapper reads the row cap from; set with ``set_config(..., true)`` before a FETCH."""

ROW_TOO_LARGE_MARKER = "dbgateway_row_too_large"
"""The text the wrapper casts to boolean for a row over the cap; never valid boolean input."""

STORED_EXPANSION = 256
"""How many times its stored size a row's text form is assumed to reach at most: pglz (PostgreSQL's default
TOAST compression) shrinks data about 88 times at most, and the text of a type is at most about 3 times its
binary form (bytea's hex 2, smallint arrays 3.5). lz4 compression (up to about 250 times) of such types, or
bit strings (text 8 times the binary), can exceed it: docs/security.md, "Result memory"."""

FETCH_BUDGET_BYTES = 32 * 1024 * 1024
"""Bytes (by the row-size measure of ``bounded_sql``) one FETCH may bring at most: rows asked × its row cap."""

MIN_ROW_CAP_BYTES = 64 * 1024
"""The smallest cap a FETCH sets (so it asks at most FETCH_BUDGET_BYTES / this many rows): a row up to this
size is refused only by ``max_row_bytes``, whatever rows came before it."""

HEADROOM = 4
"""How much larger than the largest row seen so far a later row may be without being refused by the FETCH's cap."""

TRIM_AFTER_BYTES = 16 * 1024 * 1024
"""Bytes of rows an answer must have received before its end hands freed heap back to the OS."""

DISCARD_AFTER_ROW_BYTES = 8 * 1024 * 1024
"""A connection that received a row this large is closed, not pooled: libpq never shrinks its input buffer."""

_MARKER_RE = re.compile(re.escape(ROW_TOO_LARGE_MARKER) + r" (\d+) (\d+)")


def bounded_sql(sql: str) -> str:
    """``sql`` wrapped so that the database refuses a row over the current ``dbgateway.row_cap``.

    A row's size is the larger of its size in the database (``pg_column_size``
    of the whole row: compressed values count compressed) and its text form
    (``ROW(...)::text``, about what libpq receives). The text form is built only
    for rows whose stored size is over ``cap / STORED_EXPANSION``: a smaller one
    cannot reach the cap even decompressed and written as text (see the
    constant), and building the text costs about 1 µs a row.

    ``OFFSET 0`` keeps PostgreSQL from pulling the user's query up into the
    wrapper, which would evaluate each output expression twice (once for the
    size check); the subquery keeps its column names (duplicates too), types
    and order. The newline ends a trailing ``--`` comment of the query. The
    ``CASE`` branches run in order, so a row over the cap by its stored size is
    refused without building its text.
    """
    stored = "pg_column_size(dbgw_row.*)"
    text = "octet_length((dbgw_row.*)::text)"
    cap = f"current_setting('{ROW_CAP_SETTING}')::bigint"

    def refuse(size: str) -> str:
        return f"('{ROW_TOO_LARGE_MARKER} ' || {size} || ' ' || {cap})::boolean"

    return (
        f"SELECT dbgw_row.* FROM (SELECT * FROM (\n{sql}\n) AS dbgw_query OFFSET 0) AS dbgw_row"
        f" WHERE CASE WHEN {stored} <= {cap} / {STORED_EXPANSION} THEN true"
        f" WHEN {stored} > {cap} THEN {refuse(stored)}"
        f" WHEN {text} <= {cap} THEN true"
        f" ELSE {refuse(text)} END"
    )


def set_cap_sql(cap: int) -> str:
    """The statement that sets the row cap for the rest of the transaction (sent before a FETCH whose cap changes)."""
    return f"SELECT set_config('{ROW_CAP_SETTING}', '{int(cap)}', true)"


def row_too_large(exc: psycopg2.Error, max_row_bytes: int) -> ResultTooLarge | None:
    """The ``ResultTooLarge`` a database error stands for, or None if it is not the wrapper's refusal."""
    if exc.pgcode != "22P02":
        return None
    match = _MARKER_RE.search(str(getattr(exc.diag, "message_primary", None) or exc))
    if match is None:
        return None
    size, cap = int(match.group(1)), int(match.group(2))
    if cap >= max_row_bytes:
        return ResultTooLarge(
            f"a result row is {size} bytes, more than max_row_bytes ({max_row_bytes} bytes) allows;"
            " select fewer or smaller columns (e.g. substring() or length() of the large value)"
        )
    return ResultTooLarge(
        f"a result row is {size} bytes and came after smaller rows, while the gateway read {cap} bytes per row"
        f" at most (its memory budget per fetch); order the largest rows first (ORDER BY the value's length"
        f" descending), or select the large values in a query of their own; rows up to {MIN_ROW_CAP_BYTES}"
        f" bytes, or up to {HEADROOM} times the largest row before them, are never refused so"
    )


@attrs.define
class FetchPlan:
    """How many rows the next FETCH asks for and the row cap it sets, from the rows' sizes seen so far."""

    batch_size: int
    """``fetch_batch_size``: the most rows one FETCH asks for."""
    max_row_bytes: int
    """The largest row the gateway accepts at all."""
    largest_row: int = 0
    """Bytes of the largest row seen so far, as encoded JSON (at least its size in the database for text)."""
    received_bytes: int = 0
    """Bytes of JSON the answer's rows came to so far."""

    def rows_and_cap(self, room: int, *, first: bool = False) -> tuple[int, int]:
        """Rows to ask (at most ``room``, at least 1) and the cap in bytes each may have.

        The first FETCH asks ``batch_size`` rows at ``FETCH_BUDGET_BYTES`` / rows
        each: a refusal there costs only a second run of the query, since nothing
        is sent yet. Later ones ask about ``FETCH_BUDGET_BYTES`` / (largest row
        seen × ``HEADROOM``) rows, never more than the budget over
        ``MIN_ROW_CAP_BYTES``, so their cap is at least that.
        """
        if first:
            rows = min(room, self.batch_size)
        else:
            rows = FETCH_BUDGET_BYTES // max(1, self.largest_row * HEADROOM)
            rows = min(rows, room, self.batch_size, FETCH_BUDGET_BYTES // MIN_ROW_CAP_BYTES)
        rows = max(1, rows)
        cap = self.max_row_bytes if rows == 1 else min(self.max_row_bytes, FETCH_BUDGET_BYTES // rows)
        return rows, cap

    def saw(self, rows: int, encoded_bytes: int, widest: int) -> None:
        """The gateway encoded rows (``QueryResult.encoded``): ``encoded_bytes`` in all, the widest of them
        ``widest`` bytes (or an average)."""
        self.received_bytes += encoded_bytes
        self.largest_row = max(self.largest_row, widest)

    def slice_rows(self) -> int:
        """Rows to cast between two returns to the event loop: as many as the gateway encodes at once."""
        return rows_per_slice(self.largest_row)


def _load_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        function = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function  # type: ignore[no-any-return]


_malloc_trim = _load_malloc_trim()


def release_memory(received_bytes: int) -> None:
    """After an answer that moved ``received_bytes``, give freed heap back to the OS (glibc only)."""
    if _malloc_trim is not None and received_bytes >= TRIM_AFTER_BYTES:
        _malloc_trim(0)
