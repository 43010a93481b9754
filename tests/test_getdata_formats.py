"""GetData's CSV and NDJSON answers over real HTTP against a real PostgreSQL.

Shapes and value texts (each compared with the JSON answer of the same
query), choosing a format by the ``format`` input or ``Accept``, errors,
streaming, and a 1 000 000-row stream through a real gateway process whose
peak memory stays bounded.
"""

from __future__ import annotations

import csv
import io
import json
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from gateway_processes import GatewayProcess
from support import (
    GatewayFactory,
    error_of,
    grant,
    register_database,
    register_in_process,
    user_headers,
)

TOKEN = "formats-reader-token-5c1e"

FORMATS_SQL = r"""
CREATE SCHEMA shop;
CREATE TABLE shop.texts (id integer PRIMARY KEY, label text, note text);
INSERT INTO shop.texts VALUES
    (1, 'plain', 'a,b'),
    (2, 'say "hi"', E'two\nlines'),
    (3, E'cr\r\nlf', E'h\u00e9llo \u2603 \U0001F600'),
    (4, '', NULL),
    (5, NULL, ''),
    (6, ' padded ', '"');
CREATE TABLE shop.every_type (
    i2 smallint, i4 integer, i8 bigint, num numeric,
    r real, r_nan real, d double precision, d_big double precision, d_tiny double precision, d_inf double precision,
    b boolean, f boolean, t text,
    dt date, tm time, ts timestamp, tstz timestamptz, iv interval,
    u uuid, ip inet,
    j json, jb jsonb,
    ia integer[], iaa integer[][], ta text[],
    by bytea
);
INSERT INTO shop.every_type VALUES (
    12, -7, 9007199254740993, '12345678901234567890.1234567890',
    1.5, 'NaN', 0.1, 1e20, 1e-7, '-Infinity',
    true, false, E'h\u00e9llo "q",\n',
    '2024-02-29', '13:14:15.5', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15+02',
    '1 year 2 months 3 days 4 hours 5 minutes 6 seconds',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '192.168.0.1/24',
    '{"b": 1, "a": [true, null, "x,y"]}', '{"nested": {"n": 1.5, "list": [1, 2]}}',
    '{1,2,3}', '{{1,2},{3,NULL}}', '{"a b","c,d",NULL}',
    '\x0001ff'
);
INSERT INTO shop.every_type DEFAULT VALUES;
"""

CSV_TYPE = "text/csv; charset=utf-8"
NDJSON_TYPE = "application/x-ndjson; charset=utf-8"
JSON_TYPE = "text/javascript; charset=utf-8"
CONTENT_TYPES = {
    "json": JSON_TYPE, "csv": CSV_TYPE, "ndjson": NDJSON_TYPE,
    "json as application/json": "application/json; charset=utf-8",  # the same JSON body, for generated clients
}  # fmt: skip

TEXTS_QUERY = "select id, label, note from shop.texts order by id"
EVERY_TYPE_QUERY = "select * from shop.every_type order by i2 nulls last"


async def open_formats(client: TestClient, database: str) -> TestClient:
    await register_database(client, "fmt", database)
    for table in ("fmt_shop_texts", "fmt_shop_every_type"):
        await grant(client, TOKEN, table)
    return client


@pytest.fixture
async def formats(make_gateway: GatewayFactory, formats_database: str) -> TestClient:
    return await open_formats(await make_gateway(), formats_database)


async def get_data(
    client: TestClient, query: str, *, accept: str | None = None, **params: str
) -> ClientResponse:
    """GET /GetData on the ``fmt`` database; ``accept=None`` sends no Accept header at all."""
    headers = user_headers(TOKEN)
    del headers["Accept"]
    if accept is not None:
        headers["Accept"] = accept
    return await client.get(
        "/GetData",
        params={"local_database_name": "fmt", "query": query, **params},
        headers=headers,
        skip_auto_headers=() if accept is not None else ("Accept",),  # aiohttp would send Accept: */*
    )


async def body_of(response: ClientResponse, content_type: str) -> str:
    text = await response.text()
    assert response.status == 200, text
    assert response.headers["Content-Type"] == content_type
    return text


