"""The registry in PostgreSQL, shared by replicas: changes seen everywhere within a second, none lost, outages survived.

Two ``dbgateway serve`` processes (replicas A and B, their own ports and data
folders) share one registry database, a scratch database of the test server,
for the whole module; each test uses tokens of its own. Tests that stop or
restart the registry's server use a throwaway cluster and in-process gateways.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import psycopg2
import pytest
from aiohttp.test_utils import TestClient
from cryptography.fernet import Fernet

from gateway.request.auth import hash_user_token
from gateway.registry.file_format import dump_registry, load_registry
from gateway.registry.postgres_follower import VERSION_CHECK_SECONDS
from gateway.registry.secrets_at_rest import PasswordCipher
from gateway_processes import GatewayProcess, answer
from postgres_cluster import ThrowawayCluster, cluster_tools_missing
from support import (
    GatewayFactory,
    admin_headers,
    connect,
    database_from,
    database_parameters,
    dsn_under_test,
    free_port,
    register_database,
    run_sql,
    user_headers,
)

KEY = Fernet.generate_key().decode()
TABLE = "shop_public_items"
COUNT_ITEMS = {"local_database_name": "shop", "query": "SELECT count(*) AS n FROM public.items"}
VISIBLE_WITHIN_SECONDS = 1.0
"""The promise: a change made through one replica is served by every other within this time."""
SETTLE_SECONDS = 10.0
"""Deadline for conditions without a promised time (reconnection after an outage, convergence after a storm)."""


def registry_url(database: str, *, port: int | None = None) -> str:
    if port is not None:
        return f"postgresql://postgres@127.0.0.1:{port}/{database}"
    return dsn_under_test().rsplit("/", 1)[0] + f"/{database}"


def new_token(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(8)}"


async def wait_for(condition: Callable[[], Awaitable[bool]], deadline: float, failure: str) -> None:
    """Return once ``condition()`` holds; fail when ``deadline`` (time.monotonic) passes first."""
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(failure)
        await asyncio.sleep(0.01)


def stored_document(database: str, *, port: int | None = None) -> dict[str, Any]:
    """The registry document as the registry database (of the test server, or of a cluster's port) holds it now."""
    sql = "SELECT document FROM dbgateway_registry.registry"
    if port is None:
        return run_sql(database, sql)[0][0]
    connection = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname=database)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchone()[0]
    finally:
        connection.close()


def stored_token_hashes(document: dict[str, Any]) -> set[str]:
    return {grant["token_hash"] for grant in document["grants"]}


def hashes_of(document: dict[str, Any], tokens: list[str]) -> set[str]:
    return {hash_user_token(document["token_salt"], token) for token in tokens}


# -- two replicas sharing a registry database on the test server ---------------------------------------


SHOP_SQL = "CREATE TABLE public.items (id integer); INSERT INTO public.items VALUES (1), (2), (3)"
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, module_registry_database: str, shop_database: str
) -> Iterator[tuple[GatewayProcess, GatewayProcess]]:
    """Replicas A and B on one registry database, "shop" registered through A."""
    folder = tmp_path_factory.mktemp("replicas")
    settings = {"DBGATEWAY_REGISTRY_URL": registry_url(module_registry_database), "DBGATEWAY_SECRET_KEY": KEY}
    started = [GatewayProcess(folder / name, **settings) for name in ("a", "b")]
    try:
        for replica in started:
            replica.wait_until_listening()
        asyncio.run(_register_shop(started[0], shop_database, started))
        yield started[0], started[1]
    finally:
        for replica in started:
            replica.stop()


