"""A query's rows as the answer writes them: unique column names, encoding, the row limit and ``truncated``.

A driver's ``QueryResult`` hands over rows as Python values, one list per fetch
from its database (``QueryResult.batches``), with the columns as the database
names them. ``EncodedRows`` is what GetData reads instead: it makes the column
names unique (``id``, ``id_2``), encodes each batch a slice at a time (one
``orjson`` call per slice for JSON; the result format's ``RowEncoding`` for CSV
and NDJSON), gives the event loop back between slices, counts the rows and stops
at the row limit, setting ``truncated`` when the driver had more.

Encoding takes the rows out of the driver's list as it goes (``del rows[:n]``),
so a slice's values are garbage once written: a 60 MB value is never held as
value and JSON beyond the slice being encoded. Each slice's encoded size is
reported back to the driver (``QueryResult.encoded``), which may size its next
fetches by it (a driver whose rows vary widely in size does).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

import attrs
import orjson

from gateway.contract.driver_protocol import ColumnInfo, QueryResult, Row
from gateway.contract.row_slices import SLICE_BYTES, rows_per_slice
from gateway.errors import InternalError


@attrs.frozen
class RowEncoding:
    """How one result format writes rows (``gateway.results.result_formats``): JSON objects, CSV lines, NDJSON lines."""

    encode: Callable[[Sequence[str], Sequence[Row]], bytes]
    """Rows (values as ``driver_protocol.Row`` describes them) under the column names, as bytes holding one
    or more complete rows."""
    separator: bytes
    """What goes between two encoded pieces of rows, as the comma does between JSON objects."""


def unique_column_names(names: Sequence[str]) -> list[str]:
    """Keep every column: a repeated name gets ``_2``, ``_3`` ... skipping names other columns have."""
    originals = set(names)
    taken: set[str] = set()
    unique: list[str] = []
    for name in names:
        candidate, suffix = name, 1
        # A suffixed name must not take the name a later column really has.
        while candidate in taken or (candidate != name and candidate in originals):
            suffix += 1
            candidate = f"{name}_{suffix}"
        taken.add(candidate)
        unique.append(candidate)
    return unique


@functools.lru_cache(maxsize=128)
def _objects_maker(width: int) -> Callable[..., list[dict[str, Any]]]:
    """A function ``(rows, *names)`` making rows of ``width`` values into dicts keyed by the names.

    It is a list comprehension that unpacks each row and builds the dict from a
    display (``{K0: v0, K1: v1}``), compiled once per number of columns: about
    half the CPU of ``dict(zip(names, row))`` per row, which makes a pair tuple
    per value (0.45 s against 0.26 s per million six-column rows, encoding included).
    The source holds only generated identifiers; the names come in as arguments.
    """
    if width == 0:
        return lambda rows: [{} for _ in rows]
    keys = ", ".join(f"k{index}" for index in range(width))
    values = ", ".join(f"v{index}" for index in range(width))
    pairs = ", ".join(f"k{index}: v{index}" for index in range(width))
    made: Callable[..., list[dict[str, Any]]] = eval(  # noqa: S307 - generated from ``width`` only
        f"lambda rows, {keys}: [{{{pairs}}} for {values}, in rows]", {"__builtins__": {}}
    )
    return made


def row_objects(names: Sequence[str], rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Each row as a dict keyed by ``names`` (unique, as ``EncodedRows`` makes them), in order."""
    try:
        return _objects_maker(len(names))(rows, *names)
    except ValueError as exc:  # a row with more or fewer values than columns: a driver's bug
        raise InternalError(f"a result row does not have one value per column: {exc}") from exc


