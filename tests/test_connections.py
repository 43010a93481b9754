"""Taking connections from aiopg's pool: a free one straight away, a waiting request first, the pool's books kept."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiopg
import pytest

from drivers.postgres.connections.acquire import acquire_connection, release_connection
from gateway.errors import DatabaseUnavailable
from support import dsn_under_test, wait_until


@pytest.fixture
async def one_connection_pool() -> AsyncIterator[aiopg.Pool]:
    async with aiopg.create_pool(dsn_under_test(), minsize=0, maxsize=1, timeout=10) as pool:
        yield pool


def waiting_for_a_connection(pool: aiopg.Pool) -> int:
    return len(pool._cond._waiters)  # noqa: SLF001 - what the fast path itself looks at


class TestTakingAFreeConnection:
    async def test_a_free_connection_is_taken_and_given_back_with_the_pool_books_kept(
        self, one_connection_pool: aiopg.Pool
    ) -> None:
        """A connection taken at once (no task, no timed wait) counts as used, and comes back free, every time."""
        pool = one_connection_pool
        first = await acquire_connection(pool, 5)
        release_connection(pool, first)
        for _ in range(5):
            connection = await acquire_connection(pool, 5)
            assert connection is first
            assert (pool.size, pool.freesize) == (1, 0)
            async with connection.cursor() as cursor:
                await cursor.execute("SELECT 1")
                assert await cursor.fetchone() == (1,)
            release_connection(pool, connection)
            assert (pool.size, pool.freesize) == (1, 1)

    async def test_a_request_that_waits_gets_the_next_free_connection_before_a_newcomer(
        self, one_connection_pool: aiopg.Pool
    ) -> None:
        """A connection given back goes to the request already waiting, not to one that arrives just then."""
        pool = one_connection_pool
        held = await acquire_connection(pool, 5)
        waiting = asyncio.ensure_future(acquire_connection(pool, 10))
        await wait_until(lambda: waiting_for_a_connection(pool) == 1, 10, "the first request waits in aiopg's pool")
        release_connection(pool, held)
        newcomer = asyncio.ensure_future(acquire_connection(pool, 0.5))
        # The newcomer gives up after 0.5 s: the only connection went to the request that waited.
        with pytest.raises(DatabaseUnavailable):
            await newcomer
        taken = await waiting
        assert taken is held
        release_connection(pool, taken)