async def _register_shop(through: GatewayProcess, database: str, everywhere: list[GatewayProcess]) -> None:
    """AddDatabase through one replica, then wait until every replica lists it (so tests start in step)."""
    async with aiohttp.ClientSession() as session:
        parameters = database_parameters("shop", database)
        status, body = await answer(session, "PUT", through.url("/Database"), params=parameters, headers=admin_headers())
        assert status == 200, body

        async def listed_everywhere() -> bool:
            answers = [
                await answer(session, "GET", replica.url("/Database/list"), headers=admin_headers())
                for replica in everywhere
            ]
            return all(body["List"] == ["shop"] for _, body in answers)

        await wait_for(listed_everywhere, time.monotonic() + SETTLE_SECONDS, "a replica never learnt of shop")


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    client_session = aiohttp.ClientSession()
    yield client_session
    # A close that never ends would hold the whole run (seen once under heavy load): fail instead.
    try:
        await asyncio.wait_for(client_session.close(), 60)
    except TimeoutError:
        pytest.fail("the test's HTTP client session did not close within 60 s", pytrace=False)


async def change_grant(session: aiohttp.ClientSession, base: str, method: str, token: str) -> tuple[int, Any]:
    """Grant (POST) or revoke (DELETE) ``TABLE`` for ``token`` through the gateway at ``base``."""
    params = {"user_token": token, "local_table_name": TABLE}
    return await answer(session, method, f"{base}/GrantTableAccess", params=params, headers=admin_headers())


async def serves(session: aiohttp.ClientSession, base: str, token: str) -> bool:
    """True when GetData over the shop table answers 200 for ``token``, False when 403."""
    status, body = await answer(session, "GET", f"{base}/GetData", params=COUNT_ITEMS, headers=user_headers(token))
    assert status in (200, 403), body
    return status == 200


async def lists_table(session: aiohttp.ClientSession, base: str, token: str) -> bool:
    status, body = await answer(session, "GET", f"{base}/Table/list", headers=user_headers(token))
    assert status == 200, body
    return body["List"] == [TABLE]


async def readiness(session: aiohttp.ClientSession, base: str) -> str:
    status, body = await answer(session, "GET", f"{base}/readyz")
    assert status == 200, body
    return str(body["registry"])


def base(replica: GatewayProcess | TestClient) -> str:
    if isinstance(replica, GatewayProcess):
        return replica.url("")
    return str(replica.make_url("")).rstrip("/")


async def test_a_grant_through_one_replica_is_served_by_the_other_within_a_second(
    replicas: tuple[GatewayProcess, GatewayProcess], session: aiohttp.ClientSession
) -> None:
    """A grant answered by A is served by B's GetData less than a second after that answer."""
    a, b = replicas
    token = new_token("granted")
    assert not await serves(session, b.url(""), token)
    status, body = await change_grant(session, a.url(""), "POST", token)
    assert status == 200, body
    deadline = time.monotonic() + VISIBLE_WITHIN_SECONDS
    await wait_for(lambda: serves(session, b.url(""), token), deadline, "B did not serve A's grant within 1 s")


async def test_a_revoke_through_the_other_replica_stops_the_first_within_a_second(
    replicas: tuple[GatewayProcess, GatewayProcess], session: aiohttp.ClientSession
) -> None:
    """A revoke answered by B makes A refuse GetData (403) less than a second after that answer."""
    a, b = replicas
    token = new_token("revoked")
    assert (await change_grant(session, a.url(""), "POST", token))[0] == 200
    await wait_for(lambda: serves(session, b.url(""), token), time.monotonic() + SETTLE_SECONDS, "B never served")
    assert await serves(session, a.url(""), token)
    status, body = await change_grant(session, b.url(""), "DELETE", token)
    assert status == 200 and body[0]["revoked"] is True, body
    deadline = time.monotonic() + VISIBLE_WITHIN_SECONDS

    async def refused() -> bool:
        return not await serves(session, a.url(""), token)

    await wait_for(refused, deadline, "A still served the token 1 s after B revoked it")


async def converged(
    session: aiohttp.ClientSession, gateways: list[str], tokens: list[str], deadline: float
) -> None:
    """Wait until every gateway lists the table for every token."""

    async def everywhere() -> bool:
        checks = [lists_table(session, gateway, token) for gateway in gateways for token in tokens]
        return all(await asyncio.gather(*checks))

    await wait_for(everywhere, deadline, "not every grant is served by every gateway")


