"""A replica cut off from its registry database fails closed once its copy is older than registry_max_staleness.

Issue 20: a replica partitioned from the PostgreSQL registry kept answering a
token revoked through another replica for as long as the partition lasted, and
``/readyz`` stayed 200. Replica A reaches the registry database through a TCP
proxy the test makes silent (``HangingProxy``: the path goes quiet, no socket
closes); replica B reaches it directly and revokes the grant. A must stop
answering from its copy (503 ``registry_unavailable``, ``/readyz`` 503 stale)
within its limit, and recover by itself when the path comes back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from cryptography.fernet import Fernet

from support import (
    GatewayFactory,
    admin_headers,
    dsn_under_test,
    grant,
    register_database,
    server_parameters,
    user_headers,
    wait_until,
)
from tcp_proxy import HangingProxy

KEY = Fernet.generate_key().decode()
STALENESS = 10.0
"""The replicas' registry_max_staleness: the smallest allowed, so the test is short."""
SETTLE_SECONDS = 30.0
"""Deadline for the replica to notice (the limit, plus a version check and reconnection attempts) or recover."""
TOKEN = "staleness-reader-token-2f8a"
TABLE = "shop_public_items"
SHOP_SQL = "CREATE TABLE public.items (id integer); INSERT INTO public.items VALUES (1), (2)"
COUNT = {"local_database_name": "shop", "query": "SELECT count(*) AS n FROM public.items"}


def url_of(database: str, proxy: HangingProxy | None = None) -> str:
    if proxy is None:
        return dsn_under_test().rsplit("/", 1)[0] + f"/{database}"
    return f"postgresql://{server_parameters()['username']}@127.0.0.1:{proxy.port}/{database}"


async def getdata_status(client: TestClient) -> tuple[int, Any]:
    response = await client.get("/GetData", params=COUNT, headers=user_headers(TOKEN))
    return response.status, await response.json()


async def readiness(client: TestClient) -> tuple[int, Any]:
    response = await client.get("/readyz")
    return response.status, await response.json()


async def test_a_partitioned_replica_stops_serving_a_revoked_grant_and_comes_back(
    make_gateway: GatewayFactory,
    tmp_path: Path,
    registry_database: str,
    shop_database: str,
    proxy: HangingProxy,
) -> None:
    settings = {"secret_key": KEY, "registry_max_staleness": STALENESS}
    cut_off = await make_gateway(tmp_path / "a", registry_url=url_of(registry_database, proxy), **settings)
    direct = await make_gateway(tmp_path / "b", registry_url=url_of(registry_database), **settings)
    await register_database(direct, "shop", shop_database)
    await grant(direct, TOKEN, TABLE)

    async def a_serves() -> bool:
        return (await getdata_status(cut_off))[0] == 200

    await wait_until(a_serves, SETTLE_SECONDS, "replica A learns of the grant")
    proxy.hang()
    response = await direct.delete("/GrantTableAccess", params={"user_token": TOKEN, "local_table_name": TABLE},
                                   headers=admin_headers())
    assert response.status == 200, await response.text()

    async def a_refuses() -> bool:
        status, body = await getdata_status(cut_off)
        if status == 200:
            return False
        assert (status, body["error"]) == (503, "registry_unavailable"), body
        return True

    await wait_until(a_refuses, SETTLE_SECONDS, "replica A stops answering from its stale copy")
    status, body = await readiness(cut_off)
    assert (status, body["error"], body["registry"]) == (503, "registry_unavailable", "stale"), body
    listed = await cut_off.get("/Table/list", headers=admin_headers())
    assert listed.status == 503
    assert (await cut_off.get("/healthz")).status == 200
    log = cut_off.log_stream  # type: ignore[attr-defined]
    await wait_until(lambda: '"registry_stale"' in log.getvalue(), SETTLE_SECONDS, "registry_stale is logged")
    assert (await readiness(direct))[0] == 200  # the replica that reaches the registry is unaffected

    proxy.resume()

    async def a_back() -> bool:
        return (await readiness(cut_off))[0] == 200

    await wait_until(a_back, SETTLE_SECONDS, "replica A is back in step")
    status, body = await getdata_status(cut_off)
    assert (status, body["error"]) == (403, "access_denied"), body
    assert (await readiness(cut_off))[1]["registry"] == "loaded"
