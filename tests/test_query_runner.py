"""The PostgreSQL query runner on a real server: values as JSON, batches, limits, time-outs, cancellation, errors."""

from __future__ import annotations

import asyncio
import decimal
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiopg
import orjson
import psycopg2.extensions
import pytest
import structlog

from drivers.postgres.results.query_errors import CanceledStatementLogFilter
from drivers.postgres.results.query_runner import run_query
from drivers.postgres.results.row_bounds import FETCH_BUDGET_BYTES, MIN_ROW_CAP_BYTES
from drivers.postgres.results.typecasters import TypeNameCache, register_json_casters
from gateway.contract.driver_protocol import PoolLimits, QueryResult
from gateway.errors import DatabaseUnavailable, QueryFailed, QueryTimeout
from gateway.results.result_rows import EncodedRows, unique_column_names
from support import connect, dsn_under_test, run_sql, wait_until

PoolFactory = Callable[..., Awaitable[aiopg.Pool]]

TYPES_TABLE_SQL = r"""
CREATE SCHEMA shop;
CREATE TYPE shop.mood AS ENUM ('sad', 'happy');
CREATE TABLE shop.every_type (
    i2 smallint, i4 integer, i8 bigint, an_oid oid,
    num numeric, num_nan numeric,
    r real, d double precision, d_nan double precision, d_inf double precision, d_ninf double precision,
    b boolean, t text, vc varchar(10), ch char(3),
    dt date, tm time, ttz timetz, ts timestamp, tstz timestamptz, iv interval,
    u uuid, ip inet, net cidr, mac macaddr,
    j json, jb jsonb,
    ia integer[][], ta text[], fa double precision[], na numeric[], tsa timestamptz[], jba jsonb[],
    by bytea, mood shop.mood, moods shop.mood[], cash money
);
INSERT INTO shop.every_type VALUES (
    12, -7, 9007199254740993, 4294967295,
    '123456789012345678901234567890.123', 'NaN',
    1.5, 0.1, 'NaN', 'Infinity', '-Infinity',
    true, E'h\u00e9llo "quoted"\n', 'abc', 'ab',
    '2024-01-02', '03:04:05.123', '03:04:05+02', '2024-01-02 03:04:05.123', '2024-01-02 03:04:05.123+00',
    '1 year 2 months 3 days 4 hours 5 minutes 6 seconds',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '192.168.0.1/24', '10.0.0.0/8', '08:00:2b:01:02:03',
    '{"b": 1, "a": [true, null, "x"]}', '{"nested": {"n": 1.5, "list": [1, 2]}}',
    '{{1,2},{3,NULL}}', '{"a b","c,d",NULL,"\"q\""}', '{1.5,NaN,-Infinity}', '{1.10,NaN}',
    '{"2024-01-02 03:04:05+00",infinity}', ARRAY['{"k": [1]}'::jsonb, 'null'::jsonb],
    '\x0001ff', 'happy', '{happy,sad}', 12.34
);
INSERT INTO shop.every_type DEFAULT VALUES;
"""

EXPECTED_VALUES: dict[str, Any] = {
    "i2": 12,
    "i4": -7,
    "i8": 9007199254740993,
    "an_oid": 4294967295,
    "num": "123456789012345678901234567890.123",
    "num_nan": "NaN",
    "r": 1.5,
    "d": 0.1,
    "d_nan": "NaN",
    "d_inf": "Infinity",
    "d_ninf": "-Infinity",
    "b": True,
    "t": 'h\u00e9llo "quoted"\n',
    "vc": "abc",
    "ch": "ab ",
    "dt": "2024-01-02",
    "tm": "03:04:05.123",
    "ttz": "03:04:05+02:00",
    "ts": "2024-01-02T03:04:05.123",
    "tstz": "2024-01-02T03:04:05.123+00:00",
    "iv": "P1Y2M3DT4H5M6S",
    "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    "ip": "192.168.0.1/24",
    "net": "10.0.0.0/8",
    "mac": "08:00:2b:01:02:03",
    "j": {"b": 1, "a": [True, None, "x"]},
    "jb": {"nested": {"n": 1.5, "list": [1, 2]}},
    "ia": [[1, 2], [3, None]],
    "ta": ["a b", "c,d", None, '"q"'],
    "fa": [1.5, "NaN", "-Infinity"],
    "na": ["1.10", "NaN"],
    "tsa": ["2024-01-02T03:04:05+00:00", "infinity"],
    "jba": [{"k": [1]}, None],
    "by": "\\x0001ff",
    "mood": "happy",
    "moods": ["happy", "sad"],
    "cash": "$12.34",
}

