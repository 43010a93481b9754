"""What a caller without the right token learns: token headers that are not UTF-8, and no existence oracle.

A token holder must not tell a registered table or database from one that does
not exist (the same 403 and the same wording), and without the admin token no
answer names a registered database.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient

from support import (
    ADMIN_TOKEN,
    admin_headers,
    error_of,
    message_template,
    read_logs,
    register_database,
    user_headers,
)

TOKEN = "outsider-reader-token-93d1"
"""Granted public.alpha of database "hidden_shop"."""

LOCAL_NAME = "hidden_shop"
"""A local database name distinctive enough that finding it in a text means the text names the database."""

NOT_UTF8 = [b"\xff\xfe", b"reader-\xc3\x28-token-0001", b"\xed\xa0\x80-encoded-surrogate", b"\xc0\xaf-overlong-slash"]


SHOP_SQL = "CREATE TABLE public.alpha (id integer); CREATE TABLE public.beta (id integer)"
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


GATEWAY_SETTINGS = {"metrics_require_admin": True}
SHOP_NAME = LOCAL_NAME
SHOP_GRANTS = {TOKEN: [f"{LOCAL_NAME}_public_alpha"]}
"""The ``shop`` fixture (conftest.py): metrics behind the admin token, TOKEN granted hidden_shop's public.alpha."""


async def raw_request(client: TestClient, head: bytes, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send ``head`` (request line and headers, as bytes) and ``body`` over a socket; the answer's parts."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(head + b"Connection: close\r\n" + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        async with asyncio.timeout(10):
            answer = await reader.read()  # to the end: the gateway closes after answering
    finally:
        writer.close()
    status_and_headers, _, content = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = status_and_headers.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in header_lines)}
    return int(status_line.split()[1]), headers, content


# (method, target, body): user operations with a user_token header, admin operations with an admin_token header.
USER_OPERATIONS = [
    ("GET", f"/Table?local_table_name={LOCAL_NAME}_public_alpha", b""),
    ("GET", f"/GetData?local_database_name={LOCAL_NAME}&query=select%201", b""),
    ("POST", "/GetData", orjson.dumps({"local_database_name": LOCAL_NAME, "query": "select 1"})),
    ("GET", "/Database/list", b""),
    ("GET", "/Table/list", b""),
]
ADMIN_OPERATIONS = [
    ("GET", "/Logs/", b""),
    ("GET", "/Database/list", b""),
    ("GET", f"/Database?local_database_name={LOCAL_NAME}", b""),
    ("PUT", "/UserToken", b""),
    ("POST", f"/GrantTableAccess/?user_token=new-reader-token-0001&local_table_name={LOCAL_NAME}_public_beta", b""),
    ("GET", "/readyz?databases=1", b""),
    ("GET", "/metrics", b""),
]


@pytest.mark.parametrize("value", NOT_UTF8, ids=["ff-fe", "bad-continuation", "surrogate", "overlong"])
@pytest.mark.parametrize(
    ("header", "method", "target", "body"),
    [("user_token", *operation) for operation in USER_OPERATIONS]
    + [("User-Token", *USER_OPERATIONS[0])]
    + [("admin_token", *operation) for operation in ADMIN_OPERATIONS]
    + [("Admin-Token", *ADMIN_OPERATIONS[0])],
)
async def test_a_token_header_that_is_not_utf8_is_403_json_and_logged_once(
    shop: TestClient, header: str, method: str, target: str, body: bytes, value: bytes
) -> None:
    """Token bytes that are not UTF-8 answer 403 access_denied in JSON, with one access-log line and no traceback."""
    head = f"{method} {target} HTTP/1.1\r\nHost: gateway\r\n".encode() + header.encode() + b": " + value + b"\r\n"
    if body:
        head += b"Content-Type: application/json\r\n"
    # Errors logged before the request (a broken driver installed beside, at startup) are not this request's.
    errors_before = [e for e in await read_logs(shop) if e["level"] == "error"]
    status, headers, content = await raw_request(shop, head, body)
    assert status == 403, content
    assert headers["content-type"].startswith("application/json")
    answer = orjson.loads(content)
    assert set(answer) == {"status", "error", "message"} and answer["status"] == "error"
    assert answer["error"] == "access_denied" and "UTF-8" in answer["message"]

    path = target.split("?")[0]
    entries = await read_logs(shop)
    lines = [e for e in entries if e["event"] == "request" and e["path"] == path and e["status"] == 403]
    assert len(lines) == 1, lines
    fingerprint_field = "user_token_fingerprint" if header.lower().startswith("user") else "admin_token_fingerprint"
    assert re.fullmatch(r"[0-9a-f]{12}", str(lines[0][fingerprint_field]))
    assert [e for e in entries if e["level"] == "error"] == errors_before
    assert "Traceback" not in shop.log_stream.getvalue()  # type: ignore[attr-defined]