def ndjson_lines(text: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows, the last line) of an NDJSON answer; every line must parse and the body must end with a newline."""
    assert text.endswith("\n")
    lines = [json.loads(line) for line in text[:-1].split("\n")]
    return lines[:-1], lines[-1]


class TestCsv:
    async def test_header_quoting_and_null(self, formats: TestClient) -> None:
        """RFC 4180 byte for byte: header row, CRLF, quotes only where needed, NULL empty and '' as ""."""
        text = await body_of(await get_data(formats, TEXTS_QUERY, format="csv"), CSV_TYPE)
        assert text == (
            "id,label,note\r\n"
            "1,plain,\"a,b\"\r\n"
            "2,\"say \"\"hi\"\"\",\"two\nlines\"\r\n"
            "3,\"cr\r\nlf\",h\u00e9llo \u2603 \U0001F600\r\n"
            "4,\"\",\r\n"
            "5,,\"\"\r\n"
            "6, padded ,\"\"\"\"\r\n"
        )
        rows = list(csv.reader(io.StringIO(text, newline="")))
        assert rows[1:] == [
            ["1", "plain", "a,b"],
            ["2", 'say "hi"', "two\nlines"],
            ["3", "cr\r\nlf", "h\u00e9llo \u2603 \U0001F600"],
            ["4", "", ""],
            ["5", "", ""],
            ["6", " padded ", '"'],
        ]

    async def test_header_names_are_quoted_too(self, formats: TestClient) -> None:
        """Column names with a comma or a quote are quoted as values are; a repeated name gets _2 as in JSON."""
        query = 'select id as "a,b", id as "say ""x""", id, id from shop.texts where id = 1'
        text = await body_of(await get_data(formats, query, format="csv"), CSV_TYPE)
        assert text == '"a,b","say ""x""",id,id_2\r\n1,1,1,1\r\n'

    async def test_every_value_is_the_text_of_its_json_encoding(self, formats: TestClient) -> None:
        """Each CSV field is the JSON answer's value: a string as itself, anything else as its JSON text."""
        json_text = await body_of(await get_data(formats, EVERY_TYPE_QUERY, format="json"), JSON_TYPE)
        result = json.loads(json_text)[0]
        csv_text = await body_of(await get_data(formats, EVERY_TYPE_QUERY, format="csv"), CSV_TYPE)
        header, *records = list(csv.reader(io.StringIO(csv_text, newline="")))
        assert header == [column["name"] for column in result["columns"]]
        assert len(records) == len(result["data"]) == 2
        full, empty = records
        for name, field in zip(header, full):
            value = result["data"][0][name]
            if isinstance(value, str):
                assert field == value, name
            else:
                # Exactly the text the JSON answer holds for this value (json/jsonb unparsed, floats as orjson writes).
                assert f'"{name}":{field}' in json_text, (name, field)
                assert orjson.loads(field) == value, name
        assert empty == [""] * len(header)
        assert '"b":true,"f":false' in json_text and "true,false" in csv_text
        assert ",1e-7," in csv_text  # orjson's spelling, not repr's 1e-07

    async def test_a_one_column_null_is_an_empty_line(self, formats: TestClient) -> None:
        """One column: NULL is an empty record (as COPY ... CSV writes it), '' stays ""."""
        query = "select label from shop.texts where id in (4, 5) order by id"
        assert await body_of(await get_data(formats, query, format="csv"), CSV_TYPE) == 'label\r\n""\r\n\r\n'

    async def test_an_empty_result_is_the_header_alone(self, formats: TestClient) -> None:
        response = await get_data(formats, "select id, label from shop.texts where false", format="csv")
        assert await body_of(response, CSV_TYPE) == "id,label\r\n"
        assert response.headers["Dbgateway-Row-Count"] == "0"

    async def test_an_answer_sent_whole_gives_its_counts_in_headers(
        self, make_gateway: GatewayFactory, formats_database: str
    ) -> None:
        """CSV has no tail: an answer sent whole says its row count in headers; one past the limit is refused
        (test_whole_or_cut.py), so a CSV answer's Dbgateway-Truncated is always false."""
        client = await open_formats(await make_gateway(row_limit=2), formats_database)
        whole = await get_data(client, "select id from shop.texts where id < 3", format="csv")
        assert await body_of(whole, CSV_TYPE) == "id\r\n1\r\n2\r\n"
        assert whole.headers["Dbgateway-Row-Count"] == "2"
        assert whole.headers["Dbgateway-Truncated"] == "false"
        assert whole.headers["Dbgateway-Row-Limit"] == "2"
        assert (await get_data(client, TEXTS_QUERY, format="csv")).status == 422


