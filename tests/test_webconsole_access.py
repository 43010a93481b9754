"""The console with the keyboard alone, its labels and focus, at 1280x800 and in a narrow window.

The keyboard test presses keys only (Tab, Enter, Escape, Ctrl+Enter, typed
text): no click, no value set by script. At each stop it checks that the
focused control shows it (an outline, or the editor's frame).
"""

from __future__ import annotations

import pytest

from console_page import OpenPage, Page
from console_shop import SHOP_SQL  # noqa: F401  (the shop_database fixture reads the module's SHOP_SQL)
from console_shop import TOKEN, console_url, served_shop
from support import GatewayFactory
from test_webconsole_flow import paste_token, run_in_editor

FOCUS_SHOWN = """(() => {
  const e = document.activeElement;
  const shown = (node) => { const s = getComputedStyle(node); return s.outlineStyle !== 'none' && s.outlineWidth !== '0px'; };
  return e !== document.body && (shown(e) || (e.id === 'editor' && shown(document.querySelector('.editor'))));
})()"""
"""Whether the focused element shows its focus (the editor shows it on its frame)."""


async def tab_to(page: Page, condition: str, what: str, backwards: bool = False, presses: int = 40) -> None:
    """Press Tab (or Shift+Tab) until ``condition`` holds for document.activeElement (``e``), each stop visible."""
    for _ in range(presses):
        await page.press("Tab", shift=backwards)
        assert await page.evaluate(FOCUS_SHOWN), f"focus not visible on {await page.focused()}"
        if await page.evaluate(f"(e => Boolean({condition}))(document.activeElement)"):
            return
    raise AssertionError(f"{what} not reached with {presses} presses of Tab")


async def test_the_whole_console_works_with_the_keyboard_alone(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """Token, a table's columns, its first query, the answer, a whole value, the history: keys only."""
    client = await served_shop(make_gateway, shop_database)
    page = await open_page(console_url(client))
    assert await page.focused() == "token"  # where a first visit starts
    await page.type(TOKEN)
    await page.press("Enter")
    await page.wait_for("document.querySelector('#catalogue-state').textContent.includes('tables in')", "the tables")

    await tab_to(page, "e.tagName === 'SUMMARY' && e.textContent.includes('shop_public_orders')", "the orders table")
    await page.press("Enter")
    assert await page.evaluate("document.activeElement.parentElement.open")
    await tab_to(page, "e.classList.contains('query-table')", "its Query button")
    await page.screenshot("9-keyboard-focus")
    await page.press("Enter")
    assert await page.focused() == "editor"
    assert (await page.evaluate("document.querySelector('#editor').value")).startswith("SELECT *\nFROM public.orders")
    await page.press("Enter", ctrl=True)
    await page.wait_for("document.querySelector('#status').textContent === '4 rows.'", "the answer")

    await page.press("Tab")  # Tab leaves the editor: the next control, not a tab character
    assert await page.focused() == "run"
    await tab_to(page, "e.classList.contains('whole')", "a shortened value's button")
    await page.press("Enter")
    await page.wait_for("document.querySelector('#value-dialog').open", "the dialog")
    assert await page.focused() == "value-close"
    await page.press("Escape")
    await page.wait_for("!document.querySelector('#value-dialog').open", "the dialog closed")
    assert await page.evaluate("document.activeElement.classList.contains('whole')")  # back where it was

    # The history puts the query back (Shift+Tab back up to it), and Cmd+Enter runs as Ctrl+Enter does.
    await tab_to(page, "e.classList.contains('history-entry')", "the history", backwards=True, presses=80)
    await page.press("Enter")
    assert await page.focused() == "editor"
    await page.press("Enter", meta=True)
    await page.wait_for("document.querySelector('.history-meta') && document.querySelectorAll('.history li').length === 1",
                        "one entry for the same query")
    await page.wait_for("document.querySelector('#status').textContent === '4 rows.'", "the answer again")


async def test_the_skip_link_leads_to_the_editor(make_gateway: GatewayFactory, open_page: OpenPage) -> None:
    """The page's first stop (before the token field) is a link past the side column, straight to the SQL editor."""
    client = await make_gateway()
    page = await open_page(console_url(client))
    assert await page.focused() == "token"
    await page.press("Tab", shift=True)
    assert await page.evaluate("document.activeElement.classList.contains('skip')")
    assert await page.evaluate(FOCUS_SHOWN)
    await page.press("Enter")
    await page.wait_for("document.activeElement.id === 'editor'", "the editor focused")


async def test_every_control_is_labelled(make_gateway: GatewayFactory, open_page: OpenPage, shop_database: str) -> None:
    """Each field has a label; each button says what it does (its text, or an aria-label)."""
    client = await served_shop(make_gateway, shop_database)
    page = await open_page(console_url(client))
    await paste_token(page)
    await run_in_editor(page, "SELECT o.note FROM public.orders AS o")
    await page.wait_for("document.querySelector('#status').textContent === '4 rows.'", "the answer")
    unlabelled = await page.evaluate(
        "[...document.querySelectorAll('input, select, textarea')].filter(e => !e.labels.length"
        " && !e.getAttribute('aria-label')).map(e => e.id)"
    )
    assert unlabelled == []
    mute = await page.evaluate(
        "[...document.querySelectorAll('button')].filter(b => !b.textContent.trim()"
        " && !b.getAttribute('aria-label')).map(b => b.outerHTML)"
    )
    assert mute == []


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 800, "wide"), (390, 844, "narrow")])
async def test_the_page_fits_its_window(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage, width: int, height: int, name: str
) -> None:
    """Side by side at 1280x800, one column when narrow; never wider than the window (the table scrolls inside)."""
    client = await served_shop(make_gateway, shop_database)
    page = await open_page(console_url(client), width=width, height=height)
    await paste_token(page)
    await run_in_editor(page, "SELECT * FROM public.orders AS o ORDER BY o.id")
    await page.wait_for("document.querySelector('#status').textContent === '4 rows.'", "the answer")
    assert await page.evaluate("document.documentElement.scrollWidth") <= width
    side, main = await page.evaluate(
        "['.side', '.main'].map(s => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })"
    )
    if name == "wide":
        assert side["right"] <= main["left"] and main["right"] <= width
    else:
        assert main["top"] >= side["bottom"] and main["right"] <= width
    outside = await page.evaluate(
        "[...document.querySelectorAll('button:not([hidden]), input, select, textarea')]"
        ".filter(e => e.offsetParent !== null && !e.closest('.table-wrap, dialog'))"
        f".filter(e => {{ const r = e.getBoundingClientRect(); return r.left < 0 || r.right > {width}; }})"
        ".map(e => e.id || e.textContent)"
    )
    assert outside == []
    await page.screenshot(f"10-{name}-{width}x{height}")
