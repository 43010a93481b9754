"""The database the console's tests look at, and a gateway that serves it to one token.

``SHOP_SQL`` holds what the console must show right: NULL beside the text
'NULL', numbers of every kind (a bigint past 2^53 that JavaScript's numbers
would round), a long value, json and arrays, hostile text, a column whose name
is HTML, a table in a second schema and one too large to send whole (so the
gateway streams it). ``served_shop`` registers it twice (as ``shop`` and
``stock``) and grants ``TOKEN`` tables of both.
"""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from support import GatewayFactory, grant, register_database, user_headers

TOKEN = "console-reader-token-7d41e9a2"
"""The user token the console's tests paste."""

LONG_NOTE = "a long note " * 20 + "that ends here"
HOSTILE = [
    "<script>window.__xss = 'script'</script>",
    "<img src=x onerror=\"window.__xss = 'img'\">",
    "javascript:window.__xss = 'href'",
    "\"><svg onload=\"window.__xss = 'svg'\">",
    "</td></tr><tr><td>row injected",
]
"""Values that would run, or change the page, if the console wrote them as HTML."""
HOSTILE_COLUMN = "<b onmouseover=\"window.__xss = 'column'\">name</b>"

SHOP_SQL = f"""
CREATE TABLE public.orders (
    id integer PRIMARY KEY, placed timestamptz, note text, total numeric(10, 2), big bigint,
    ratio double precision, tags text[], details jsonb
);
INSERT INTO public.orders VALUES
    (1, '2024-01-02 03:04:05+00', 'first', 9.50, 9007199254740993, 0.5, '{{gift,red}}', '{{"gift": true, "n": 1}}'),
    (2, '2024-01-03 10:00:00+00', NULL, 12.00, -1, NULL, '{{}}', NULL),
    (3, '2024-02-01 12:30:00+00', 'NULL', 1234.25, 0, 1e-7, NULL, '[1, 2.50, "x"]'),
    (4, NULL, '{LONG_NOTE}', 0.01, 42, 12345.678, '{{"a b"}}', '{{"deep": {{"list": [1, 2, 3]}}}}');
CREATE TABLE public.customers (id integer PRIMARY KEY, name text, since date);
INSERT INTO public.customers VALUES (1, 'Ada', '2020-05-01'), (2, 'Grace', '2021-07-15');
CREATE SCHEMA sales;
CREATE TABLE sales.items (sku text, quantity integer);
INSERT INTO sales.items VALUES ('A-1', 3), ('B-2', 0);
CREATE TABLE public.hostile (id integer, "{HOSTILE_COLUMN.replace('"', '""')}" text);
INSERT INTO public.hostile VALUES {", ".join(f"({number}, $${value}$$)" for number, value in enumerate(HOSTILE, 1))};
CREATE TABLE public.numbers AS SELECT g AS n, repeat('x', 200) AS filler FROM generate_series(1, 3000) AS g;
"""

GRANTED = {
    "shop": ["shop_public_orders", "shop_public_customers", "shop_sales_items", "shop_public_hostile",
             "shop_public_numbers"],
    "stock": ["stock_public_customers"],
}
"""The local table names granted to ``TOKEN``, by local database name."""


async def served_shop(make_gateway: GatewayFactory, database: str, **settings: Any) -> TestClient:
    """A gateway with the shop registered as ``shop`` and ``stock`` and ``GRANTED`` granted to ``TOKEN``."""
    client = await make_gateway(**settings)
    for local_name, tables in GRANTED.items():
        await register_database(client, local_name, database)
        for table in tables:
            await grant(client, TOKEN, table)
    return client


async def api_answer(client: TestClient, database: str, query: str, format: str = "json") -> tuple[int, bytes]:
    """What the gateway answers ``TOKEN``'s query in ``format`` (status and body), asked without the console."""
    response = await client.post(
        "/GetData", json={"local_database_name": database, "query": query, "format": format},
        headers=user_headers(TOKEN),
    )
    return response.status, await response.read()


def console_url(client: TestClient) -> str:
    return str(client.make_url("/console"))