EXPECTED_TYPE_NAMES = {
    "i2": "smallint",
    "i4": "integer",
    "i8": "bigint",
    "num": "numeric",
    "r": "real",
    "d": "double precision",
    "b": "boolean",
    "vc": "character varying",
    "ch": "character",
    "tm": "time without time zone",
    "ttz": "time with time zone",
    "ts": "timestamp without time zone",
    "tstz": "timestamp with time zone",
    "j": "json",
    "jb": "jsonb",
    "ia": "integer[]",
    "ta": "text[]",
    "by": "bytea",
    "mood": "shop.mood",
    "moods": "shop.mood[]",
    "cash": "money",
}


def session_options(statement_timeout_ms: int) -> str:
    """The libpq options every gateway session gets (see the brief / drivers/postgres/pool.py)."""
    return (
        f"-c default_transaction_read_only=on -c statement_timeout={statement_timeout_ms} "
        "-c search_path=pg_catalog -c TimeZone=UTC -c IntervalStyle=iso_8601 -c DateStyle=ISO "
        "-c extra_float_digits=3 -c jit=off"
    )


def limits(**overrides: Any) -> PoolLimits:
    settings: dict[str, Any] = {
        "min_size": 0,
        "max_size": 2,
        "acquire_timeout": 5.0,
        "statement_timeout": 10.0,
        "row_limit": 100_000,
        "batch_size": 5000,
    }
    settings.update(overrides)
    return PoolLimits(**settings)


async def register_casters(connection: aiopg.Connection) -> None:
    register_json_casters(connection.raw)


@pytest.fixture
async def open_pool(scratch_database: str) -> AsyncIterator[PoolFactory]:
    """Open aiopg pools on the scratch database the way the driver's pool does; closed after the test."""
    pools: list[aiopg.Pool] = []
    server = psycopg2.extensions.parse_dsn(dsn_under_test())

    async def open_(*, statement_timeout_ms: int = 10_000, maxsize: int = 2, **overrides: Any) -> aiopg.Pool:
        arguments: dict[str, Any] = {
            "host": server.get("host", "127.0.0.1"),
            "port": int(server.get("port", 5432)),
            "user": server.get("user", "postgres"),
            "password": server.get("password", ""),
            "dbname": scratch_database,
            "options": session_options(statement_timeout_ms),
            "application_name": "dbgateway",
            "minsize": 0,
            "maxsize": maxsize,
            "timeout": statement_timeout_ms / 1000 + 10,
            "enable_json": False,
            "enable_hstore": False,
            "enable_uuid": False,
            "on_connect": register_casters,
        }
        arguments.update(overrides)
        pool = await aiopg.create_pool(**arguments)
        pools.append(pool)
        return pool

    yield open_
    for pool in pools:
        pool.terminate()
        await pool.wait_closed()


@pytest.fixture
def types_database(scratch_database: str) -> str:
    """The scratch database with a table holding one value of every contract type, and a row of NULLs."""
    run_sql(scratch_database, TYPES_TABLE_SQL)
    return scratch_database


async def fetch_json(
    pool: aiopg.Pool, sql: str, query_limits: PoolLimits | None = None, type_names: TypeNameCache | None = None
) -> tuple[EncodedRows, list[Any], list[bytes]]:
    """Run ``sql`` and parse the response body the handler would write: ``[`` chunks joined by ``,`` ``]``."""
    query_limits = query_limits or limits()
    async with run_query(pool, sql, query_limits, type_names or TypeNameCache(), structlog.get_logger()) as result:
        encoded = EncodedRows(result, query_limits.row_limit)
        chunks = [chunk async for chunk in encoded.chunks()]
    return encoded, orjson.loads(b"[" + b",".join(chunks) + b"]"), chunks


def json_chunks(result: QueryResult, query_limits: PoolLimits | None = None) -> AsyncIterator[bytes]:
    """The JSON chunks the gateway writes of a driver's result (``gateway.results.result_rows``)."""
    return EncodedRows(result, (query_limits or limits()).row_limit).chunks()


def stream(pool: aiopg.Pool, sql: str, query_limits: PoolLimits) -> Any:
    """run_query with a fresh type cache, for tests that read the rows themselves (``json_chunks``)."""
    return run_query(pool, sql, query_limits, TypeNameCache(), structlog.get_logger())


