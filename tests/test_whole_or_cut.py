"""A client can tell a whole GetData answer from a cut or a truncated one, whatever the protocol and format.

Issue 20, 4 and 5. Cut: a backend killed while the answer streams, read over a
raw socket as HTTP/1.1 (chunked: the final empty chunk must be missing) and as
HTTP/1.0 (nginx's default upstream protocol: no chunks, the body ends when the
connection closes, so the body itself must show its end). Truncated: a result
past ``row_limit``, sent whole and streamed, in each format, and read as
pandas reads a CSV URL (urllib).
"""

from __future__ import annotations

import asyncio
import http.client
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

import attrs
import orjson
import pytest
from aiohttp import ClientPayloadError
from aiohttp.test_utils import TestClient
from gateway_processes import GatewayProcess
from support import (
    GatewayFactory,
    error_of,
    read_logs,
    register_in_process,
    run_sql,
)
from test_audit import wait_for_audit
from test_getdata_formats import FORMATS_SQL  # noqa: F401  (conftest's formats_database fixture reads it here)
from test_getdata_formats import TOKEN, get_data, open_formats

BIG_QUERY = "select g, 'row ' || g as label from generate_series(1, {rows}) as g"
"""About 16 bytes a row as CSV: 1 000 000 rows are far past the 256 KiB an answer is sent whole within."""


@attrs.frozen
class RawAnswer:
    status: str
    """The status line after the version: ``200 OK``."""
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes
    """As received: still chunked for a chunked answer."""

    @property
    def chunked(self) -> bool:
        return self.headers.get("transfer-encoding") == "chunked"


async def raw_get(
    address: tuple[str, int],
    target: str,
    version: str,
    *,
    after_bytes: int = 0,
    meanwhile: Callable[[], Awaitable[None]] | None = None,
) -> RawAnswer:
    """GET over a socket of its own as HTTP/``version``, read to the connection's end.

    ``meanwhile`` runs once ``after_bytes`` of the body have arrived (with the rest not yet read).
    """
    reader, writer = await asyncio.open_connection(*address)
    lines = [f"GET {target} HTTP/{version}", f"Host: {address[0]}", f"User-Token: {TOKEN}", "Connection: close"]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (h.partition(":") for h in header_lines if h)}
    body = bytearray()
    while chunk := await asyncio.wait_for(reader.read(1 << 16), timeout=30):
        body += chunk
        if meanwhile is not None and len(body) >= after_bytes:
            await meanwhile()
            meanwhile = None
    writer.close()
    return RawAnswer(status_line.split(" ", 1)[1], headers, bytes(body))


def dechunk(body: bytes) -> tuple[bytes, bool]:
    """The data of a chunked body, and whether it ended properly (a last chunk of size 0, then CRLF)."""
    data, position = bytearray(), 0
    while True:
        line_end = body.find(b"\r\n", position)
        if line_end < 0:
            return bytes(data), False
        size = int(body[position:line_end].split(b";")[0], 16)
        start = line_end + 2
        if size == 0:
            return bytes(data), body[start : start + 2] == b"\r\n"
        if len(body) < start + size + 2:
            return bytes(data + body[start:]), False
        data += body[start : start + size]
        position = start + size + 2


def getdata_target(query: str, chosen: str) -> str:
    return "/GetData?" + urllib.parse.urlencode({"local_database_name": "fmt", "query": query, "format": chosen})


def kill_backends(database: str) -> Callable[[], Awaitable[None]]:
    """Terminate the gateway's backends on ``database``: the stream's next FETCH fails."""

    async def kill() -> None:
        sql = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND application_name = %s"
        assert run_sql(None, sql, (database, "dbgateway")), "no gateway backend to kill"

    return kill


def address(client: TestClient) -> tuple[str, int]:
    return client.host, client.port