class TestNdjson:
    async def test_one_object_per_row_then_the_counts(self, formats: TestClient) -> None:
        """Each line is one row object keyed as in JSON; the last line holds row_count and truncated."""
        text = await body_of(await get_data(formats, TEXTS_QUERY, format="ndjson"), NDJSON_TYPE)
        rows, last = ndjson_lines(text)
        assert rows[0] == {"id": 1, "label": "plain", "note": "a,b"}
        assert rows[3] == {"id": 4, "label": "", "note": None}
        assert rows[2]["label"] == "cr\r\nlf"
        assert last == {"row_count": 6, "truncated": False}

    async def test_rows_are_the_json_answers_rows_byte_for_byte(self, formats: TestClient) -> None:
        """The NDJSON lines joined by commas are exactly the JSON answer's data array."""
        json_text = await body_of(await get_data(formats, EVERY_TYPE_QUERY), JSON_TYPE)
        ndjson_text = await body_of(await get_data(formats, EVERY_TYPE_QUERY, format="ndjson"), NDJSON_TYPE)
        *row_lines, last = ndjson_text[:-1].split("\n")
        assert '"data":[' + ",".join(row_lines) + '],"row_count":2,"truncated":false}]' in json_text
        assert json.loads(last) == {"row_count": 2, "truncated": False}

    async def test_truncated_at_a_small_row_limit(self, make_gateway: GatewayFactory, formats_database: str) -> None:
        client = await open_formats(await make_gateway(row_limit=2), formats_database)
        rows, last = ndjson_lines(await body_of(await get_data(client, TEXTS_QUERY, format="ndjson"), NDJSON_TYPE))
        assert [row["id"] for row in rows] == [1, 2]
        assert last == {"row_count": 2, "truncated": True, "next": last["next"]}  # the next rows' continuation


JSON_LINE_BREAKS_QUERY = (
    # json_agg writes ",\n " between elements; json keeps the line breaks of its input, \r\n too.
    "select json_agg(t) as agg, E'{\"a\":\\r\\n [1,\\n 2]}'::json as spaced,"
    " array[E'[1,\\n2]'::json, E'{\"b\":\\r 3}'::json] as listed, 'x' || chr(10) || 'y' as plain"
    " from shop.texts as t"
)