async def backend_pid(pool: aiopg.Pool) -> int:
    _, rows, _ = await fetch_json(pool, "SELECT pg_backend_pid() AS pid")
    return int(rows[0]["pid"])


def running_statements(database: str, fragment: str) -> list[tuple[Any, ...]]:
    """Active backends in ``database`` whose query text contains ``fragment`` (this session excluded)."""
    return run_sql(
        None,
        "SELECT pid, state FROM pg_stat_activity WHERE datname = %s AND state = 'active' "
        "AND query LIKE %s AND pid <> pg_backend_pid()",
        (database, f"%{fragment}%"),
    )



class TestValues:
    async def test_every_contract_type_becomes_the_documented_json(
        self, types_database: str, open_pool: PoolFactory
    ) -> None:
        """Each type in the contract's value list arrives as exactly the JSON value the contract names."""
        pool = await open_pool()
        sql = f"SELECT {', '.join(EXPECTED_VALUES)} FROM shop.every_type ORDER BY i4 NULLS LAST"
        result, rows, _ = await fetch_json(pool, sql)
        assert rows[0] == EXPECTED_VALUES
        assert list(rows[0]) == list(EXPECTED_VALUES)
        assert rows[1] == dict.fromkeys(EXPECTED_VALUES)
        assert result.row_count == 2 and result.truncated is False

    async def test_columns_carry_the_database_type_names(self, types_database: str, open_pool: PoolFactory) -> None:
        """columns lists every result column in order with format_type's name for its type."""
        pool = await open_pool()
        sql = f"SELECT {', '.join(EXPECTED_TYPE_NAMES)} FROM shop.every_type"
        result, _, _ = await fetch_json(pool, sql)
        assert [(column.name, column.type_name) for column in result.columns] == list(EXPECTED_TYPE_NAMES.items())

    async def test_unknown_array_types_become_arrays_of_strings_on_every_query(
        self, types_database: str, open_pool: PoolFactory
    ) -> None:
        """An enum array is a JSON array of strings, also once known; a box[] (';'-delimited) stays text."""
        pool = await open_pool(maxsize=1)
        type_names = TypeNameCache()
        for _ in range(2):
            _, rows, _ = await fetch_json(pool, "SELECT moods FROM shop.every_type ORDER BY i4", type_names=type_names)
            assert rows == [{"moods": ["happy", "sad"]}, {"moods": None}]
        _, rows, _ = await fetch_json(pool, "SELECT ARRAY['(1,1),(0,0)'::box] AS boxes", type_names=type_names)
        assert rows == [{"boxes": "{(1,1),(0,0)}"}]

    async def test_special_timestamps_keep_postgresql_spelling(self, open_pool: PoolFactory) -> None:
        """infinity and BC timestamps stay as PostgreSQL prints them; offsets become +hh:mm."""
        pool = await open_pool()
        _, rows, _ = await fetch_json(
            pool,
            "SELECT 'infinity'::timestamptz AS a, '-infinity'::timestamp AS b, "
            "'0044-03-15 12:00:00+00 BC'::timestamptz AS c, '2024-05-06 07:08:09'::timestamp AS d, "
            "'2024-05-06 07:08:09.5-03:30'::timestamptz AS e, '2024-05-06'::date AS f",
        )
        assert rows == [
            {
                "a": "infinity",
                "b": "-infinity",
                "c": "0044-03-15 12:00:00+00 BC",
                "d": "2024-05-06T07:08:09",
                "e": "2024-05-06T10:38:09.5+00:00",
                "f": "2024-05-06",
            }
        ]

    async def test_query_text_reaches_the_database_unchanged(self, open_pool: PoolFactory) -> None:
        """Percent signs are not parameter markers and a trailing line comment does not swallow the rest."""
        pool = await open_pool()
        _, rows, _ = await fetch_json(pool, "SELECT 'a%sb%%' AS text, 7 % 3 AS remainder -- trailing comment")
        assert rows == [{"text": "a%sb%%", "remainder": 1}]


    async def test_casters_stay_on_gateway_connections(self, scratch_database: str, open_pool: PoolFactory) -> None:
        """Other psycopg2 connections in the process keep psycopg2's default types."""
        pool = await open_pool()
        _, rows, _ = await fetch_json(pool, "SELECT 1.5::numeric AS n")
        assert rows == [{"n": "1.5"}]
        connection = connect(scratch_database)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1.5::numeric")
                assert cursor.fetchone() == (decimal.Decimal("1.5"),)
        finally:
            connection.close()