def assert_cut(answer: RawAnswer, version: str, chosen: str) -> None:
    """``answer`` is a 200 streamed in format ``chosen`` whose body shows it was cut."""
    assert answer.status == "200 OK"
    if version == "1.1":
        assert answer.chunked
        data, ended = dechunk(answer.body)
        assert not ended, "a cut chunked answer must lack its last chunk"
    else:
        assert not answer.chunked and "content-length" not in answer.headers
        data = answer.body
    assert 1 << 20 <= len(data) < 1_500_000 * 16
    if chosen == "json":
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(data)
    elif chosen == "ndjson":
        last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        try:
            ending = orjson.loads(last)
        except orjson.JSONDecodeError:
            ending = {}  # cut inside a row
        assert "row_count" not in ending  # the body lacks its last line
    else:
        assert data.startswith(b"g,label\r\n")  # HTTP/1.1 only: the missing last chunk tells


class TestCut:
    @pytest.mark.parametrize("chosen", ["json", "ndjson", "csv"])
    @pytest.mark.parametrize("version", ["1.1", "1.0"])
    async def test_a_backend_killed_mid_stream_leaves_a_body_that_shows_it(
        self, make_gateway: GatewayFactory, formats_database: str, version: str, chosen: str
    ) -> None:
        """HTTP/1.1: no final chunk. HTTP/1.0: JSON unparseable, NDJSON without its count line; CSV never streams."""
        client = await open_formats(await make_gateway(row_limit=2_000_000), formats_database)
        target = getdata_target(BIG_QUERY.format(rows=1_500_000), chosen)
        answer = await raw_get(address(client), target, version, after_bytes=1 << 20, meanwhile=kill_backends(formats_database))
        if version == "1.0" and chosen == "csv":
            # A CSV body ended by closing the connection looks whole even when cut: not streamed over HTTP/1.0.
            assert answer.status == "426 Upgrade Required", answer.status
            assert answer.headers["upgrade"] == "HTTP/1.1"
            error = orjson.loads(answer.body)
            assert error["error"] == "upgrade_required" and "proxy_http_version 1.1" in error["message"]
            return
        assert_cut(answer, version, chosen)
        failures = [e for e in await read_logs(client, level="error") if e["event"] == "getdata_failed_while_streaming"]
        assert [failure["error"] for failure in failures] == ["database_unavailable"]

    async def test_a_small_csv_answer_goes_whole_over_http_1_0(
        self, make_gateway: GatewayFactory, formats_database: str
    ) -> None:
        """Up to 256 KiB a CSV answer has a Content-Length, which tells a cut one over HTTP/1.0 too."""
        client = await open_formats(await make_gateway(), formats_database)
        answer = await raw_get(address(client), getdata_target(BIG_QUERY.format(rows=1000), "csv"), "1.0")
        assert answer.status == "200 OK"
        assert int(answer.headers["content-length"]) == len(answer.body)
        assert answer.body.count(b"\r\n") == 1001

    @pytest.mark.parametrize("chosen", ["json", "ndjson"])
    async def test_formats_that_show_their_end_stream_over_http_1_0(
        self, make_gateway: GatewayFactory, formats_database: str, chosen: str
    ) -> None:
        """JSON and NDJSON stream to an HTTP/1.0 client whole, ending with the connection."""
        client = await open_formats(await make_gateway(), formats_database)
        answer = await raw_get(address(client), getdata_target(BIG_QUERY.format(rows=50_000), chosen), "1.0")
        assert answer.status == "200 OK" and "content-length" not in answer.headers
        if chosen == "json":
            assert orjson.loads(answer.body)[0]["row_count"] == 50_000
        else:
            *rows, last = answer.body.rstrip(b"\n").split(b"\n")
            assert orjson.loads(last) == {"row_count": 50_000, "truncated": False} and len(rows) == 50_000