async def test_200_concurrent_writes_split_over_both_replicas_are_all_kept(
    replicas: tuple[GatewayProcess, GatewayProcess], session: aiohttp.ClientSession, module_registry_database: str
) -> None:
    """200 grants sent at once, half through each replica, all answer 200 and all are in both and in the database."""
    a, b = replicas
    tokens = [new_token(f"bulk{index}") for index in range(200)]
    statuses = await asyncio.gather(
        *(change_grant(session, (a if index % 2 else b).url(""), "POST", token) for index, token in enumerate(tokens))
    )
    assert [status for status, _ in statuses] == [200] * 200
    document = stored_document(module_registry_database)
    assert hashes_of(document, tokens) <= stored_token_hashes(document)
    await converged(session, [a.url(""), b.url("")], tokens, time.monotonic() + VISIBLE_WITHIN_SECONDS)


def terminate_registry_sessions(database: str) -> int:
    """End every session on the registry database (and only there); how many there were."""
    rows = run_sql(
        None,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
        (database,),
    )
    return len(rows)


async def storm(
    session: aiohttp.ClientSession, gateways: list[str], disruption: Callable[[], object], rounds: int = 3
) -> tuple[list[str], list[Any]]:
    """Five writers per gateway grant new tokens without pause while ``disruption`` runs ``rounds`` times.

    Each disruption starts once ten more grants were acknowledged (so writes are in flight when it
    strikes), and the storm ends once ten were acknowledged after the last one (so the gateways
    recovered without help). Returns the tokens whose grant answered 200 and the other answers.
    """
    acknowledged: list[str] = []
    refused: list[Any] = []
    calm = asyncio.Event()

    async def writer(gateway: str) -> None:
        while not calm.is_set():
            token = new_token("storm")
            status, body = await change_grant(session, gateway, "POST", token)
            if status == 200:
                acknowledged.append(token)
            else:
                refused.append((status, body))
                await asyncio.sleep(0.01)  # the registry is down: do not spin on it

    async def ten_more() -> None:
        target = len(acknowledged) + 10

        async def reached() -> bool:
            return len(acknowledged) >= target

        await wait_for(reached, time.monotonic() + SETTLE_SECONDS, f"writes stopped succeeding: {refused[-3:]}")

    async def disrupt() -> None:
        try:
            for _ in range(rounds):
                await ten_more()
                await asyncio.to_thread(disruption)
            await ten_more()
        finally:
            calm.set()

    await asyncio.gather(disrupt(), *(writer(gateway) for gateway in gateways for _ in range(5)))
    return acknowledged, refused


async def changes_flow_both_ways(session: aiohttp.ClientSession, pair: list[str]) -> None:
    """A grant through each of the two gateways is served by the other within a second (nobody restarted them)."""
    for first, second in (pair, pair[::-1]):
        token = new_token("flowing")
        assert (await change_grant(session, first, "POST", token))[0] == 200
        deadline = time.monotonic() + VISIBLE_WITHIN_SECONDS
        await wait_for(lambda: serves(session, second, token), deadline, f"{second} no longer follows {first}")


def assert_only_registry_unavailable(refused: list[Any]) -> None:
    """Every write that was not acknowledged says registry_unavailable (503), nothing else."""
    assert all(status == 503 and body["error"] == "registry_unavailable" for status, body in refused), refused


async def test_terminated_registry_sessions_under_load_lose_no_acknowledged_write(
    replicas: tuple[GatewayProcess, GatewayProcess], session: aiohttp.ClientSession, module_registry_database: str
) -> None:
    """Ending the registry's sessions during concurrent writes: every 200 is kept, and the replicas recover alone."""
    a, b = replicas
    terminated: list[int] = []
    acknowledged, refused = await storm(
        session, [a.url(""), b.url("")], lambda: terminated.append(terminate_registry_sessions(module_registry_database))
    )
    assert len(terminated) == 3 and all(count >= 2 for count in terminated), terminated  # both followers, at least
    assert_only_registry_unavailable(refused)
    document = stored_document(module_registry_database)
    assert hashes_of(document, acknowledged) <= stored_token_hashes(document)
    await converged(session, [a.url(""), b.url("")], acknowledged, time.monotonic() + SETTLE_SECONDS)
    await changes_flow_both_ways(session, [a.url(""), b.url("")])


