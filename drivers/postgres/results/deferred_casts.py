"""Values read as text first and cast afterwards, so the next FETCH goes out before the Python work.

psycopg2 casts a value when ``fetchmany`` hands it over, and it refuses
``fetchmany`` while a statement is in flight on the connection: everything
``fetchmany`` does lies between one batch's arrival and the next FETCH. For
the types whose caster is a Python function (``typecasters.PYTHON_CASTS``:
timestamps, json, jsonb, floats) that is most of the time ``fetchmany`` takes.
The query's cursor reads those columns through psycopg2's C text caster
instead (``read_as_text``: the cursor's own ``string_types``, which psycopg2
looks at before the connection's); ``StreamingQuery`` sends the next FETCH and
then calls the same Python functions on the text (``finish``), while the
database works. The values are the same: both ways psycopg2 decodes the same
bytes with the connection's encoding and the caster gets that ``str`` (or
``None``). psycopg2 picks a result's casters when the result arrives, so the
batch that came with DECLARE is cast as before, and only later ones are read
as text. ``StreamingQuery`` calls ``read_as_text`` only when a second batch
will come, before its FETCH is sent: most results (a point lookup) end with the
first, and their cursor is left as it is.

Measured in-process on the benchmark's table (docs/performance.md): reading
the timestamp and jsonb columns as text takes ``fetchmany`` 0.27 s less per
million rows (0.39 s against 0.66 s), and the calls afterwards 0.33 s; the
0.06 s more buys a database that works while they run (a 1 000 000-row
GetData went from 2.2–2.7 s to 1.6–1.7 s).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import psycopg2.extensions as pg_ext

from drivers.postgres.results.typecasters import PYTHON_CASTS, TEXT_CASTER, keep_text
from gateway.contract.driver_protocol import Row

Finish = Callable[[list[Row]], list[Row]]
"""Rows read with ``read_as_text`` in, the same rows cast as the connection's casters would have out."""


def read_as_text(raw_cursor: Any, oids: Sequence[int]) -> Finish | None:
    """Make ``raw_cursor``'s later results give the Python-cast columns as text; return what finishes them.

    ``oids`` are the result's column types in order. None (and the cursor left
    as it is) when no column has a Python caster.
    """
    casts = tuple(PYTHON_CASTS.get(oid) for oid in oids)
    if not any(casts):
        return None
    # The cursor's own registry starts empty (None): registering the text caster creates it, with
    # entries for text's own OIDs that say what the connection's say.
    pg_ext.register_type(TEXT_CASTER, raw_cursor)
    for oid in oids:
        if oid in PYTHON_CASTS:
            keep_text(raw_cursor, oid)
    return _finisher(casts)


@functools.lru_cache(maxsize=256)
def _finisher(casts: tuple[Callable[[str | None, Any], Any] | None, ...]) -> Finish:
    """A list comprehension calling each column's caster, compiled per tuple of casters.

    One comprehension that unpacks each row costs about half what a loop over
    the columns would; the source holds only generated identifiers (the casters
    come in through its globals).
    """
    names = [f"v{index}" for index in range(len(casts))]
    values = ", ".join(
        f"c{index}({name}, None)" if cast is not None else name for index, (name, cast) in enumerate(zip(names, casts))
    )
    functions = {f"c{index}": cast for index, cast in enumerate(casts) if cast is not None}
    finish: Finish = eval(  # noqa: S307 - generated from the column count and positions only
        f"lambda rows: [({values},) for {', '.join(names)}, in rows]", {"__builtins__": {}, **functions}
    )
    return finish
