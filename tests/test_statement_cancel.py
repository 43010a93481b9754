"""``drivers.postgres.connections.cancel``: both ways of cancelling a statement (libpq 17's non-blocking cancel,
and PQcancel in a thread for older libpq) cancel a running statement, and on a silent network path give up at
their deadline while the event loop runs on. The end-to-end behaviour is in test_hung_database.py.
"""

from __future__ import annotations

import asyncio

import aiopg
import psycopg2
import psycopg2.extensions
import pytest

from drivers.postgres.connections.cancel import NONBLOCKING_CANCEL, NO_ANSWER, start_cancel
from support import dsn_under_test, run_sql, wait_until
from tcp_proxy import HangingProxy

WAYS = [
    pytest.param(True, id="nonblocking", marks=pytest.mark.skipif(not NONBLOCKING_CANCEL, reason="libpq < 17")),
    pytest.param(False, id="thread"),
]


async def connect(port: int | None = None) -> aiopg.Connection:
    parameters = psycopg2.extensions.parse_dsn(dsn_under_test())
    if port is not None:
        parameters.update(host="127.0.0.1", port=str(port))
    return await aiopg.connect(**parameters, application_name="cancel-test")


@pytest.mark.parametrize("nonblocking", WAYS)
async def test_a_running_statement_is_cancelled(nonblocking: bool) -> None:
    connection = await connect()
    try:
        pid = connection.raw.get_backend_pid()
        cursor = await connection.cursor()
        running = asyncio.ensure_future(cursor.execute("SELECT pg_sleep(60)"))

        def sleeping() -> bool:
            rows = run_sql(None, "SELECT wait_event FROM pg_stat_activity WHERE pid = %s", (pid,))
            return rows == [("PgSleep",)]

        await wait_until(sleeping, 10, "the statement runs")
        loop = asyncio.get_running_loop()
        assert await start_cancel(connection.raw, loop.time() + 10, nonblocking=nonblocking) is None
        # aiopg reports the server's cancel as CancelledError
        with pytest.raises((asyncio.CancelledError, psycopg2.extensions.QueryCanceledError)):
            await asyncio.wait_for(running, 10)
    finally:
        connection.close()


@pytest.mark.parametrize("nonblocking", WAYS)
async def test_on_a_silent_path_the_cancel_gives_up_at_its_deadline_and_the_loop_runs_on(
    nonblocking: bool, proxy: HangingProxy
) -> None:
    connection = await connect(proxy.port)
    try:
        proxy.hang()
        loop = asyncio.get_running_loop()
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        try:
            outcome = await start_cancel(connection.raw, loop.time() + 1, nonblocking=nonblocking)
        finally:
            ticker.cancel()
        assert outcome == NO_ANSWER
        assert proxy.connections_while_hung == 1  # the cancel request's connection, held by the silent path
        assert ticks > 0, "the event loop was held while the cancel waited"
    finally:
        connection.close()
        proxy.resume()


async def test_a_closed_connection_is_not_cancelled() -> None:
    connection = await connect()
    raw = connection.raw
    connection.close()
    assert await start_cancel(raw, asyncio.get_running_loop().time() + 1) == "the connection is closed"