async def test_a_change_made_without_a_notification_is_found_by_the_version_check(
    replicas: tuple[GatewayProcess, GatewayProcess], session: aiohttp.ClientSession, module_registry_database: str
) -> None:
    """A registry row changed with no NOTIFY (as if the notification were lost) is served after the periodic check."""
    a, b = replicas
    token = new_token("unnotified")
    connection = connect(module_registry_database)
    try:
        with connection.cursor() as cursor:
            cursor.execute("BEGIN; SELECT version, document::text FROM dbgateway_registry.registry FOR UPDATE")
            version, document = cursor.fetchone()
            state = load_registry(document.encode(), PasswordCipher(KEY))
            changed = state.with_grant(hash_user_token(state.token_salt, token), state.table_by_local_name(TABLE))
            cursor.execute(
                "UPDATE dbgateway_registry.registry SET version = %s, document = %s::jsonb; COMMIT",
                (version + 1, dump_registry(changed, PasswordCipher(KEY)).decode()),
            )
    finally:
        connection.close()
    deadline = time.monotonic() + VERSION_CHECK_SECONDS + 2.0
    for replica in (a, b):
        await wait_for(lambda: serves(session, replica.url(""), token), deadline, "the version check missed it")


# -- the registry's server stopped or restarted (a throwaway cluster, in-process gateways) ---------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[ThrowawayCluster]:
    """A PostgreSQL server of this module's own, to stop and restart; the data database stays on the test server."""
    missing = cluster_tools_missing()
    if missing:
        pytest.skip(missing)
    made = ThrowawayCluster.create(free_port())
    try:
        yield made
    finally:
        made.destroy()


@pytest.fixture
def cluster_registry(cluster: ThrowawayCluster) -> str:
    """The URL of a new, empty database on the throwaway cluster."""
    name = f"registry_{secrets.token_hex(4)}"
    cluster.run_sql(f"CREATE DATABASE {name}")
    return registry_url(name, port=cluster.port)


async def replica_pair(make_gateway: GatewayFactory, tmp_path: Path, url: str, shop: str) -> list[TestClient]:
    """Two in-process gateways on the registry at ``url``, "shop" registered through the first."""
    pair = [
        await make_gateway(data_dir=tmp_path / name, registry_url=url, secret_key=KEY) for name in ("c", "d")
    ]
    await register_database(pair[0], "shop", shop)
    return pair


async def test_a_restart_of_the_registry_server_under_load_loses_no_acknowledged_write(
    make_gateway: GatewayFactory,
    tmp_path: Path,
    cluster: ThrowawayCluster,
    cluster_registry: str,
    shop_database: str,
    session: aiohttp.ClientSession,
) -> None:
    """Restarting the registry's server during concurrent writes keeps every 200; both gateways recover alone."""
    pair = await replica_pair(make_gateway, tmp_path, cluster_registry, shop_database)
    gateways = [base(client) for client in pair]
    acknowledged, refused = await storm(session, gateways, cluster.restart)
    assert_only_registry_unavailable(refused)
    document = stored_document(cluster_registry.rsplit("/", 1)[1], port=cluster.port)
    assert hashes_of(document, acknowledged) <= stored_token_hashes(document)
    await converged(session, gateways, acknowledged, time.monotonic() + SETTLE_SECONDS)
    await changes_flow_both_ways(session, gateways)


