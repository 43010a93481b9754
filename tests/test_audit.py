"""The audit trail: one ``audit`` entry per GetData (however it ends) and per administrative change,
in /Logs/ (``event=audit``), on stderr and in ``audit_file``; never a password or a whole token."""

from __future__ import annotations

import asyncio
import json
import re
import stat
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp import ClientPayloadError
from aiohttp.test_utils import TestClient

from gateway.observability.audit_file import AuditFile
from gateway.request.auth import token_fingerprint
from gateway.web.keys import REGISTRY
from support import (
    ADMIN_TOKEN,
    DISTINCTIVE_PASSWORD,
    GatewayFactory,
    admin_headers,
    error_of,
    grant,
    read_logs,
    register_database,
    stalled_getdata,
    user_headers,
)
from test_getdata import SLOW_QUERY, busy_gateway_backends

TOKEN = "audit-reader-Token-Ibis-48"
ITEMS_SQL = """
CREATE SCHEMA sales;
CREATE TABLE sales.items (id integer PRIMARY KEY, note text);
INSERT INTO sales.items SELECT g, 'item ' || g FROM generate_series(1, 20) AS g;
CREATE TABLE sales.hidden (id integer);
"""
FINGERPRINT = re.compile(r"[0-9a-f]{12}")


async def open_items(client: TestClient, database: str) -> TestClient:
    """Register ``database`` as "shop" and grant TOKEN sales.items only."""
    await register_database(client, "shop", database)
    await grant(client, TOKEN, "shop_sales_items")
    return client


SHOP_SQL = ITEMS_SQL
SHOP_GRANTS = {TOKEN: ["shop_sales_items"]}
"""The ``shop`` fixture (conftest.py), as ``open_items`` makes it."""


async def get_data(client: TestClient, query: str, *, token: str | None = TOKEN, database: str = "shop") -> Any:
    headers = user_headers(token) if token is not None else {}
    return await client.get("/GetData", params={"local_database_name": database, "query": query}, headers=headers)


async def audit_entries(client: TestClient, action: str | None = None) -> list[dict[str, Any]]:
    """The audit entries /Logs/ answers (optionally of one action), oldest first."""
    entries = await read_logs(client, event="audit")
    assert {entry["event"] for entry in entries} <= {"audit"}
    return [entry for entry in entries if action is None or entry["action"] == action]


async def wait_for_audit(client: TestClient, count: int, seconds: float = 10.0) -> list[dict[str, Any]]:
    """The GetData audit entries, once there are ``count`` of them (a request's entry is written as it ends)."""
    deadline = time.monotonic() + seconds
    while True:
        entries = await audit_entries(client, "get_data")
        if len(entries) >= count or time.monotonic() > deadline:
            return entries
        await asyncio.sleep(0.05)


