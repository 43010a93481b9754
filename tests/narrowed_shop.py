"""The database and grants the narrowed-grant tests share (issue 22): two tenants' accounts, hidden values.

The database holds the accounts of two tenants: tenant 42's rows are granted, tenant 7's are not, and the
columns ``tenant`` and ``email`` are hidden. Every hidden value holds the word HIDDEN, so an answer that
shows one is seen at once. Inheritance (parent, child) and partitions (ledger) are narrowed alike.
"""

from __future__ import annotations

from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient
from support import admin_headers, success_of, user_headers

SHOP_SQL = """
CREATE TABLE public.accounts (id integer PRIMARY KEY, tenant integer NOT NULL, balance integer NOT NULL,
    email text NOT NULL, note text);
INSERT INTO public.accounts SELECT i, CASE WHEN i % 2 = 0 THEN 42 ELSE 7 END,
    CASE WHEN i % 2 = 0 THEN i % 40 ELSE 42 END, 'HIDDEN-mail-' || i,
    CASE WHEN i % 2 = 0 THEN 'note ' || i ELSE 'HIDDEN-row-' || i END FROM generate_series(1, 200) i;
CREATE TABLE public.branches (id integer PRIMARY KEY, account_id integer, city text);
INSERT INTO public.branches SELECT i, i, 'city ' || i FROM generate_series(1, 200) i;
CREATE TABLE public.parent (id integer, tenant integer, secret text);
CREATE TABLE public.child () INHERITS (public.parent);
INSERT INTO public.parent VALUES (1, 42, 'HIDDEN-parent-1'), (2, 7, 'HIDDEN-parent-2');
INSERT INTO public.child VALUES (3, 42, 'HIDDEN-child-3'), (4, 7, 'HIDDEN-child-4');
CREATE TABLE public.ledger (id integer, tenant integer, secret text) PARTITION BY LIST (tenant);
CREATE TABLE public.ledger_42 PARTITION OF public.ledger FOR VALUES IN (42);
CREATE TABLE public.ledger_7 PARTITION OF public.ledger FOR VALUES IN (7);
INSERT INTO public.ledger VALUES (1, 42, 'HIDDEN-ledger-1'), (2, 7, 'HIDDEN-ledger-2');
CREATE TABLE public.big (id integer PRIMARY KEY, tenant integer NOT NULL, secret text);
INSERT INTO public.big SELECT i, CASE WHEN i % 2 = 0 THEN 42 ELSE 7 END, 'HIDDEN-big-' || i
    FROM generate_series(1, 50000) i;
ANALYZE;
"""
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""

TOKEN = "narrowed-reader-0001"
WHOLE = "whole-reader-00001"
ACCOUNTS = "shop_public_accounts"
VISIBLE = ["id", "balance", "note"]
FILTER = "tenant = 42"

SHOP_GRANTS = {
    TOKEN: [
        (ACCOUNTS, {"columns": ",".join(VISIBLE), "row_filter": FILTER}),
        ("shop_public_parent", {"columns": "id", "row_filter": FILTER}),
        ("shop_public_ledger", {"columns": "id", "row_filter": FILTER}),
        "shop_public_branches",
    ],
}
"""TOKEN's grants in database "shop" (conftest.py's ``shop`` fixture): narrowed grants of accounts, parent and
ledger, and branches whole."""


async def grant_with(client: TestClient, user_token: str, local_table_name: str, **params: str) -> ClientResponse:
    return await client.post("/GrantTableAccess/", headers=admin_headers(),
                             params={"user_token": user_token, "local_table_name": local_table_name, **params})


async def granted(client: TestClient, user_token: str, local_table_name: str, **params: str) -> Any:
    return await success_of(await grant_with(client, user_token, local_table_name, **params))


async def listing(client: TestClient, user_token: str) -> list[dict[str, Any]]:
    response = await client.get("/GrantTableAccess/", params={"user_token": user_token}, headers=admin_headers())
    return (await success_of(response))[0]["tables"]  # type: ignore[no-any-return]


async def get_data(client: TestClient, query: str, token: str = TOKEN) -> tuple[int, str]:
    response = await client.post("/GetData", json={"local_database_name": "shop", "query": query},
                                 headers=user_headers(token))
    return response.status, await response.text()
