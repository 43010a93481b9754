"""``ThreadedPool``, the kit's base for blocking client libraries: slots, acquire time limit, timer, cancel.

Driven through a minimal pool over the standard library's sqlite3 (an in-memory
database per connection): the base's behaviour does not depend on the database,
and the SQLite example driver runs the full contract kit on it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest
import structlog

from gateway.contract.driver_protocol import ColumnInfo, PoolLimits, Row
from gateway.contract.threaded_pool import ThreadedPool
from gateway.errors import DatabaseUnavailable, QueryFailed, QueryTimeout

ENDLESS = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"
DEADLINE = 20.0


class Cursor:
    def __init__(self, cursor: sqlite3.Cursor, started: threading.Event) -> None:
        self.cursor = cursor
        self.started = started

    def fetch(self, size: int) -> list[Row]:
        return [list(row) for row in self.cursor.fetchmany(size)]

    @property
    def columns(self) -> list[ColumnInfo]:
        return [ColumnInfo(column[0], "") for column in self.cursor.description or ()]


class MemoryPool(ThreadedPool[sqlite3.Connection, str]):
    database_errors = (sqlite3.Error,)

    def __init__(self, limits: PoolLimits) -> None:
        super().__init__(limits, structlog.get_logger())
        self.started = threading.Event()
        """Set once a statement began (the endless one never returns from its first step)."""

    def connect(self) -> sqlite3.Connection:
        return sqlite3.connect(":memory:", check_same_thread=False)

    def execute(self, connection: sqlite3.Connection, checked: str) -> Cursor:
        self.started.set()
        return Cursor(connection.execute(checked), self.started)

    def interrupt(self, connection: sqlite3.Connection) -> None:
        connection.interrupt()


def limits(**changed: float) -> PoolLimits:
    values = {"min_size": 0, "max_size": 1, "acquire_timeout": 30.0, "statement_timeout": 600.0, "row_limit": 5}
    return PoolLimits(**{**values, **changed}, batch_size=2)  # type: ignore[arg-type]


async def rows(pool: MemoryPool, sql: str) -> list[Row]:
    async with pool.run_query(sql) as result:
        return [row async for batch in result.batches() for row in batch]


@pytest.mark.asyncio
async def test_rows_come_in_batches_up_to_one_past_the_row_limit() -> None:
    pool = MemoryPool(limits())
    try:
        many = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 40) SELECT n FROM c"
        assert await rows(pool, many) == [[n] for n in range(1, 7)]
        assert await rows(pool, "SELECT 1 AS a WHERE 0") == []
        with pytest.raises(QueryFailed, match="no such table"):
            await rows(pool, "SELECT * FROM missing")
        assert pool.stats().in_use == 0 and pool.stats().acquire_waits.count == 3
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_the_statement_timer_interrupts_and_answers_query_timeout() -> None:
    pool = MemoryPool(limits(statement_timeout=0.2))
    try:
        with pytest.raises(QueryTimeout):
            await asyncio.wait_for(rows(pool, ENDLESS), DEADLINE)
        assert await rows(pool, "SELECT 7") == [[7]]  # the one slot came back
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_no_free_slot_within_the_acquire_time_limit_is_unavailable_and_cancel_frees_it() -> None:
    pool = MemoryPool(limits(acquire_timeout=0.05))
    try:
        holder = asyncio.create_task(rows(pool, ENDLESS))
        assert await asyncio.to_thread(pool.started.wait, DEADLINE), "the endless statement did not start"
        with pytest.raises(DatabaseUnavailable, match="acquire time limit"):
            await asyncio.wait_for(rows(pool, "SELECT 1"), DEADLINE)
        assert pool.stats().in_use == 1
        holder.cancel()  # as a request whose client went away: the statement is interrupted, the slot freed
        await asyncio.gather(holder, return_exceptions=True)
        assert pool.stats().in_use == 0
        assert await asyncio.wait_for(rows(pool, "SELECT 1"), DEADLINE) == [[1]]
    finally:
        await pool.close()