class TestGetDataEntries:
    async def test_a_successful_query_writes_one_complete_entry(self, shop: TestClient) -> None:
        """Fingerprint of the token, database, tables read, query fingerprint and text, rows, bytes, time, outcome."""
        response = await get_data(shop, "select id, note from sales.items where id <= 5")
        body = await response.read()
        assert response.status == 200
        (entry,) = await audit_entries(shop, "get_data")
        salt = shop.app[REGISTRY].state.token_salt
        assert entry["user_token_fingerprint"] == token_fingerprint(salt, TOKEN)
        assert entry["local_database_name"] == "shop"
        assert entry["tables"] == ["shop_sales_items"]
        assert re.fullmatch(r"[0-9a-f]{16}", entry["query_fingerprint"])
        assert entry["query"] == "select id, note from sales.items where id <= 5"
        assert (entry["rows"], entry["bytes"]) == (5, len(body))
        assert isinstance(entry["duration_ms"], int | float) and entry["duration_ms"] >= 0
        assert (entry["status"], entry["error"], entry["outcome"]) == (200, None, "ok")
        assert entry["level"] == "info" and isinstance(entry["pid"], int) and entry["instance"]

    async def test_the_query_fingerprint_ignores_constants_and_layout(self, shop: TestClient) -> None:
        """Queries that differ only in constants and spacing share a fingerprint; another query does not."""
        for query in (
            "select id from sales.items where id = 1",
            "SELECT id\n  FROM sales.items WHERE id = 17",
            "select note from sales.items where id = 1",
        ):
            assert (await get_data(shop, query)).status == 200
        first, same, other = (entry["query_fingerprint"] for entry in await audit_entries(shop, "get_data"))
        assert first == same != other

    @pytest.mark.parametrize(
        ("query", "token", "database", "status", "error"),
        [
            ("select id from sales.hidden", TOKEN, "shop", 400, "query_rejected"),
            ("delete from sales.items", TOKEN, "shop", 400, "query_rejected"),
            ("select nope from sales.items", TOKEN, "shop", 400, "query_failed"),
            ("select id from sales.items", TOKEN, "elsewhere", 403, "access_denied"),
            ("select id from sales.items", "token-without-grants", "shop", 403, "access_denied"),
            ("select id from sales.items", None, "shop", 401, "token_required"),
        ],
        ids=["not-granted", "not-a-select", "database-refused", "unknown-database", "no-grant", "no-token"],
    )
    async def test_each_error_writes_one_entry_with_status_and_code(
        self, shop: TestClient, query: str, token: str | None, database: str, status: int, error: str
    ) -> None:
        """A GetData answered with an error writes exactly one entry: that status and code, outcome "error"."""
        response = await get_data(shop, query, token=token, database=database)
        assert (response.status, (await error_of(response))["error"]) == (status, error)
        (entry,) = await audit_entries(shop, "get_data")
        assert (entry["status"], entry["error"], entry["outcome"]) == (status, error, "error")
        assert entry["rows"] == 0 and entry["bytes"] == 0
        if error == "query_rejected":
            assert entry["tables"] is None and entry["query_fingerprint"] is None and entry["query"] == query
        if token is None:
            assert entry["user_token_fingerprint"] is None
        if database != "shop":  # an unknown name answers as an ungranted one, and the entry names no database
            assert entry["local_database_name"] is None

    async def test_a_time_out_is_audited_as_504(self, make_gateway: GatewayFactory, shop_database: str) -> None:
        """A query past statement_timeout: status 504, error query_timeout, with its tables and fingerprint."""
        client = await open_items(await make_gateway(statement_timeout=0.5), shop_database)
        slow = "select count(*) from sales.items, generate_series(1, 1000000000)"
        assert (await get_data(client, slow)).status == 504
        (entry,) = await audit_entries(client, "get_data")
        assert (entry["status"], entry["error"], entry["outcome"]) == (504, "query_timeout", "error")
        assert entry["tables"] == ["shop_sales_items"] and entry["query_fingerprint"]

    async def test_a_failure_after_the_answer_began_is_audited_as_cut_off(self, shop: TestClient) -> None:
        """The database fails once rows are streaming: status 200 was sent, error query_failed, outcome cut_off."""
        query = (
            "select g, repeat('x', 200) as pad, 1 / (g - 20000) as boom "
            "from sales.items, generate_series(1, 30000) as g where sales.items.id = 1"
        )
        response = await get_data(shop, query)
        assert response.status == 200
        with pytest.raises(ClientPayloadError):  # the body never ends properly
            await response.read()
        (entry,) = await wait_for_audit(shop, 1)
        assert (entry["status"], entry["error"], entry["outcome"]) == (200, "query_failed", "cut_off")
        assert entry["bytes"] > 256 * 1024 and entry["rows"] > 0

    async def test_a_client_that_stops_reading_is_audited_as_client_stalled(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """A reader that stalls past client_stall_timeout: outcome client_stalled, with what was sent so far."""
        client = await open_items(await make_gateway(client_stall_timeout=0.5), shop_database)
        query = "select g, repeat('x', 500) as pad from sales.items, generate_series(1, 20000) as g"
        async with stalled_getdata(client.server.port, TOKEN, "shop", query):
            (entry,) = await wait_for_audit(client, 1)
        assert (entry["status"], entry["error"], entry["outcome"]) == (200, None, "client_stalled")
        assert entry["bytes"] > 0

    async def test_a_client_that_goes_away_is_audited_as_cancelled(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """A client that disconnects while its query runs: 499 (client closed request) as its request line, cancelled."""
        client = await open_items(await make_gateway(statement_timeout=30), shop_database)
        query = SLOW_QUERY.replace("sales.customers", "sales.items")
        reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
        target = "/GetData?" + urlencode({"local_database_name": "shop", "query": query})
        writer.write(f"GET {target} HTTP/1.1\r\nHost: gateway\r\nuser_token: {TOKEN}\r\n\r\n".encode())
        await writer.drain()
        deadline = time.monotonic() + 10
        while not busy_gateway_backends(client.app[REGISTRY].state.database("shop").connection["database"]):
            assert time.monotonic() < deadline, "the query never started"
            await asyncio.sleep(0.05)
        writer.close()
        (entry,) = await wait_for_audit(client, 1)
        assert (entry["status"], entry["error"], entry["outcome"]) == (499, None, "cancelled")

    async def test_audit_query_text_false_leaves_the_text_out(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """With audit_query_text = false the entry has no query text, but still the fingerprint and tables."""
        client = await open_items(await make_gateway(audit_query_text=False), shop_database)
        assert (await get_data(client, "select id from sales.items where note = 'secret plan'")).status == 200
        (entry,) = await audit_entries(client, "get_data")
        assert "query" not in entry and entry["query_fingerprint"] and entry["tables"] == ["shop_sales_items"]
        assert "secret plan" not in client.log_stream.getvalue()  # type: ignore[attr-defined]

    async def test_audit_entries_are_written_whatever_log_level_says(
        self, make_gateway: GatewayFactory, shop_database: str
    ) -> None:
        """log_level = error hides request lines, not the audit trail (in /Logs/ and on stderr)."""
        client = await open_items(await make_gateway(log_level="error"), shop_database)
        assert (await get_data(client, "select id from sales.items")).status == 200
        assert len(await audit_entries(client, "get_data")) == 1
        stderr = client.log_stream.getvalue()  # type: ignore[attr-defined]
        assert '"action":"get_data"' in stderr and '"event":"request"' not in stderr



class TestAdminEntries:
    async def test_every_admin_change_writes_one_entry_with_the_admin_fingerprint(
        self, gateway: TestClient, shop_database: str
    ) -> None:
        """Add, rename, grant, revoke, mint, refresh, update, remove: one audit entry each, in that order."""
        await register_database(gateway, "shop", shop_database)
        renamed = await gateway.post(
            "/Table", json={"table": {"local_table_name": "shop_sales_items"}, "new_local_table_name": "items"},
            headers=admin_headers(),
        )  # fmt: skip
        assert renamed.status == 200, await renamed.text()
        await grant(gateway, TOKEN, "items")
        params = {"user_token": TOKEN, "local_table_name": "items"}
        assert (await gateway.delete("/GrantTableAccess", params=params, headers=admin_headers())).status == 200
        assert (await gateway.put("/UserToken", headers=admin_headers())).status == 200
        shop = {"local_database_name": "shop"}
        assert (await gateway.post("/Database", params=shop, headers=admin_headers())).status == 200
        patch = {**shop, "password": DISTINCTIVE_PASSWORD}
        assert (await gateway.patch("/Database", params=patch, headers=admin_headers())).status == 200
        assert (await gateway.delete("/Database", params=shop, headers=admin_headers())).status == 200
        # Reads and refused attempts are no changes.
        assert (await gateway.get("/GrantTableAccess", params={"user_token": TOKEN}, headers=admin_headers())).status == 200
        assert (await gateway.put("/UserToken", headers={"admin_token": "wrong-admin-token-00000"})).status == 403

        entries = await audit_entries(gateway)
        assert [entry["action"] for entry in entries] == [
            "database_registered", "table_renamed", "table_access_granted", "grant_revoked",
            "token_minted", "database_refreshed", "database_updated", "database_unregistered",
        ]  # fmt: skip
        admin = token_fingerprint(gateway.app[REGISTRY].state.token_salt, ADMIN_TOKEN)
        assert all(entry["admin_token_fingerprint"] == admin for entry in entries)
        by_action = {entry["action"]: entry for entry in entries}
        assert by_action["table_renamed"]["new_local_table_name"] == "items"
        assert FINGERPRINT.fullmatch(by_action["table_access_granted"]["granted_token_fingerprint"])
        assert by_action["database_updated"]["changed_fields"] == ["password"]
        text = json.dumps(entries) + gateway.log_stream.getvalue()  # type: ignore[attr-defined]
        for secret in (TOKEN, ADMIN_TOKEN, DISTINCTIVE_PASSWORD):
            assert secret not in text


class TestEventFilter:
    async def test_event_answers_only_entries_of_that_event(self, shop: TestClient) -> None:
        """event=audit answers audit entries only; event=request only request lines; an unknown event none."""
        assert (await get_data(shop, "select id from sales.items")).status == 200
        assert {entry["event"] for entry in await read_logs(shop, event="audit")} == {"audit"}
        assert {entry["event"] for entry in await read_logs(shop, event="request")} == {"request"}
        assert await read_logs(shop, event="no_such_event") == []

    async def test_event_combines_with_level_and_limit(self, shop: TestClient) -> None:
        """limit counts entries of the event only, the newest; a level above info hides the audit entries."""
        for number in (1, 2, 3):
            assert (await get_data(shop, f"select id from sales.items where id = {number}")).status == 200
        (newest,) = await read_logs(shop, event="audit", limit="1")
        assert newest["query"].endswith("id = 3")
        assert await read_logs(shop, event="audit", level="warning") == []

    @pytest.mark.parametrize("event", ["a b", "x" * 101, "audit;", "é"])
    async def test_a_malformed_event_name_is_a_bad_request(self, gateway: TestClient, event: str) -> None:
        """An event that is no event name is 400 naming 'event'."""
        response = await gateway.get("/Logs/", params={"event": event}, headers=admin_headers())
        assert response.status == 400
        assert "event" in (await error_of(response))["message"]


class TestAuditFile:
    async def test_audit_entries_are_appended_to_the_file_as_json_lines(
        self, make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
    ) -> None:
        """The file holds exactly the audit entries /Logs/ shows, one JSON line each, mode 0600, no secret."""
        path = tmp_path / "audit" / "audit.jsonl"
        path.parent.mkdir()
        client = await make_gateway(audit_file=str(path))
        await open_items(client, shop_database)
        query = f"select id from sales.items where note <> '{TOKEN}'"
        assert (await get_data(client, query)).status == 200
        patch = {"local_database_name": "shop", "password": DISTINCTIVE_PASSWORD}
        assert (await client.patch("/Database", params=patch, headers=admin_headers())).status == 200
        text = path.read_text()
        lines = [json.loads(line) for line in text.splitlines()]
        assert lines == await audit_entries(client)
        assert [line["action"] for line in lines] == [
            "database_registered", "table_access_granted", "get_data", "database_updated",
        ]  # fmt: skip
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        for secret in (TOKEN, ADMIN_TOKEN, DISTINCTIVE_PASSWORD):
            assert secret not in text

    def test_the_file_is_rotated_by_size_keeping_one_old_file(self, tmp_path: Path) -> None:
        """Two writers on one file: past max_bytes it becomes .1; the two files hold the newest lines in order."""
        path = tmp_path / "audit.jsonl"
        first, second = AuditFile(path, max_bytes=1000), AuditFile(path, max_bytes=1000)
        lines = [json.dumps({"event": "audit", "n": number, "pad": "x" * 40}) for number in range(100)]
        try:
            for number, line in enumerate(lines):
                (first if number % 3 else second).write_line(line)
        finally:
            first.close()
            second.close()
        rotated = path.with_name("audit.jsonl.1")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.lock"]
        assert path.stat().st_size <= 1000 and rotated.stat().st_size <= 1000
        kept = rotated.read_text().splitlines() + path.read_text().splitlines()
        assert kept == lines[-len(kept) :]
        assert len(kept) >= 1000 // (len(lines[0]) + 1)

    def test_a_file_renamed_away_is_reopened(self, tmp_path: Path) -> None:
        """After an outside rotation by renaming (logrotate), the next line goes to a new file at the path."""
        path = tmp_path / "audit.jsonl"
        sink = AuditFile(path, max_bytes=0)
        try:
            sink.write_line("one")
            path.rename(tmp_path / "audit.jsonl.old")
            sink.write_line("two")
        finally:
            sink.close()
        assert path.read_text() == "two\n"
        assert (tmp_path / "audit.jsonl.old").read_text() == "one\n"