class TestLineBreaksInJsonValues:
    """A json value's line breaks (whitespace between its tokens) never break a row over lines (issue 20, 6)."""

    async def test_ndjson_keeps_one_row_per_line(self, formats: TestClient) -> None:
        """json_agg's output and json values written over lines: one row, one line, values unchanged."""
        text = await body_of(await get_data(formats, JSON_LINE_BREAKS_QUERY, format="ndjson"), NDJSON_TYPE)
        assert "\r" not in text
        rows, last = ndjson_lines(text)
        assert last == {"row_count": 1, "truncated": False}
        (row,) = rows
        assert [item["id"] for item in row["agg"]] == [1, 2, 3, 4, 5, 6]
        assert row["agg"][1]["note"] == "two\nlines"  # a newline inside a string stays, escaped
        assert row["spaced"] == {"a": [1, 2]}
        assert row["listed"] == [[1, 2], {"b": 3}]
        assert row["plain"] == "x\ny"

    async def test_every_format_writes_the_same_value_text(self, formats: TestClient) -> None:
        """JSON, NDJSON and CSV hold one text per json value: line breaks became spaces, nothing else changed."""
        json_text = await body_of(await get_data(formats, JSON_LINE_BREAKS_QUERY), JSON_TYPE)
        ndjson_text = await body_of(await get_data(formats, JSON_LINE_BREAKS_QUERY, format="ndjson"), NDJSON_TYPE)
        row_line = ndjson_text.split("\n")[0]
        assert '"data":[' + row_line + "]" in json_text
        assert '"spaced":{"a":   [1,  2]}' in row_line  # each line break one space, so offsets stay
        csv_text = await body_of(await get_data(formats, JSON_LINE_BREAKS_QUERY, format="csv"), CSV_TYPE)
        header, record = list(csv.reader(io.StringIO(csv_text, newline="")))
        assert header == ["agg", "spaced", "listed", "plain"]
        assert record[1] == '{"a":   [1,  2]}' and record[3] == "x\ny"
        assert f'"agg":{record[0]}' in row_line

    def test_pandas_reads_the_ndjson_answer(self, million_gateway: GatewayProcess) -> None:
        """The issue's reader: pandas.read_json(lines=True) (skipped without pandas)."""
        pandas = pytest.importorskip("pandas")
        parameters = {"local_database_name": "fmt", "query": JSON_LINE_BREAKS_QUERY, "format": "ndjson"}
        url = million_gateway.url("/GetData?" + urllib.parse.urlencode(parameters))
        frame = pandas.read_json(url, lines=True, storage_options={"user_token": TOKEN})
        assert len(frame) == 2  # the row, then the row_count line
        assert frame["spaced"][0] == {"a": [1, 2]} and frame["row_count"][1] == 1


class TestChoosing:
    @pytest.mark.parametrize(
        ("accept", "chosen"),
        [
            (None, "json"),
            ("*/*", "json"),
            ("application/json", "json as application/json"),
            ("text/html", "json"),
            ("text/*", "json"),
            ("text/csv", "csv"),
            ("TEXT/CSV; charset=utf-8", "csv"),
            ("application/x-ndjson", "ndjson"),
            ("text/csv, */*;q=0.1", "csv"),
            ("text/csv, */*", "csv"),
            ("*/*, text/csv", "csv"),
            ("text/*, text/csv", "csv"),
            ("text/*, application/x-ndjson", "ndjson"),
            ("text/csv;q=0.5, application/x-ndjson", "ndjson"),
            ("application/x-ndjson;q=0.4, text/csv;q=0.9, text/javascript;q=0.2", "csv"),
            ("text/csv, application/x-ndjson", "csv"),
            ("application/x-ndjson, text/csv", "ndjson"),
            ("text/csv;q=0", "json"),
            ("text/csv;q=0, */*", "json"),
            ("text/csv;q=oops, application/x-ndjson;q=0.1", "ndjson"),
            ("text/javascript, text/csv;q=0.9", "json"),
        ],
    )
    async def test_accept(self, formats: TestClient, accept: str | None, chosen: str) -> None:
        """Accept chooses by q-value, an exact type over a wildcard; naming none of the formats keeps JSON."""
        response = await get_data(formats, "select id from shop.texts where id = 1", accept=accept)
        await body_of(response, CONTENT_TYPES[chosen])
        assert response.headers["Vary"] == "Accept"

    @pytest.mark.parametrize("chosen", ["json", "csv", "ndjson"])
    async def test_the_format_input_wins_over_accept(self, formats: TestClient, chosen: str) -> None:
        for accept in ("text/csv", "application/x-ndjson", "text/javascript"):
            query = "select 1 as one from shop.texts where id = 1"
            response = await get_data(formats, query, accept=accept, format=chosen)
            await body_of(response, CONTENT_TYPES[chosen])

    async def test_format_in_the_body(self, formats: TestClient) -> None:
        """POST /GetData takes format from the JSON body like query; given differently twice it is ambiguous."""
        body = {"local_database_name": "fmt", "query": "select id from shop.texts where id = 1", "format": "csv"}
        response = await formats.post("/GetData", json=body, headers=user_headers(TOKEN))
        assert await body_of(response, CSV_TYPE) == "id\r\n1\r\n"
        response = await formats.post("/GetData", params={"format": "ndjson"}, json=body, headers=user_headers(TOKEN))
        assert response.status == 400
        assert (await error_of(response))["error"] == "ambiguous_request"

    @pytest.mark.parametrize("value", ["xml", "CSV", "json,csv"])
    async def test_unknown_format_is_400_listing_the_choices(self, formats: TestClient, value: str) -> None:
        response = await get_data(formats, "select id from shop.texts", accept="text/csv", format=value)
        assert response.status == 400
        body = await error_of(response)
        assert body["error"] == "bad_request"
        assert "json, csv, ndjson" in body["message"] and "format" in body["message"]

    @pytest.mark.parametrize("chosen", ["csv", "ndjson"])
    async def test_errors_before_the_status_line_stay_json(self, formats: TestClient, chosen: str) -> None:
        """A refused query (and a failing one) answers the JSON error whatever format was asked."""
        response = await get_data(formats, "select * from pg_catalog.pg_class", format=chosen)
        assert response.status in (400, 403)
        await error_of(response)
        response = await get_data(formats, "select 1 / (id - id) from shop.texts", accept=CONTENT_TYPES[chosen])
        assert response.status == 400
        assert (await error_of(response))["error"] == "query_failed"