async def test_a_user_token_that_is_not_utf8_gets_what_a_wrong_token_gets(shop: TestClient) -> None:
    """On /Table and /GetData a non-UTF-8 user token and a wrong one both answer 403 access_denied."""
    for target in USER_OPERATIONS[0][1], USER_OPERATIONS[1][1]:
        head = f"GET {target} HTTP/1.1\r\nHost: gateway\r\n".encode()
        not_utf8, _, _ = await raw_request(shop, head + b"user_token: \xff\xfe-long-enough-token\r\n")
        wrong, _, content = await raw_request(shop, head + b"user_token: wrong-but-utf8-token-01\r\n")
        assert not_utf8 == wrong == 403
        assert orjson.loads(content)["error"] == "access_denied"


# -- no existence oracle -------------------------------------------------------------------------------------


async def get_data(client: TestClient, database: str, token: str = TOKEN) -> Any:
    return await client.get(
        "/GetData", params={"local_database_name": database, "query": "select 1"}, headers=user_headers(token)
    )


async def test_getdata_answers_an_unknown_database_as_one_without_grants(
    shop: TestClient, shop_database: str
) -> None:
    """GetData on an unregistered database is 403 access_denied, worded as on a registered one without a grant."""
    await register_database(shop, "other_shop", shop_database)
    unknown = await get_data(shop, "no_such_shop")
    ungranted = await get_data(shop, "other_shop")
    assert (unknown.status, ungranted.status) == (403, 403)
    unknown_body, ungranted_body = await error_of(unknown), await error_of(ungranted)
    assert unknown_body["error"] == ungranted_body["error"] == "access_denied"
    assert message_template(unknown_body["message"], "no_such_shop") == message_template(
        ungranted_body["message"], "other_shop"
    )
    # A token with no grant anywhere gets the same answer for a registered database as for an unknown one.
    stranger_registered = await error_of(await get_data(shop, LOCAL_NAME, token="stranger-token-0001"))
    stranger_unknown = await error_of(await get_data(shop, "no_such_shop", token="stranger-token-0001"))
    assert message_template(stranger_registered["message"], LOCAL_NAME) == message_template(
        stranger_unknown["message"], "no_such_shop"
    )


async def test_readyz_names_databases_only_to_the_admin(shop: TestClient) -> None:
    """/readyz?databases=1 counts the databases for anyone, names them only with the admin token."""
    anonymous = await shop.get("/readyz", params={"databases": "1"})
    as_user = await shop.get("/readyz", params={"databases": "1"}, headers=user_headers(TOKEN))
    for response in (anonymous, as_user):
        text = await response.text()
        assert response.status == 200, text
        assert LOCAL_NAME not in text
        assert orjson.loads(text)["database_counts"] == {"reachable": 1, "unreachable": 0}
    named = await shop.get("/readyz", params={"databases": "1"}, headers=admin_headers())
    assert orjson.loads(await named.text())["databases"] == {LOCAL_NAME: "reachable"}


async def test_readyz_with_a_wrong_admin_token_is_403(shop: TestClient) -> None:
    """A wrong admin token on /readyz?databases=1 is 403 access_denied, as on any admin operation."""
    response = await shop.get("/readyz", params={"databases": "1"}, headers={"admin_token": ADMIN_TOKEN + "x"})
    assert response.status == 403
    body = await error_of(response)
    assert body["error"] == "access_denied" and LOCAL_NAME not in body["message"]