class TestTypeNameCache:
    async def test_known_oids_are_answered_without_the_database(self, open_pool: PoolFactory) -> None:
        """Names read once are served from the cache; only new OIDs are looked up."""
        pool = await open_pool()
        type_names = TypeNameCache()
        async with pool.acquire() as connection:
            assert await type_names.names_for(connection, [23, 1184, 1007]) == [
                "integer",
                "timestamp with time zone",
                "integer[]",
            ]
        assert await type_names.names_for(object(), [1007, 23]) == ["integer[]", "integer"]
        assert type_names.is_text_array(1007) and not type_names.is_text_array(23)


class TestColumnNames:
    async def test_repeated_names_get_numbered_suffixes(self, open_pool: PoolFactory) -> None:
        """The second and third id become id_2 and id_3, in columns and in the rows."""
        pool = await open_pool()
        result, rows, _ = await fetch_json(pool, "SELECT 1 AS id, 2 AS id, 'x' AS note, 3 AS id")
        assert [column.name for column in result.columns] == ["id", "id_2", "note", "id_3"]
        assert rows == [{"id": 1, "id_2": 2, "note": "x", "id_3": 3}]

    def test_a_suffix_never_takes_a_real_column_name(self) -> None:
        """A duplicate skips a suffixed name that another column of the result really has."""
        assert unique_column_names(["id", "id", "id_2"]) == ["id", "id_3", "id_2"]
        assert unique_column_names(["a", "b"]) == ["a", "b"]


class TestBatchesAndLimits:
    async def test_rows_beyond_the_limit_are_cut_and_flagged(self, open_pool: PoolFactory) -> None:
        """A result longer than row_limit stops there with truncated true."""
        pool = await open_pool()
        result, rows, _ = await fetch_json(pool, "SELECT i FROM generate_series(1, 25) AS i", limits(row_limit=10))
        assert rows == [{"i": i} for i in range(1, 11)]
        assert result.row_count == 10 and result.truncated is True

    async def test_a_result_exactly_at_the_limit_is_not_truncated(self, open_pool: PoolFactory) -> None:
        """row_limit rows in all, across batches, is a complete answer."""
        pool = await open_pool()
        query_limits = limits(row_limit=10, batch_size=4)
        result, rows, chunks = await fetch_json(pool, "SELECT i FROM generate_series(1, 10) AS i", query_limits)
        assert [row["i"] for row in rows] == list(range(1, 11))
        assert result.row_count == 10 and result.truncated is False
        assert len(chunks) == 3

    async def test_large_results_stream_in_ordered_batches(self, open_pool: PoolFactory) -> None:
        """12,000 rows arrive complete, in order, one chunk per batch: 5,000 first, then as many as the budget allows."""
        pool = await open_pool()
        result, rows, chunks = await fetch_json(
            pool, "SELECT i, 'row ' || i AS label FROM generate_series(1, 12000) AS i", limits(batch_size=5000)
        )
        assert result.row_count == 12000 and result.truncated is False
        assert [row["i"] for row in rows] == list(range(1, 12001))
        assert rows[-1] == {"i": 12000, "label": "row 12000"}
        later_batch = FETCH_BUDGET_BYTES // MIN_ROW_CAP_BYTES  # small rows: the most a later fetch asks
        assert len(chunks) == 1 + math.ceil(7000 / later_batch)
        assert all(not chunk.startswith(b"[") and not chunk.endswith(b"]") for chunk in chunks)

    async def test_an_empty_result_has_columns_and_no_chunks(self, open_pool: PoolFactory) -> None:
        """A query without rows still reports its columns, and yields nothing."""
        pool = await open_pool()
        result, rows, chunks = await fetch_json(pool, "SELECT 1 AS one WHERE false")
        assert [column.name for column in result.columns] == ["one"]
        assert rows == [] and chunks == [] and result.row_count == 0