class TestStreaming:
    @pytest.mark.parametrize("chosen", ["json", "csv", "ndjson"])
    async def test_large_result_streams_chunked(
        self, make_gateway: GatewayFactory, formats_database: str, chosen: str
    ) -> None:
        """200 000 rows come chunked in every format, with no row-count headers (the status line went first)."""
        client = await open_formats(await make_gateway(row_limit=250_000), formats_database)
        query = "select g, 'row ' || g as label from generate_series(1, 200000) as g"
        response = await get_data(client, query, format=chosen)
        text = await body_of(response, CONTENT_TYPES[chosen])
        assert "Content-Length" not in response.headers
        assert response.headers.get("Transfer-Encoding") == "chunked"
        assert "Dbgateway-Row-Count" not in response.headers and "Dbgateway-Truncated" not in response.headers
        assert response.headers["Dbgateway-Row-Limit"] == "250000"
        if chosen == "json":
            result = json.loads(text)[0]
            assert result["row_count"] == 200_000 and result["data"][-1] == {"g": 200_000, "label": "row 200000"}
        elif chosen == "csv":
            lines = text.split("\r\n")
            assert lines[0] == "g,label" and lines[-1] == ""
            assert lines[1:-1] == [f"{g},row {g}" for g in range(1, 200_001)]  # nothing between two batches
        else:
            rows, last = ndjson_lines(text)
            assert rows == [{"g": g, "label": f"row {g}"} for g in range(1, 200_001)]
            assert last == {"row_count": 200_000, "truncated": False}


MILLION = 1_000_000
MEMORY_BOUND_KIB = 64 * 1024
"""Peak RSS growth allowed while one answer streams: far below the ~50-90 MB each format's million rows take."""


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.fixture(scope="module")
def million_gateway(tmp_path_factory: pytest.TempPathFactory, formats_database: str) -> Iterator[GatewayProcess]:
    """A real ``dbgateway serve`` (one process) with the fmt database and a row limit past a million."""
    gateway = GatewayProcess(
        tmp_path_factory.mktemp("million") / "data", DBGATEWAY_ROW_LIMIT=str(MILLION + 1), DBGATEWAY_WORKERS="1"
    )
    try:
        gateway.wait_until_listening()
        register_in_process(gateway.port, "fmt", formats_database, TOKEN)
        yield gateway
    finally:
        gateway.stop()


