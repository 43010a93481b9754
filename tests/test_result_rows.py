"""gateway.results.result_rows: what the gateway does with any driver's rows (names, encoding, row limit, truncated).

The rows come from a driver's ``QueryResult`` written here in memory: these
tests are about the gateway's side of the protocol, whatever the database.
The PostgreSQL driver's side is in test_query_runner.py and the GetData tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import orjson
import pytest

from gateway.contract.driver_protocol import ColumnInfo, Row
from gateway.errors import InternalError
from gateway.results.result_formats import CSV, NDJSON
from gateway.results.result_rows import JSON_ROWS, EncodedRows, RowEncoding


class ListResult:
    """A ``QueryResult`` handing over fixed batches; notes what the gateway did with them."""

    def __init__(self, names: Sequence[str], batches: list[list[Row]]) -> None:
        self.columns = [ColumnInfo(name=name, type_name="integer") for name in names]
        self._batches = batches
        self.handed_over: list[list[Row]] = []
        self.reports: list[tuple[int, int]] = []
        self.closed = False

    async def batches(self) -> AsyncIterator[list[Row]]:
        try:
            for batch in self._batches:
                self.handed_over.append(batch)
                yield batch
        finally:
            self.closed = True

    def encoded(self, rows: int, size: int) -> None:
        self.reports.append((rows, size))


async def read(rows: EncodedRows) -> bytes:
    return b",".join([chunk async for chunk in rows.chunks()])


async def test_names_are_made_unique_in_columns_and_rows() -> None:
    result = ListResult(["id", "id", "note"], [[(1, 2, "x")]])
    rows = EncodedRows(result, row_limit=10)
    assert [column.name for column in rows.columns] == ["id", "id_2", "note"]
    assert orjson.loads(b"[" + await read(rows) + b"]") == [{"id": 1, "id_2": 2, "note": "x"}]
    assert rows.row_count == 1 and rows.truncated is False


async def test_the_row_beyond_the_limit_sets_truncated_and_is_never_sent() -> None:
    result = ListResult(["i"], [[(1,), (2,)], [(3,), (4,)]])
    rows = EncodedRows(result, row_limit=3)
    assert orjson.loads(b"[" + await read(rows) + b"]") == [{"i": 1}, {"i": 2}, {"i": 3}]
    assert rows.row_count == 3 and rows.truncated is True


async def test_a_driver_that_ignores_the_limit_is_not_read_further_and_is_closed() -> None:
    """Batches after the one that passed the limit are never asked for; the driver's generator ends."""
    result = ListResult(["i"], [[(i,) for i in range(5)] for _ in range(100)])
    rows = EncodedRows(result, row_limit=7)
    await read(rows)
    assert rows.row_count == 7 and rows.truncated is True
    assert len(result.handed_over) == 2 and result.closed


async def test_exactly_the_limit_is_not_truncated() -> None:
    result = ListResult(["i"], [[(1,), (2,)], [(3,)]])
    rows = EncodedRows(result, row_limit=3)
    await read(rows)
    assert rows.row_count == 3 and rows.truncated is False


async def test_each_batch_is_emptied_and_every_slice_reported() -> None:
    """The driver's lists hold no values once encoded; the sizes reported add up to the bytes written."""
    result = ListResult(["i"], [[(i,) for i in range(600)], [(7,)]])
    rows = EncodedRows(result, row_limit=1000)
    chunks = [chunk async for chunk in rows.chunks()]
    assert all(batch == [] for batch in result.handed_over)
    assert sum(count for count, _ in result.reports) == 601
    # 250-row slices: the first batch's three are joined by two commas into one chunk.
    assert [count for count, _ in result.reports] == [250, 250, 100, 1]
    assert sum(size for _, size in result.reports) == sum(len(chunk) for chunk in chunks) - 2
    assert len(chunks) == 2  # one per batch: small slices of a batch are joined


async def test_another_format_encodes_the_same_rows() -> None:
    result = ListResult(["a", "a"], [[(1, None), (2, "x,y")]])
    rows = EncodedRows(result, row_limit=10, encoding=CSV.encoding)
    assert CSV.head(rows.columns) == b"a,a_2\r\n"
    assert await read(rows) == b'1,\r\n2,"x,y"\r\n'


@pytest.mark.parametrize("encoding", [NDJSON.encoding, JSON_ROWS, CSV.encoding], ids=["ndjson", "json", "csv"])
async def test_a_drivers_json_text_over_lines_keeps_each_row_on_one_line(encoding: RowEncoding) -> None:
    """Any driver's ``orjson.Fragment`` may hold line breaks between tokens: they become spaces in every format."""
    fragment = orjson.Fragment(b'{"a":\r\n [1,\n 2]}')
    result = ListResult(["j", "l", "s"], [[(fragment, [fragment], "x\ny"), (None, [], "z")]])
    rows = EncodedRows(result, row_limit=10, encoding=encoding)
    text = await read(rows)
    if encoding is CSV.encoding:
        assert text == b'"{""a"":   [1,  2]}","[{""a"":   [1,  2]}]","x\ny"\r\n,[],z\r\n'
    else:
        lines = text.split(b"\n")
        if encoding is JSON_ROWS:
            assert len(lines) == 1
        else:
            assert len(lines) == 3 and lines[-1] == b""  # two rows, each ending in a newline
        assert b"\r" not in text and b'"j":{"a":   [1,  2]}' in text and b'"s":"x\\ny"' in text


async def test_rows_of_any_width_become_objects_with_their_names_as_keys() -> None:
    """The objects are built by code compiled per number of columns: names only ever come in as values."""
    hostile = ['a"b', "}: 1, **__import__('os').environ, {", "k0", "v0", "é\u2028", ""]
    for names in (["only"], hostile, [f"c{index}" for index in range(1500)]):
        row = tuple(range(len(names)))
        result = ListResult(names, [[row, row]])
        rows = EncodedRows(result, row_limit=10)
        expected = dict(zip([column.name for column in rows.columns], row))
        assert orjson.loads(b"[" + await read(rows) + b"]") == [expected, expected]
        ndjson = EncodedRows(ListResult(names, [[row]]), row_limit=10, encoding=NDJSON.encoding)
        assert await read(ndjson) == orjson.dumps(expected) + b"\n"


async def test_rows_without_columns_are_empty_objects() -> None:
    result = ListResult([], [[(), ()]])
    assert await read(EncodedRows(result, row_limit=10)) == b"{},{}"


async def test_a_row_with_a_value_too_many_is_an_internal_error_not_a_shifted_object() -> None:
    result = ListResult(["a", "b"], [[(1, 2), (1, 2, 3)]])
    with pytest.raises(InternalError, match="one value per column"):
        await read(EncodedRows(result, row_limit=10))
