"""Result rows as JSON: unique column names, and rows encoded with orjson in one call per slice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from gateway.errors import InternalError

Row = Sequence[Any]


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


def encode_rows(names: Sequence[str], rows: Sequence[Row]) -> bytes:
    """Rows as JSON objects keyed by ``names``, joined by commas, without the enclosing brackets."""
    try:
        if len(rows) == 1:  # no list brackets to cut off: a large row is not copied once more
            return orjson.dumps(dict(zip(names, rows[0])))
        return orjson.dumps([dict(zip(names, row)) for row in rows])[1:-1]
    except orjson.JSONEncodeError as exc:
        # Only a caster registered outside this driver can produce such a value.
        raise InternalError(f"a value in the result could not be written as JSON: {exc}") from exc


def cast_missed_arrays(rows: list[Row], positions: Sequence[tuple[int, Any]], raw_cursor: Any) -> list[Row]:
    """Apply array casters registered after these rows were received (their arrays are still text).

    ``positions`` pairs a column index with the caster its values still need.
    """
    converted: list[Row] = []
    for row in rows:
        values = list(row)
        for index, caster in positions:
            if values[index] is not None:
                values[index] = caster(values[index], raw_cursor)
        converted.append(values)
    return converted