async def _stream_through(gateway: GatewayProcess, chosen: str) -> tuple[int, bytes, bytes, str]:
    """Read a million-row answer without keeping it: (newlines, first line, last line, content type)."""
    query = f"select g, 'row ' || g as label, g * 0.5 as half from generate_series(1, {MILLION}) as g"
    params = {"local_database_name": "fmt", "query": query, "format": chosen}
    newlines, first, tail = 0, b"", b""
    async with aiohttp.ClientSession() as session:
        async with session.get(gateway.url("/GetData"), params=params, headers={"user_token": TOKEN}) as response:
            assert response.status == 200, await response.text()
            assert "Content-Length" not in response.headers
            async for chunk in response.content.iter_chunked(1 << 16):
                newlines += chunk.count(b"\n")
                if len(first) < 200:
                    first += chunk[:200]
                tail = (tail + chunk)[-200:]
            last = tail.rstrip(b"\n").split(b"\n")[-1]
            return newlines, first.split(b"\n")[0], last, response.headers["Content-Type"]


class TestMillionRows:
    @pytest.mark.parametrize("chosen", ["csv", "ndjson", "json"])
    async def test_a_million_rows_stream_within_the_memory_bound(
        self, million_gateway: GatewayProcess, chosen: str
    ) -> None:
        """1 000 000 rows stream whole in each format while the gateway's peak RSS grows by less than 64 MiB."""
        pid = million_gateway.process.pid
        # A small answer first, so connecting and the first query's one-time costs are not counted.
        async with aiohttp.ClientSession() as session:
            params = {"local_database_name": "fmt", "query": "select id from shop.texts", "format": chosen}
            async with session.get(million_gateway.url("/GetData"), params=params, headers={"user_token": TOKEN}) as r:
                assert r.status == 200, await r.text()
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # peak RSS (VmHWM) starts again from the RSS now
        before = _status_kib(pid, "VmHWM")
        started = time.monotonic()
        newlines, first, last, content_type = await _stream_through(million_gateway, chosen)
        elapsed = time.monotonic() - started
        growth = _status_kib(pid, "VmHWM") - before
        rate = MILLION / elapsed
        print(f"\n{chosen}: {MILLION} rows in {elapsed:.2f} s ({rate:,.0f} rows/s), peak RSS +{growth} KiB")
        assert content_type == CONTENT_TYPES[chosen]
        if chosen == "csv":
            assert (newlines, first, last) == (MILLION + 1, b"g,label,half\r", b"1000000,row 1000000,500000.0\r")
        elif chosen == "ndjson":
            assert newlines == MILLION + 1
            assert first == b'{"g":1,"label":"row 1","half":"0.5"}'
            assert json.loads(last) == {"row_count": MILLION, "truncated": False}
        else:
            assert last.endswith(
                b'{"g":1000000,"label":"row 1000000","half":"500000.0"}],"row_count":1000000,"truncated":false}]'
            )
        assert growth < MEMORY_BOUND_KIB, f"peak RSS grew by {growth} KiB while streaming {MILLION} rows as {chosen}"


class TestPandas:
    def test_read_csv_reads_the_answer_straight_from_the_url(self, million_gateway: GatewayProcess) -> None:
        """docs/api.md's example: pandas.read_csv(url, storage_options={"user_token": ...}) (skipped without pandas)."""
        pandas = pytest.importorskip("pandas")

        def url(query: str) -> str:
            parameters = {"local_database_name": "fmt", "query": query, "format": "csv"}
            return million_gateway.url("/GetData?" + urllib.parse.urlencode(parameters))

        frame = pandas.read_csv(url(TEXTS_QUERY), storage_options={"user_token": TOKEN})
        assert list(frame.columns) == ["id", "label", "note"]
        assert frame["id"].tolist() == [1, 2, 3, 4, 5, 6]
        assert frame["note"][1] == "two\nlines" and frame["label"][2] == "cr\r\nlf" and frame["note"][5] == '"'
        assert frame["label"].isna().tolist() == [False, False, False, True, True, False]  # pandas: NULL and '' alike
        values = pandas.read_csv(
            url("select i8, r, d_big, b, f, num, ts from shop.every_type where i8 is not null"),
            storage_options={"user_token": TOKEN},
        )
        row = values.iloc[0]
        assert row["i8"] == 9007199254740993 and row["r"] == 1.5 and row["d_big"] == 1e20
        assert bool(row["b"]) is True and bool(row["f"]) is False
        assert row["ts"] == "2024-02-29T13:14:15.123456"