async def test_while_the_registry_server_is_down_reads_go_on_and_writes_answer_503(
    make_gateway: GatewayFactory,
    tmp_path: Path,
    cluster: ThrowawayCluster,
    cluster_registry: str,
    shop_database: str,
    session: aiohttp.ClientSession,
) -> None:
    """Registry down: GetData and lists answer, changes are 503 registry_unavailable, /readyz says so; then recovery."""
    client, _ = await replica_pair(make_gateway, tmp_path, cluster_registry, shop_database)
    gateway = base(client)
    assert (await change_grant(session, gateway, "POST", "reader-token-0123456"))[0] == 200
    assert await readiness(session, gateway) == "loaded"
    await asyncio.to_thread(cluster.stop)
    try:

        async def unavailable() -> bool:
            return await readiness(session, gateway) == "unavailable"

        await wait_for(unavailable, time.monotonic() + SETTLE_SECONDS, "/readyz never reported the registry down")
        status, body = await change_grant(session, gateway, "POST", "writer-token-0123456")
        assert (status, body["error"]) == (503, "registry_unavailable"), body
        status, body = await answer(session, "PUT", f"{gateway}/UserToken", headers=admin_headers())
        assert (status, body["error"]) == (503, "registry_unavailable"), body
        assert await serves(session, gateway, "reader-token-0123456")
        status, body = await answer(session, "GET", f"{gateway}/Database/list", headers=admin_headers())
        assert (status, body["List"]) == (200, ["shop"])
    finally:
        await asyncio.to_thread(cluster.start)

    async def loaded() -> bool:
        return await readiness(session, gateway) == "loaded"

    await wait_for(loaded, time.monotonic() + SETTLE_SECONDS, "the gateway did not reconnect to the registry")
    assert (await change_grant(session, gateway, "POST", "writer-token-0123456"))[0] == 200
    assert await serves(session, gateway, "writer-token-0123456")


async def test_an_account_without_create_on_the_database_uses_a_schema_made_for_it(
    make_gateway: GatewayFactory, cluster: ThrowawayCluster, session: aiohttp.ClientSession
) -> None:
    """An administrator may create the schema for the registry's account, which then needs no CREATE on the database."""
    name = f"registry_{secrets.token_hex(4)}"
    cluster.run_sql(f"CREATE ROLE {name} LOGIN")
    cluster.run_sql(f"CREATE DATABASE {name}")
    connection = psycopg2.connect(host="127.0.0.1", port=cluster.port, user="postgres", dbname=name)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE SCHEMA dbgateway_registry AUTHORIZATION {name}")
            cursor.execute("SELECT has_database_privilege(%s, %s, 'CREATE')", (name, name))
            assert cursor.fetchone() == (False,)
    finally:
        connection.close()
    client = await make_gateway(registry_url=f"postgresql://{name}@127.0.0.1:{cluster.port}/{name}", secret_key=KEY)
    status, body = await answer(session, "PUT", f"{base(client)}/UserToken", headers=admin_headers())
    assert status == 200, body


def test_a_format_1_document_in_the_registry_database_loads_with_nothing_lost() -> None:
    """The registry in PostgreSQL holds the file format's JSON: a format 1 document migrates on load, as a file does."""
    from gateway.registry.postgres_schema import SCHEMA, RegistryDatabase

    cipher = PasswordCipher(Fernet.generate_key().decode())
    format_1 = {
        "format_version": 1, "token_salt": "00", "tables": [], "grants": [],
        "databases": [{"local_name": "shop", "host": "h", "port": 5432, "database": "shop", "username": "u",
                       "password": cipher.seal("pw-Bilby-5"), "base_type": "postgres"}],
    }
    with database_from() as name:
        database = RegistryDatabase(registry_url(name), name)
        database.open(cipher)
        run_sql(name, f"UPDATE {SCHEMA}.registry SET document = %s::jsonb", (json.dumps(format_1),))
        shop = database.read_existing(cipher).database("shop")
        assert shop.connection["ip"] == "h" and shop.connection["port"] == 5432
        assert shop.connection["password"] == "pw-Bilby-5" and "password" not in shop.connection.values
        database.rotate_key(cipher, cipher)  # any change writes format 2
        stored = stored_document(name)
        assert stored["format_version"] == 2 and stored["databases"][0]["connection"]["ip"] == "h"