class TestTimeLimit:
    async def test_statement_timeout_becomes_query_timeout_and_stops_the_backend(
        self, scratch_database: str, open_pool: PoolFactory
    ) -> None:
        """pg_sleep(5) under a 1 s limit raises QueryTimeout, not before the limit, and leaves nothing running."""
        pool = await open_pool(statement_timeout_ms=1000, maxsize=1)
        pid_before = await backend_pid(pool)
        started = time.monotonic()
        with pytest.raises(QueryTimeout, match="longer than 1 s"):
            await fetch_json(pool, "SELECT pg_sleep(5) AS slept", limits(statement_timeout=1.0))
        # No upper bound (the machine's load decides it): pg_sleep(5) run to its end would answer, not raise.
        assert time.monotonic() - started >= 1.0
        assert running_statements(scratch_database, "pg_sleep") == []
        assert await backend_pid(pool) == pid_before

    async def test_the_overall_deadline_cancels_on_the_server(
        self, scratch_database: str, open_pool: PoolFactory
    ) -> None:
        """The runner's own deadline stops a statement the session limit would still allow."""
        pool = await open_pool(statement_timeout_ms=60_000, maxsize=1)
        started = time.monotonic()
        with pytest.raises(QueryTimeout):
            await fetch_json(pool, "SELECT pg_sleep(30) AS slept", limits(statement_timeout=1.0))
        # Under the session's 60 s limit pg_sleep(30) would end and answer: the raise is the runner's deadline.
        assert time.monotonic() - started >= 1.0
        await wait_until(lambda: running_statements(scratch_database, "pg_sleep") == [], 2.0, "no pg_sleep runs")
        assert (await fetch_json(pool, "SELECT 1 AS one"))[1] == [{"one": 1}]

    async def test_the_deadline_covers_all_fetches(self, open_pool: PoolFactory) -> None:
        """A stream still running at the deadline fails from the rows after its first chunks."""
        pool = await open_pool(statement_timeout_ms=60_000, maxsize=1)
        query_limits = limits(statement_timeout=1.0, batch_size=10)
        chunks: list[bytes] = []
        with pytest.raises(QueryTimeout):
            async with stream(pool, "SELECT i FROM generate_series(1, 1000) AS i", query_limits) as result:
                async for chunk in json_chunks(result):
                    chunks.append(chunk)
                    await asyncio.sleep(0.6)
        assert 1 <= len(chunks) <= 2
        assert (await fetch_json(pool, "SELECT 1 AS one"))[1] == [{"one": 1}]


    async def test_the_log_filter_drops_aiopg_cancel_records(
        self, scratch_database: str, open_pool: PoolFactory, caplog: pytest.LogCaptureFixture
    ) -> None:
        """With CanceledStatementLogFilter on the asyncio logger, a time-out leaves no asyncio error record."""
        pool = await open_pool(statement_timeout_ms=60_000, maxsize=1)
        log_filter = CanceledStatementLogFilter()
        logging.getLogger("asyncio").addFilter(log_filter)
        try:
            with caplog.at_level(logging.ERROR, logger="asyncio"), pytest.raises(QueryTimeout):
                await fetch_json(pool, "SELECT pg_sleep(30) AS slept", limits(statement_timeout=0.5))
        finally:
            logging.getLogger("asyncio").removeFilter(log_filter)
        assert [record for record in caplog.records if record.name == "asyncio"] == []


