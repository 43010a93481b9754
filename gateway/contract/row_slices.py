"""How many rows are cast or encoded between two returns to the event loop: the gateway and a driver size alike.

The gateway encodes a driver's rows a slice at a time (``gateway.results.result_rows``),
giving the event loop back in between; a driver that casts its rows in Python
on the event loop slices them the same way, so neither holds the loop
for more than about ``SLICE_BYTES`` of rows at once.
"""

from __future__ import annotations

SLICE_BYTES = 4 * 1024 * 1024
"""About how many bytes of rows are encoded between two returns to the event loop, and joined into one chunk."""

SLICE_ROWS = 250
"""The most rows encoded at once: small rows encode ~250 in well under a millisecond."""


def rows_per_slice(widest_row_bytes: int) -> int:
    """Rows to cast or encode between two returns to the event loop: about ``SLICE_BYTES``, 1 to ``SLICE_ROWS``.

    ``widest_row_bytes`` is the widest row encoded so far (0 before the first). A driver that casts its rows
    in slices sizes them the same way.
    """
    if widest_row_bytes == 0:
        return SLICE_ROWS
    return max(1, min(SLICE_ROWS, SLICE_BYTES // widest_row_bytes))
