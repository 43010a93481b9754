"""The console in a real headless Chromium: paste a token, see the tables, run a query, read it, download it.

Each test opens /console of an in-process gateway serving ``console_shop``'s
database and does what a person would: clicks, keys, typed text. What the page
shows is compared with what the API answers the same query without the console.
"""

from __future__ import annotations

import csv
import io

import orjson

from console_page import OpenPage, Page
from console_shop import SHOP_SQL  # noqa: F401  (the shop_database fixture reads the module's SHOP_SQL)
from console_shop import GRANTED, LONG_NOTE, TOKEN, api_answer, console_url, served_shop
from support import GatewayFactory

ORDERS_QUERY = "SELECT id, note, total, big, ratio, tags, details, placed\nFROM public.orders\nORDER BY id"


async def paste_token(page: Page) -> None:
    """Type the token into its field and press Enter; wait for the tables it may read."""
    await page.click("#token")
    await page.type(TOKEN)
    await page.press("Enter")
    await page.wait_for("document.querySelector('#catalogue-state').textContent.includes('tables in')", "the tables")


async def run_in_editor(page: Page, query: str) -> None:
    """Replace the editor's text with ``query`` and run it with Ctrl+Enter."""
    await page.click("#editor")
    await page.evaluate("document.querySelector('#editor').select()")
    await page.type(query)
    await page.press("Enter", ctrl=True)


async def result_rows(page: Page) -> list[list[str]]:
    return await page.evaluate(
        "[...document.querySelectorAll('#result tbody tr')].map(r => [...r.cells].map(c => c.textContent))"
    )


async def test_paste_a_token_see_the_tables_run_a_query_and_read_it(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """The whole first visit: token, catalogue with columns and types, a query, its table as the API answers it."""
    client = await served_shop(make_gateway, shop_database)
    page = await open_page(console_url(client))
    await paste_token(page)
    databases = await page.evaluate("[...document.querySelectorAll('#catalogue h3')].map(h => h.textContent)")
    assert databases == sorted(GRANTED)
    names = await page.evaluate("[...document.querySelectorAll('.table-name')].map(e => e.textContent)")
    assert sorted(names) == sorted(name for tables in GRANTED.values() for name in tables)
    assert await page.evaluate("[...document.querySelectorAll('#database option')].map(o => o.value)") == ["shop", "stock"]

    # A table's columns and types, as GetTableData gives them.
    await page.evaluate(
        "[...document.querySelectorAll('.table')].find(t => t.querySelector('.table-name').textContent"
        " === 'shop_public_orders').querySelector('summary').click()"
    )
    columns = await page.evaluate(
        "[...document.querySelectorAll('[aria-label=\"Columns of shop_public_orders\"] li')].map(l => l.textContent)"
    )
    assert columns[:3] == ["id integer", "placed timestamp with time zone", "note text"]
    await page.screenshot("1-tables")

    await run_in_editor(page, ORDERS_QUERY)
    await page.wait_for("document.querySelector('#status').textContent === '4 rows.'", "the answer's row count")
    status, body = await api_answer(client, "shop", ORDERS_QUERY)
    assert status == 200
    answer = orjson.loads(body)[0]
    headers = await page.evaluate(
        "[...document.querySelectorAll('#result th')].map(h => [...h.children].map(c => c.textContent))"
    )
    assert headers == [[column["name"], column["type"]] for column in answer["columns"]]
    rows = await result_rows(page)
    assert rows[0][:5] == ["1", "first", "9.50", "9007199254740993", "0.5"]  # the bigint as the gateway wrote it
    assert rows[0][5:7] == ['["gift","red"]', '{"n": 1, "gift": true}']  # json as the database wrote it
    # NULL is marked apart from the text 'NULL'.
    assert await page.evaluate("document.querySelector('#result tbody tr:nth-child(2) td:nth-child(2) .null') !== null")
    assert await page.evaluate("document.querySelector('#result tbody tr:nth-child(3) td:nth-child(2) .null') === null")
    assert rows[2][1] == "NULL"
    # Numbers are aligned right, text left.
    aligns = await page.evaluate(
        "[...document.querySelectorAll('#result tbody tr:first-child td')].map(c => getComputedStyle(c).textAlign)"
    )
    assert aligns[:5] == ["right", "left", "right", "right", "right"]
    await page.screenshot("2-answer")

    # The long note is shortened; its button shows it whole, and Escape closes the dialog.
    assert LONG_NOTE not in rows[3][1] and rows[3][1].startswith(LONG_NOTE[:40])
    await page.click("#result tbody tr:nth-child(4) td:nth-child(2) button.whole")
    await page.wait_for("document.querySelector('#value-dialog').open", "the whole value's dialog")
    assert await page.text("#value-text") == LONG_NOTE
    await page.screenshot("3-whole-value")
    await page.press("Escape")
    await page.wait_for("!document.querySelector('#value-dialog').open", "the dialog closed")

    # Downloads: the same query as CSV and NDJSON, byte for byte what the API answers.
    for format, button in (("csv", "#download-csv"), ("ndjson", "#download-ndjson")):
        await page.click(button)
        await page.wait_for(
            "document.querySelector('#download-state').textContent.startsWith('Saved ')", f"the {format} download"
        )
        name = (await page.text("#download-state")).split()[1]
        saved = await page.downloaded(name)
        assert name.endswith("." + format)
        assert saved == (await api_answer(client, "shop", ORDERS_QUERY, format))[1]
        if format == "csv":
            table = list(csv.reader(io.StringIO(saved.decode())))
            assert table[0] == [column["name"] for column in answer["columns"]] and len(table) == 5

    # The history names the query, and the token is in session storage only.
    history = await page.evaluate("[...document.querySelectorAll('.history-query')].map(e => e.textContent)")
    assert history == [ORDERS_QUERY.split("\n")[0]]
    assert await page.evaluate("sessionStorage.getItem('dbgateway.console.user_token')") == TOKEN
    assert TOKEN not in await page.evaluate("location.href + document.cookie + document.body.innerText")