class TestGatewayKilled:
    @pytest.mark.parametrize(("version", "chosen"), [("1.1", "csv"), ("1.0", "json"), ("1.0", "ndjson")])
    async def test_a_gateway_killed_mid_stream_leaves_a_body_that_shows_it(
        self, tmp_path: Path, formats_database: str, version: str, chosen: str
    ) -> None:
        """SIGKILL of the serving process: the same bodies as a database failure, with nothing the gateway did."""
        gateway = GatewayProcess(tmp_path / "data", DBGATEWAY_ROW_LIMIT="2000000", DBGATEWAY_WORKERS="1")
        try:
            gateway.wait_until_listening()
            register_in_process(gateway.port, "fmt", formats_database, TOKEN)

            async def kill() -> None:
                gateway.process.kill()

            target = getdata_target(BIG_QUERY.format(rows=1_500_000), chosen)
            answer = await raw_get(("127.0.0.1", gateway.port), target, version, after_bytes=1 << 20, meanwhile=kill)
        finally:
            gateway.stop()
        assert_cut(answer, version, chosen)


class TestTruncated:
    @pytest.mark.parametrize("chosen", ["json", "ndjson", "csv"])
    @pytest.mark.parametrize("rows", [10, 200_000], ids=["whole", "streamed"])
    async def test_a_truncated_answer_says_so_in_every_format(
        self, make_gateway: GatewayFactory, formats_database: str, rows: int, chosen: str
    ) -> None:
        """JSON and NDJSON say truncated in the body; CSV, which has no place for it, never looks whole."""
        limit = rows // 2
        client = await open_formats(await make_gateway(row_limit=limit), formats_database)
        response = await get_data(client, BIG_QUERY.format(rows=rows), format=chosen)
        streamed = rows > 1000
        if chosen == "csv" and not streamed:
            assert response.status == 422
            error = await error_of(response)
            assert error["error"] == "result_too_large"
            assert f"row_limit ({limit})" in error["message"] and f"LIMIT {limit}" in error["message"]
            return
        assert response.status == 200
        assert ("Content-Length" in response.headers) is not streamed
        if chosen == "csv":
            with pytest.raises(ClientPayloadError):  # the body never ends properly
                await response.read()
            failures = [e for e in await read_logs(client, level="error") if e["event"] == "getdata_failed_while_streaming"]
            assert [failure["error"] for failure in failures] == ["result_too_large"]
            (entry,) = await wait_for_audit(client, 1)
            assert (entry["status"], entry["error"], entry["outcome"]) == (200, "result_too_large", "cut_off")
            assert entry["rows"] < limit  # the batch that passed the limit was not sent
            return
        body = await response.read()
        if chosen == "json":
            result = orjson.loads(body)[0]
            assert (result["row_count"], result["truncated"], len(result["data"])) == (limit, True, limit)
        else:
            *lines, last = body.rstrip(b"\n").split(b"\n")
            counts = orjson.loads(last)
            # The contract's fields, and the next rows' continuation token (test_getdata_continuation.py).
            assert counts == {"row_count": limit, "truncated": True, "next": counts["next"]} and len(lines) == limit
        if not streamed:
            assert response.headers["Dbgateway-Truncated"] == "true"
            assert "X-Continuation" in response.headers

    async def test_a_csv_url_read_as_pandas_reads_it_fails_instead_of_reading_half(
        self, make_gateway: GatewayFactory, formats_database: str
    ) -> None:
        """The issue's case: 200 000 rows, row_limit 100 000. urllib (pandas.read_csv's reader) raises."""
        client = await open_formats(await make_gateway(row_limit=100_000), formats_database)
        url = f"http://{client.host}:{client.port}" + getdata_target(BIG_QUERY.format(rows=200_000), "csv")

        def read_url() -> bytes:
            request = urllib.request.Request(url, headers={"User-Token": TOKEN})
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.read()

        with pytest.raises(http.client.IncompleteRead):
            await asyncio.to_thread(read_url)

    async def test_pandas_read_csv_raises(self, make_gateway: GatewayFactory, formats_database: str) -> None:
        """pandas.read_csv on the URL (skipped without pandas)."""
        pandas = pytest.importorskip("pandas")
        client = await open_formats(await make_gateway(row_limit=100_000), formats_database)
        url = f"http://{client.host}:{client.port}" + getdata_target(BIG_QUERY.format(rows=200_000), "csv")
        with pytest.raises((http.client.IncompleteRead, urllib.error.URLError)):
            await asyncio.to_thread(pandas.read_csv, url, storage_options={"User-Token": TOKEN})
