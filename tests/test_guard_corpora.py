"""The legitimate query sets (TPC-H, TPC-DS, JOB, analyst) answer through GetData with the rows psql answers."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg2
import psycopg2.extensions
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestServer

from drivers.postgres.pool import session_options
from gateway.web.app import create_app, server_options
from gateway.contract.driver_protocol import PoolLimits
from openapi_contract import ContractCheckedClient
from query_corpora import corpus_names, data_sql, load_queries, schema_sql
from support import (
    all_table_names,
    database_from,
    dsn_under_test,
    gateway_config,
    grant,
    register_database,
    user_headers,
)

TOKEN = "corpora-reader-token-19c4"
"""The token every table of the corpora database is granted to."""

LOCAL_NAME = "corpora"

STATEMENT_TIMEOUT = 60.0
"""Seconds; far above what any query takes on the small data (the slowest takes well under a second)."""

ROW_LIMIT = 1_000_000
"""Far above the largest answer (a few thousand rows), so no answer is cut."""

EXPECTED_COUNTS = {"analyst": 60, "job": 113, "tpcds": 99, "tpch": 22}

REFUSED_BY_TODAYS_GUARD: dict[str, str] = {}
"""Queries of the sets the guard refuses; issue 19's bar is that there are none."""
"""``<set>/<id>`` -> the guard's refusal message when this module was added (before issue 19's rewrite).

Groups: ``-`` read as possibly jsonb_delete (and LIKE, @>, replace, string_to_table, btrim) over a value computed
in the query or a column of a sub-select/CTE; ``>`` between CTE columns read as possibly oidvectorgt; random(),
clock_timestamp() and gen_random_uuid() refused as volatile. Issue 19's guard must answer every one: each is
marked strict xfail, so a query the new guard answers fails the run until it is taken off this list, which must
end up empty.
"""


def _cases() -> list[Any]:
    cases = []
    for name in corpus_names():
        for query_id, sql in load_queries(name):
            case_id = f"{name}/{query_id}"
            marks = []
            if case_id in REFUSED_BY_TODAYS_GUARD:
                reason = f"refused by today's guard (issue 19): {REFUSED_BY_TODAYS_GUARD[case_id]}"
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            cases.append(pytest.param(sql, id=case_id, marks=marks))
    return cases


@pytest.fixture(scope="module")
def corpora_database() -> Iterator[str]:
    """A scratch database with the four sets' schemas and data."""
    setup = "\n".join(schema_sql(name) + "\n" + data_sql(name) for name in corpus_names())
    with database_from(setup) as name:
        yield name


@pytest.fixture(scope="module")
def direct(corpora_database: str) -> Iterator[psycopg2.extensions.connection]:
    """A psycopg2 session on the database with the settings of a gateway session (search_path, TimeZone, ...)."""
    limits = PoolLimits(min_size=1, max_size=1, acquire_timeout=5, statement_timeout=STATEMENT_TIMEOUT,
                        row_limit=ROW_LIMIT)
    parameters = psycopg2.extensions.parse_dsn(dsn_under_test())
    connection = psycopg2.connect(**{**parameters, "dbname": corpora_database, "options": session_options(limits)})
    connection.autocommit = True
    try:
        yield connection
    finally:
        connection.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def corpora_client(
    corpora_database: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ContractCheckedClient]:
    """One gateway over real HTTP with the database registered and every table granted to ``TOKEN``."""
    config = gateway_config(tmp_path_factory.mktemp("corpora"), statement_timeout=STATEMENT_TIMEOUT,
                            row_limit=ROW_LIMIT)
    server = TestServer(create_app(config, log_stream=io.StringIO()))
    await server.start_server(**server_options(config))
    client = ContractCheckedClient(server)
    await client.start_server()
    try:
        await register_database(client, LOCAL_NAME, corpora_database)
        for table in await all_table_names(client):
            await grant(client, TOKEN, table)
        yield client
        assert client.contract_problems == []
    finally:
        await client.close()


def direct_row_count(connection: psycopg2.extensions.connection, sql: str) -> int:
    """Rows the query answers run directly, as psql would count them; the values are only counted, not converted."""
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.rowcount


def test_every_set_is_complete() -> None:
    """Every set has its full count of queries, and the refusal list names only queries that exist."""
    counts = {name: len(load_queries(name)) for name in corpus_names()}
    assert counts == EXPECTED_COUNTS
    ids = {f"{name}/{query_id}" for name in corpus_names() for query_id, _ in load_queries(name)}
    assert set(REFUSED_BY_TODAYS_GUARD) <= ids


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("sql", _cases())
async def test_query_answers_like_psql(
    corpora_client: ContractCheckedClient, direct: psycopg2.extensions.connection, sql: str
) -> None:
    """GetData answers 200 with every row: the same number of rows as the text run directly on the database."""
    expected = direct_row_count(direct, sql)
    response = await corpora_client.post(
        "/GetData", json={"local_database_name": LOCAL_NAME, "query": sql}, headers=user_headers(TOKEN)
    )
    text = await response.text()
    assert response.status == 200, text
    body = json.loads(text)[0]
    assert (body["status"], body["truncated"]) == ("success", False), text[:500]
    assert (len(body["data"]), body["row_count"]) == (expected, expected)