def without_line_breaks(encoded: bytes) -> bytes:
    """``encoded`` (orjson's output) with each raw CR and LF made a space; the same bytes when it has none.

    orjson escapes line breaks inside strings, so a raw one can only come from an ``orjson.Fragment`` (JSON
    text a database wrote: json keeps its input's layout, json_agg writes ``",\\n "`` between elements),
    where it is whitespace between tokens: a space in its place is the same JSON value, and every format
    then holds the same text. NDJSON needs it (a row never spans lines); JSON and CSV get it so that the
    three stay alike. Two scans of the bytes, without a copy, when there is nothing to replace.
    """
    if b"\n" in encoded or b"\r" in encoded:
        return encoded.replace(b"\n", b" ").replace(b"\r", b" ")
    return encoded


def encode_json_rows(names: Sequence[str], rows: Sequence[Row]) -> bytes:
    """Rows as JSON objects keyed by ``names``, joined by commas, without the enclosing brackets."""
    objects = row_objects(names, rows)
    try:
        if len(objects) == 1:  # no list brackets to cut off: a large row is not copied once more
            return without_line_breaks(orjson.dumps(objects[0]))
        return without_line_breaks(orjson.dumps(objects)[1:-1])
    except orjson.JSONEncodeError as exc:
        # Only a value outside the protocol's list (a driver's bug) can get here.
        raise InternalError(f"a value in the result could not be written as JSON: {exc}") from exc


JSON_ROWS = RowEncoding(encode=encode_json_rows, separator=b",")
"""GetData's JSON rows: objects joined by commas (the format adds the brackets around them)."""


class EncodedRows:
    """The encoded chunks of one ``QueryResult``; iterate once, inside the driver's ``run_query`` context."""

    def __init__(self, result: QueryResult, row_limit: int, encoding: RowEncoding = JSON_ROWS) -> None:
        self._result = result
        self._row_limit = row_limit
        self._encoding = encoding
        self.columns = [
            ColumnInfo(name=name, type_name=column.type_name)
            for name, column in zip(unique_column_names([column.name for column in result.columns]), result.columns)
        ]
        """The result's columns, names made unique (``id``, ``id_2``) as the rows' keys are."""
        self._names = tuple(column.name for column in self.columns)
        self._widest = 0
        self.row_count = 0
        """Rows encoded so far; final once iteration ends."""
        self.truncated = False
        """True once the row limit cut the result (the driver had a row beyond it); final once iteration ends."""

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        """One or more chunks per batch (a new one past ``SLICE_BYTES``), pieces joined by the separator."""
        batches = self._result.batches()
        try:
            async for rows in batches:
                room = self._row_limit - self.row_count
                if len(rows) > room:  # a row beyond the limit: the driver had more
                    self.truncated = True
                    del rows[room:]
                async for chunk in self._encode(rows):
                    yield chunk
                del rows
                chunk = b""  # not held while the driver fetches the next batch
                if self.truncated:
                    return
        finally:
            # Cut at the limit (or left by an error or a cancel): the driver's generator ends now, not when
            # garbage collected, so its clean-up runs inside run_query's context.
            closing = getattr(batches, "aclose", None)
            if closing is not None:
                await closing()

    async def _encode(self, rows: list[Row]) -> AsyncGenerator[bytes, None]:
        """Encode ``rows`` a slice at a time, emptying the list as it goes; the event loop runs between slices."""
        encode, separator = self._encoding.encode, self._encoding.separator
        report = self._result.encoded
        parts: list[bytes] = []
        size = 0
        while rows:
            if parts:
                await asyncio.sleep(0)
            count = min(self._slice_rows(), len(rows))
            part = encode(self._names, rows[:count])
            del rows[:count]  # the values are garbage once encoded: a 60 MB string is not kept twice
            self._widest = max(self._widest, len(part) // count)
            self.row_count += count
            report(count, len(part))
            parts.append(part)
            size += len(part)
            # Small slices are joined (fewer writes); a large one goes out as it is, never copied.
            if size >= SLICE_BYTES or not rows:
                yield parts[0] if len(parts) == 1 else separator.join(parts)
                parts, size = [], 0

    def _slice_rows(self) -> int:
        return rows_per_slice(self._widest)

