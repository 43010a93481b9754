"""Rows received before their array casters existed, cast once more.

The gateway encodes the rows afterwards (``gateway.results.result_rows``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gateway.contract.driver_protocol import Row


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
