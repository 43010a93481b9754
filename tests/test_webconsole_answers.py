"""What the console shows of each kind of answer: refused, cut at row_limit, streaming in, broken off.

Messages are the gateway's own, compared with what the API answers the same
query. The streaming tests put ``held_proxy.HeldProxy`` between the browser and
the gateway, so an answer stays part-way for as long as the test looks at it.
"""

from __future__ import annotations

import orjson

from console_page import OpenPage, Page
from console_shop import SHOP_SQL  # noqa: F401  (the shop_database fixture reads the module's SHOP_SQL)
from console_shop import api_answer, served_shop
from held_proxy import HeldProxy
from support import GatewayFactory, wait_until
from test_webconsole_flow import paste_token, result_rows, run_in_editor

NUMBERS_QUERY = "SELECT n, filler FROM public.numbers ORDER BY n"
NUMBERS = 3000
"""Rows of public.numbers: about 700 KB of JSON, which the gateway streams (over 256 KiB)."""


async def test_a_refused_query_shows_the_gateways_message(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """A table written without its schema: the guard's refusal, word for word, says what to change."""
    client = await served_shop(make_gateway, shop_database)
    page = await open_page(str(client.make_url("/console")))
    await paste_token(page)
    query = "SELECT id, note FROM orders"
    await run_in_editor(page, query)
    await page.wait_for("!document.querySelector('#error').hidden", "the error")
    status, body = await api_answer(client, "shop", query)
    error = orjson.loads(body)
    assert status == 400 and error["error"] == "query_rejected"
    assert await page.text("#error") == f"{error['error']}: {error['message']}"
    assert "schema" in error["message"]
    assert await page.evaluate("document.querySelector('#table-wrap').hidden")
    outcome = await page.evaluate("document.querySelector('.history-meta').textContent")
    assert "query_rejected" in outcome
    await page.screenshot("4-refused")

    # A query the database refuses: its message too; and an empty editor is caught before any request.
    query = "SELECT 1 / (o.id - o.id) FROM public.orders AS o"
    await run_in_editor(page, query)
    await page.wait_for("document.querySelector('#error').textContent.startsWith('query_failed')", "query_failed")
    assert await page.text("#error") == "query_failed: " + orjson.loads((await api_answer(client, "shop", query))[1])["message"]
    await run_in_editor(page, "  ")
    await page.wait_for("document.querySelector('#error').textContent === 'Write a query first.'", "the hint")


async def test_an_answer_cut_at_row_limit_is_marked_and_its_csv_refused(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """truncated: true is shown as a mark naming the limit; CSV, which cannot say it, gets the gateway's 422."""
    client = await served_shop(make_gateway, shop_database, row_limit=50)
    page = await open_page(str(client.make_url("/console")))
    await paste_token(page)
    await run_in_editor(page, NUMBERS_QUERY)
    await page.wait_for("document.querySelector('#status').textContent === '50 rows.'", "the cut answer")
    assert orjson.loads((await api_answer(client, "shop", NUMBERS_QUERY))[1])[0]["truncated"] is True
    assert not await page.evaluate("document.querySelector('#cut').hidden")
    assert "row limit (50 rows)" in await page.text("#cut")
    assert len(await result_rows(page)) == 50
    assert "cut" in await page.evaluate("document.querySelector('.history-meta').textContent")
    await page.screenshot("6-cut-at-row-limit")

    await page.click("#download-csv")
    await page.wait_for("document.querySelector('#error').textContent.startsWith('result_too_large')", "the 422")
    assert "LIMIT 50" in await page.text("#error")
    await page.click("#download-ndjson")
    await page.wait_for("document.querySelector('#download-state').textContent.startsWith('Saved')", "NDJSON saved")
    assert "cut at the row limit" in await page.text("#download-state")

    # The same query within the limit is whole: no mark.
    await run_in_editor(page, NUMBERS_QUERY + " LIMIT 50")
    await page.wait_for("document.querySelector('#status').textContent === '50 rows.'", "the whole answer")
    assert await page.evaluate("document.querySelector('#cut').hidden")


async def start_streaming(page: Page, proxy: HeldProxy) -> None:
    """Run the large query with the proxy holding the answer after its first 64 KiB; wait for the first rows."""
    await paste_token(page)
    await page.click("#editor")
    await page.type(NUMBERS_QUERY)
    proxy.hold_after(64 * 1024)
    await page.press("Enter", ctrl=True)
    await page.wait_for("document.querySelectorAll('#result tbody tr').length > 0", "the first rows")
    assert proxy.held_bytes > 0


async def test_the_first_rows_show_while_a_large_answer_streams(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """With the answer held part-way, rows are on screen, Stop is offered and the page answers; then the rest."""
    client = await served_shop(make_gateway, shop_database)
    async with HeldProxy(client.port) as proxy:
        page = await open_page(f"http://127.0.0.1:{proxy.port}/console")
        await start_streaming(page, proxy)
        shown = await page.evaluate("document.querySelectorAll('#result tbody tr').length")
        assert 0 < shown < NUMBERS
        assert (await page.text("#status")).startswith("Receiving")
        assert await page.evaluate("!document.querySelector('#stop').disabled && document.querySelector('#run').disabled")
        await page.click("#editor")  # still usable: the editor takes typing while the rows come
        await page.type("\n-- typed while streaming")
        assert (await page.evaluate("document.querySelector('#editor').value")).endswith("typed while streaming")
        await page.screenshot("8-streaming")

        proxy.release()
        await page.wait_for(f"document.querySelector('#status').textContent === '{NUMBERS} rows.'", "the whole answer")
        assert len(await result_rows(page)) == 500  # drawn a page at a time
        assert (await page.text("#more")).startswith("Show 500 more rows (2500 not shown)")
        await page.click("#more")
        assert len(await result_rows(page)) == 1000
        assert (await result_rows(page))[999][0] == "1000"


async def test_stop_keeps_what_came_and_says_it_is_not_whole(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """Stop ends the read and closes the connection: the rows received stay, marked as not the whole answer."""
    client = await served_shop(make_gateway, shop_database)
    async with HeldProxy(client.port) as proxy:
        page = await open_page(f"http://127.0.0.1:{proxy.port}/console")
        await start_streaming(page, proxy)
        await page.click("#stop")
        await page.wait_for("document.querySelector('#status').textContent.startsWith('Stopped after')", "stopped")
        assert "not the whole answer" in await page.text("#status")
        assert await page.evaluate("document.querySelector('#stop').disabled && !document.querySelector('#run').disabled")

        # The browser closed its connection, as any client that leaves: the gateway cancels a query still running
        # then (docs/operations.md, status 499), or has already sent the rest of a short one.
        await wait_until(lambda: proxy.closed_by_clients > 0, 15, "the browser's connection closed")



async def test_an_answer_that_breaks_off_is_never_shown_as_whole(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """The connection closes part-way (as when the gateway cuts an answer): an error, not a short table as a whole one."""
    client = await served_shop(make_gateway, shop_database)
    async with HeldProxy(client.port) as proxy:
        page = await open_page(f"http://127.0.0.1:{proxy.port}/console")
        await start_streaming(page, proxy)
        proxy.cut()
        await page.wait_for("!document.querySelector('#error').hidden", "the error")
        assert (await page.text("#error")).startswith("The answer broke off")
        assert "received before the failure" in await page.text("#status")
        assert await page.evaluate("document.querySelector('.history-meta').textContent.includes('broke off')")
        # The browser saw the body end without its last chunk; that is the one error this test expects.
        assert page.errors and all("ERR_INCOMPLETE_CHUNKED_ENCODING" in error for error in page.errors)
        page.errors.clear()


async def test_forget_while_an_answer_streams_keeps_nothing_of_it(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """Forget during a read: the read stops and neither its rows nor a history entry come back afterwards."""
    client = await served_shop(make_gateway, shop_database)
    async with HeldProxy(client.port) as proxy:
        page = await open_page(f"http://127.0.0.1:{proxy.port}/console")
        await start_streaming(page, proxy)
        await page.click("#forget")
        await page.wait_for("!document.querySelector('#run').disabled", "the read ended")
        await wait_until(lambda: proxy.closed_by_clients > 0, 15, "the browser's connection closed")
        assert await page.evaluate("sessionStorage.length") == 0
        assert await page.evaluate("document.querySelectorAll('#result tbody tr, #history li').length") == 0
        assert await page.text("#status") == ""
