"""Request ids: every answer names one in ``X-Request-Id``, and every log event of that request carries it."""

from __future__ import annotations

import re

import pytest
from aiohttp.test_utils import TestClient

from support import (
    admin_headers,
    read_logs,
    user_headers,
)

TOKEN = "request-id-Token-Marten-77"
NEW_ID = re.compile(r"[0-9a-f]{16}")


SHOP_SQL = "CREATE SCHEMA sales; CREATE TABLE sales.items (id integer); INSERT INTO sales.items VALUES (1)"
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


SHOP_GRANTS = {TOKEN: ["shop_sales_items"]}
"""The grants of the ``shop`` fixture (conftest.py)."""


def entries_of(entries: list[dict[str, object]], request_id: str) -> list[dict[str, object]]:
    return [entry for entry in entries if entry.get("request_id") == request_id]


async def test_every_answer_names_a_new_request_id(shop: TestClient) -> None:
    """Successes, errors and unknown paths all carry X-Request-Id; two requests never share one."""
    answers = [
        await shop.get("/healthz"),
        await shop.get("/Database/", headers=admin_headers()),
        await shop.get("/Database/"),
        await shop.get("/no/such/path"),
    ]
    ids = [answer.headers.get("X-Request-Id") for answer in answers]
    assert all(request_id is not None and NEW_ID.fullmatch(request_id) for request_id in ids), ids
    assert len(set(ids)) == len(ids)


async def test_the_access_line_and_the_audit_event_of_a_getdata_carry_its_id(shop: TestClient) -> None:
    """One GetData: its answer's id is on its access-log line and on its audit event."""
    answer = await shop.get(
        "/GetData", params={"local_database_name": "shop", "query": "SELECT id FROM sales.items"},
        headers=user_headers(TOKEN),
    )  # fmt: skip
    assert answer.status == 200
    request_id = answer.headers["X-Request-Id"]
    mine = entries_of(await read_logs(shop), request_id)
    assert {entry["event"] for entry in mine} >= {"request", "audit"}, mine


async def test_a_streamed_answer_names_its_request_id(shop: TestClient) -> None:
    """A chunked GetData answer, prepared by its handler, has the header too."""
    query = "SELECT g, repeat('x', 200) AS filler FROM generate_series(1, 3000) AS g"
    answer = await shop.get(
        "/GetData", params={"local_database_name": "shop", "query": query}, headers=user_headers(TOKEN)
    )
    await answer.read()
    assert answer.status == 200 and answer.headers.get("Transfer-Encoding") == "chunked"
    assert NEW_ID.fullmatch(answer.headers["X-Request-Id"])


async def test_a_plain_id_from_a_proxy_is_kept(shop: TestClient) -> None:
    """The id nginx or a load balancer sent is used and sent back, so both logs name the same request."""
    answer = await shop.get("/healthz", headers={"X-Request-Id": "lb-7f3a:0042_x.y"})
    assert answer.headers["X-Request-Id"] == "lb-7f3a:0042_x.y"
    assert entries_of(await read_logs(shop), "lb-7f3a:0042_x.y")


@pytest.mark.parametrize("sent", ["", "a b", "x" * 129, "id\\n", "<script>", "ä"])
async def test_an_id_that_is_not_a_plain_token_is_replaced(shop: TestClient, sent: str) -> None:
    """Spaces, markup, non-ASCII, empty or overlong ids are not written to the logs; a new id is made."""
    answer = await shop.get("/healthz", headers={"X-Request-Id": sent})
    assert NEW_ID.fullmatch(answer.headers["X-Request-Id"])
