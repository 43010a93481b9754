"""A gateway started in-process over real HTTP for the contract kit, and the calls the kit makes to it.

The same way the gateway's own suite starts one: ``create_app`` with a
``GatewayConfig`` whose registry lives in a test's directory, served by
aiohttp's ``TestServer`` (which, like ``dbgateway serve``, cancels a request
whose client went away).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from gateway.settings.config import structure_config
from gateway.web.app import create_app, server_options

ADMIN_TOKEN = "contract-kit-admin-token-0123456789"
USER_TOKEN = "contract-kit-user-token-0123456789"
OTHER_TOKEN = "contract-kit-other-token-0123456789"
"""A token granted nothing."""
ONE_TABLE_TOKEN = "contract-kit-one-table-token-0123456789"
"""A token the catalog probes grant one table."""
CLOSE_SECONDS = 60.0
"""How long stopping a gateway may take before the test fails rather than hangs."""


@contextlib.asynccontextmanager
async def running_gateway(data_dir: Path, **settings: Any) -> AsyncIterator[TestClient]:
    """A gateway with ``settings`` (GatewayConfig's names) and an empty registry in ``data_dir``, for the block."""
    config = structure_config({"data_dir": str(data_dir), "admin_token": ADMIN_TOKEN, "log_format": "json", **settings})
    app = create_app(config, log_stream=io.StringIO())  # the log stays out of the test's output
    server = TestServer(app)
    await server.start_server(**server_options(config))  # TestServer's constructor drops these
    client = TestClient(server)
    await client.start_server()
    try:
        yield client
    finally:
        try:
            await asyncio.wait_for(client.close(), CLOSE_SECONDS)
        except TimeoutError:
            raise AssertionError(f"the gateway did not stop within {CLOSE_SECONDS:g} s") from None


def admin_headers() -> dict[str, str]:
    return {"admin_token": ADMIN_TOKEN, "Accept": "application/json"}


def user_headers(token: str = USER_TOKEN) -> dict[str, str]:
    return {"user_token": token, "Accept": "application/json"}


async def success_of(response: Any) -> Any:
    """The JSON body of a 200 answer."""
    text = await response.text()
    assert response.status == 200, f"{response.method} {response.url.path} answered {response.status}: {text}"
    return await response.json(content_type=None)


async def error_of(response: Any, status: int, code: str) -> str:
    """The message of an error answer, after checking its status and the contract's error body."""
    text = await response.text()
    assert response.status == status, f"expected {status} {code}, got {response.status}: {text}"
    assert response.content_type == "application/json", response.content_type
    body = await response.json()
    assert set(body) == {"status", "error", "message"} and body["status"] == "error", body
    assert body["error"] == code, body
    assert isinstance(body["message"], str) and body["message"], body
    return str(body["message"])


async def register(client: TestClient, local_name: str, base_type: str, parameters: dict[str, str]) -> None:
    body = await success_of(
        await client.put(
            "/Database",
            params={**parameters, "local_database_name": local_name, "base_type": base_type},
            headers=admin_headers(),
        )
    )
    assert body == [{"status": "success", "local_name": local_name}], body


async def table_names(client: TestClient, local_database: str) -> list[str]:
    body = await success_of(
        await client.get("/Table/list", params={"local_database_name": local_database}, headers=admin_headers())
    )
    return list(body["List"])


async def grant(client: TestClient, token: str, local_table: str) -> None:
    await success_of(
        await client.post(
            "/GrantTableAccess/", params={"user_token": token, "local_table_name": local_table}, headers=admin_headers()
        )
    )


async def get_data(client: TestClient, local_database: str, query: str, token: str = USER_TOKEN) -> Any:
    """The raw GetData answer (POST with a JSON body, so any query text fits)."""
    return await client.post(
        "/GetData", json={"local_database_name": local_database, "query": query}, headers=user_headers(token)
    )


async def rows_of(client: TestClient, local_database: str, query: str) -> dict[str, Any]:
    """The one result object of a successful GetData answer."""
    body = await success_of(await get_data(client, local_database, query))
    assert isinstance(body, list) and len(body) == 1 and body[0]["status"] == "success", body
    result: dict[str, Any] = body[0]
    assert result["row_count"] == len(result["data"]), result
    return result


async def wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll ``condition`` (in a thread: it may block) until true; fail naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not await asyncio.to_thread(condition):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not so after {seconds:g} s")
        await asyncio.sleep(0.05)
