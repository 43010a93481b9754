"""Safe by construction, shown in Chromium: values are text, the policy holds, the token stays in the tab.

The values of ``console_shop.HOSTILE`` would run (or add elements) if the
console wrote them as HTML. The test looks twice: with the page's policy, and
with the policy switched off in the browser (``Page.setBypassCSP``), so that
writing values as text is shown to hold by itself and not only because the
policy would block what an HTML write let through.
"""

from __future__ import annotations

import pytest

from console_page import OpenPage, Page
from console_shop import SHOP_SQL  # noqa: F401  (the shop_database fixture reads the module's SHOP_SQL)
from console_shop import HOSTILE, HOSTILE_COLUMN, TOKEN, console_url, served_shop
from support import GatewayFactory
from test_webconsole_flow import paste_token, run_in_editor

HOSTILE_QUERY = "SELECT * FROM public.hostile ORDER BY id"


async def nothing_ran(page: Page) -> None:
    assert await page.evaluate("window.__xss === undefined"), await page.evaluate("String(window.__xss)")
    assert page.dialogs == []
    # No element came from a value: the table holds only its own rows, cells, spans and buttons.
    made = await page.evaluate(
        "[...document.querySelectorAll('#result *, #catalogue *')].map(e => e.tagName.toLowerCase())"
        ".filter(t => !['thead', 'tbody', 'tr', 'th', 'td', 'span', 'button', 'section', 'h3', 'ul', 'li',"
        " 'details', 'summary', 'p'].includes(t))"
    )
    assert made == []
    assert await page.evaluate("document.querySelectorAll('a[href^=\"javascript\"], img, script:not([src])').length") == 0


@pytest.mark.parametrize("policy", ["with the policy", "policy bypassed"])
async def test_hostile_values_are_shown_as_text_and_nothing_runs(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage, policy: str
) -> None:
    """<script>, <img onerror>, javascript: and markup in values and in a column name: shown as typed, none runs."""
    client = await served_shop(make_gateway, shop_database)
    page = await open_page("about:blank")
    if policy == "policy bypassed":
        await page.send("Page.setBypassCSP", {"enabled": True})
    await page.goto(console_url(client))
    await paste_token(page)
    await page.evaluate(
        "[...document.querySelectorAll('.table')].find(t => t.textContent.includes('shop_public_hostile'))"
        ".querySelector('summary').click()"
    )
    column_names = await page.evaluate("[...document.querySelectorAll('.column-name')].map(e => e.textContent)")
    assert HOSTILE_COLUMN in column_names
    await run_in_editor(page, HOSTILE_QUERY)
    await page.wait_for(f"document.querySelector('#status').textContent === '{len(HOSTILE)} rows.'", "the rows")
    cells = await page.evaluate(
        "[...document.querySelectorAll('#result tbody tr')].map(r => r.cells[1].textContent)"
    )
    assert cells == HOSTILE
    assert await page.evaluate("document.querySelectorAll('#result tbody tr').length") == len(HOSTILE)
    assert await page.evaluate("document.querySelector('#result th .column-name:not(.x)') && "
                               "[...document.querySelectorAll('#result th .column-name')].map(e => e.textContent)") \
        == ["id", HOSTILE_COLUMN]
    # Hovering and focusing everything in the table would set off any handler an element had.
    await page.evaluate(
        "document.querySelectorAll('#result *').forEach(e => { e.dispatchEvent(new MouseEvent('mouseover',"
        " {bubbles: true})); e.focus && e.focus(); })"
    )
    await nothing_ran(page)
    if policy == "with the policy":
        await page.screenshot("5-hostile-values")


async def test_the_policy_refuses_html_from_strings_inline_code_and_other_sites(
    make_gateway: GatewayFactory, open_page: OpenPage
) -> None:
    """In the console's page: HTML or a handler from a string throws (Trusted Types), and a script or a request to
    another origin is blocked before it leaves the browser.

    (Code run through DevTools, as these attempts are, may eval whatever a page's policy says; so eval is not tried.)
    """
    client = await make_gateway()
    page = await open_page(console_url(client))
    attempts = {
        "innerHTML": "document.body.innerHTML += '<b>x</b>'",
        "handler": "document.createElement('img').setAttribute('onerror', 'window.__ran = 1')",
    }
    for name, attempt in attempts.items():
        refused = await page.evaluate(f"(() => {{ try {{ {attempt}; return false; }} catch (e) {{ return e.name; }} }})()")
        assert refused == "TypeError", name
    await page.evaluate(
        "window.__violations = []; document.addEventListener('securitypolicyviolation',"
        " e => window.__violations.push(e.effectiveDirective));"
        " import('http://127.0.0.2:9/x.js').catch(() => null); fetch('http://127.0.0.2:9/').catch(() => null); 1"
    )
    await page.wait_for("window.__violations.length >= 2", "both refusals reported")
    blocked = await page.evaluate("window.__violations")
    assert sorted(blocked) == ["connect-src", "script-src-elem"]
    assert await page.evaluate("window.__ran === undefined")
    page.errors.clear()  # the refusals this test provoked are reported as errors, as they should be


async def test_the_token_stays_in_the_tab_and_forget_clears_everything(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """The token is in session storage only: not in the address, a cookie, the page or the gateway's log.

    Forget removes it with the tab's history and answer; a reload finds none.
    """
    client = await served_shop(make_gateway, shop_database)
    page = await open_page(console_url(client))
    await paste_token(page)
    await run_in_editor(page, "SELECT c.name FROM public.customers AS c ORDER BY c.name")
    await page.wait_for("document.querySelector('#status').textContent === '2 rows.'", "the answer")
    assert await page.evaluate("sessionStorage.getItem('dbgateway.console.user_token')") == TOKEN
    assert await page.evaluate("localStorage.length") == 0
    assert await page.evaluate("document.querySelector('#token').value") == ""
    cookies = await page.send("Network.getCookies", {"urls": [console_url(client)]})
    assert cookies["cookies"] == []
    history = await page.send("Page.getNavigationHistory")
    assert all(TOKEN not in entry["url"] for entry in history["entries"])
    assert TOKEN not in await page.evaluate("document.documentElement.outerHTML")
    log = client.log_stream.getvalue()  # type: ignore[attr-defined]
    assert '"path":"/GetData"' in log and TOKEN not in log

    await page.click("#forget")
    await page.wait_for("sessionStorage.length === 0", "session storage emptied")
    assert await page.evaluate("document.querySelectorAll('#catalogue *, #history *, #result tbody *').length") == 0
    assert await page.focused() == "token"
    await page.screenshot("7-forgotten")
    await page.goto(console_url(client))
    assert "No token" in await page.text("#token-state")
    assert await page.evaluate("document.querySelector('#forget').disabled")
