"""Result rows as the gateway's protocol wants them today: unique names, JSON, the row limit.

TO BE DELETED when the gateway encodes rows itself (the driver will then only
yield raw rows): everything in this module is generic, nothing here is about
SQLite except ``json_value``'s handling of SQLite's storage classes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from gateway.driver_protocol import RowEncoding

Row = Sequence[Any]


def unique_column_names(names: Sequence[str]) -> list[str]:
    """Keep every column: a repeated name gets ``_2``, ``_3`` ... skipping names other columns have."""
    originals, taken, unique = set(names), set[str](), []
    for name in names:
        candidate, suffix = name, 1
        while candidate in taken or (candidate != name and candidate in originals):
            suffix += 1
            candidate = f"{name}_{suffix}"
        taken.add(candidate)
        unique.append(candidate)
    return unique


def json_value(value: Any) -> Any:
    """One SQLite value (NULL, INTEGER, REAL, TEXT or BLOB) as the gateway's JSON writes it."""
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no infinities; PostgreSQL's driver spells them like this too. (SQLite stores NaN as NULL.)
        return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, bytes):
        return "\\x" + value.hex()  # as PostgreSQL prints bytea
    return value


def encode(names: Sequence[str], rows: Sequence[Row], encoding: RowEncoding | None) -> bytes:
    """Rows as JSON objects joined by commas (no brackets), or ``encoding``'s writing of them."""
    values = [[json_value(value) for value in row] for row in rows]
    if encoding is not None:
        return encoding.encode(names, values)
    objects = (json.dumps(dict(zip(names, row)), ensure_ascii=False, separators=(",", ":")) for row in values)
    return ",".join(objects).encode()


def within_limit(rows: list[Row], rows_so_far: int, row_limit: int) -> tuple[list[Row], bool]:
    """The rows of a batch that fit under ``row_limit``, and whether the limit cut the result."""
    room = row_limit - rows_so_far
    return (rows[:room], True) if len(rows) > room else (rows, False)