class TestCancellation:
    async def test_cancelling_the_task_stops_the_statement_and_keeps_the_connection(
        self, scratch_database: str, open_pool: PoolFactory
    ) -> None:
        """A cancelled request cancels its statement on the server; the pool's only connection comes back idle."""
        pool = await open_pool(maxsize=1)
        pid_before = await backend_pid(pool)
        task = asyncio.create_task(fetch_json(pool, "SELECT pg_sleep(30) AS slept"))
        await wait_until(lambda: running_statements(scratch_database, "pg_sleep") != [], 5.0, "pg_sleep runs")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_until(lambda: running_statements(scratch_database, "pg_sleep") == [], 2.0, "no pg_sleep runs")
        assert pool.freesize == 1
        assert await backend_pid(pool) == pid_before

    async def test_a_result_read_in_batches_ends_its_transaction_and_keeps_its_connection(
        self, open_pool: PoolFactory
    ) -> None:
        """A result fetched in several batches (an explicit transaction) commits on close; the backend is reused."""
        pool = await open_pool(maxsize=1)
        pid_before = await backend_pid(pool)
        result, rows, _ = await fetch_json(pool, "SELECT i FROM generate_series(1, 100) AS i", limits(batch_size=10))
        assert len(rows) == 100 and not result.truncated
        async with pool.acquire() as connection:
            assert connection.raw.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_IDLE
        assert await backend_pid(pool) == pid_before

    async def test_cancelling_between_batches_rolls_back(self, open_pool: PoolFactory) -> None:
        """A request cancelled while it writes a chunk ends its transaction; the connection is reused idle."""
        pool = await open_pool(maxsize=1)
        pid_before = await backend_pid(pool)
        first_chunk = asyncio.Event()

        async def slow_client() -> None:
            async with stream(pool, "SELECT i FROM generate_series(1, 100) AS i", limits(batch_size=10)) as result:
                async for _ in json_chunks(result):
                    first_chunk.set()
                    await asyncio.sleep(30)

        task = asyncio.create_task(slow_client())
        await asyncio.wait_for(first_chunk.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert pool.freesize == 1
        async with pool.acquire() as connection:
            assert connection.raw.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_IDLE
        assert await backend_pid(pool) == pid_before


class TestErrors:
    async def test_database_errors_become_query_failed_with_its_message(
        self, open_pool: PoolFactory
    ) -> None:
        """Division by zero is QueryFailed carrying the database's message, and the connection stays usable."""
        pool = await open_pool(maxsize=1)
        with pytest.raises(QueryFailed, match="division by zero") as raised:
            await fetch_json(pool, "SELECT 1 / 0 AS boom")
        assert raised.value.status == 400 and raised.value.code == "query_failed"
        with pytest.raises(QueryFailed, match='column "nope" does not exist'):
            await fetch_json(pool, "SELECT nope FROM pg_catalog.pg_class")
        assert (await fetch_json(pool, "SELECT 1 AS one"))[1] == [{"one": 1}]

    async def test_an_error_after_the_first_batch_comes_from_the_rows(
        self, open_pool: PoolFactory
    ) -> None:
        """A row that fails in a later batch raises QueryFailed from the rows after the earlier chunks."""
        pool = await open_pool(maxsize=1)
        chunks: list[bytes] = []
        with pytest.raises(QueryFailed, match="division by zero"):
            sql = "SELECT 1 / (20 - i) AS x FROM generate_series(1, 30) AS i"
            async with stream(pool, sql, limits(batch_size=10)) as result:
                async for chunk in json_chunks(result):
                    chunks.append(chunk)
        assert len(chunks) == 1
        assert (await fetch_json(pool, "SELECT 1 AS one"))[1] == [{"one": 1}]

    async def test_a_killed_connection_is_unavailable_and_replaced(
        self, scratch_database: str, open_pool: PoolFactory
    ) -> None:
        """A backend terminated mid-stream gives DatabaseUnavailable; the pool opens a fresh connection next."""
        pool = await open_pool(maxsize=1)
        with pytest.raises(DatabaseUnavailable) as raised:
            async with stream(pool, "SELECT i FROM generate_series(1, 1000) AS i", limits(batch_size=10)) as result:
                async for _ in json_chunks(result):
                    run_sql(None, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                            "AND application_name = 'dbgateway'", (scratch_database,))
        assert raised.value.status == 503
        assert (await fetch_json(pool, "SELECT 1 AS one"))[1] == [{"one": 1}]

    async def test_no_free_connection_within_the_acquire_limit(self, open_pool: PoolFactory) -> None:
        """With the only connection held, a query gives up after acquire_timeout with a 503."""
        pool = await open_pool(maxsize=1)
        async with pool.acquire():
            started = time.monotonic()
            with pytest.raises(DatabaseUnavailable, match="became free within 0.3 s") as raised:
                await fetch_json(pool, "SELECT 1 AS one", limits(acquire_timeout=0.3))
            # Not before the limit; the message names it, so the limit, not another failure, ended the wait.
            assert time.monotonic() - started >= 0.3
        assert raised.value.status == 503
        assert (await fetch_json(pool, "SELECT 1 AS one"))[1] == [{"one": 1}]

    async def test_an_unreachable_server_is_unavailable_without_the_password(
        self, open_pool: PoolFactory
    ) -> None:
        """A refused connection is DatabaseUnavailable with libpq's reason and never the password."""
        pool = await open_pool(host="127.0.0.1", port=1, password="s3cret-password", connect_timeout=2)
        with pytest.raises(DatabaseUnavailable) as raised:
            await fetch_json(pool, "SELECT 1 AS one")
        assert raised.value.status == 503
        assert "cannot connect to the database" in raised.value.message
        assert "s3cret-password" not in raised.value.message
