"""The console in a real Chromium page: what a test does as a person would (keys, clicks), and its fixtures.

A ``Page`` is one tab in a browser context of its own, so session storage,
cookies and downloads never pass from one test to the next. Conditions are
waited for with a deadline (``wait_for``), never for a fixed time. Anything
the page throws or logs as an error (a script error, a refused Content-Security-
Policy) is collected in ``Page.errors``, and the fixture fails a test whose page
had any that the test did not expect.

Screenshots go to ``build/console-screenshots/`` (``DBGATEWAY_SCREENSHOTS``
names another folder): the artefacts of a run; docs/console.md shows copies.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from chromium import Cdp, CdpError, ChromiumProcess
from repository_scripts import script

REPOSITORY = Path(__file__).resolve().parent.parent
SCREENSHOTS = Path(os.environ.get("DBGATEWAY_SCREENSHOTS", REPOSITORY / "build" / "console-screenshots"))
WAIT_SECONDS = 15.0

# key: (code, Windows virtual key code, text typed)
KEYS = {
    "Enter": ("Enter", 13, "\r"),
    "Tab": ("Tab", 9, None),
    "Escape": ("Escape", 27, None),
    " ": ("Space", 32, " "),
    "ArrowDown": ("ArrowDown", 40, None),
    "ArrowUp": ("ArrowUp", 38, None),
}
MODIFIERS = {"alt": 1, "ctrl": 2, "meta": 4, "shift": 8}


class Page:
    """One tab of the console (or any page), with the protocol's session to it."""

    def __init__(self, cdp: Cdp, context_id: str, target_id: str, session_id: str) -> None:
        self.cdp = cdp
        self.context_id = context_id
        self.target_id = target_id
        self.session_id = session_id
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.downloads: dict[str, str] = {}
        """Completed downloads: the name the page gave each, to its guid (the file's name in the folder)."""
        self._download_names: dict[str, str] = {}
        self.download_folder = Path()
        self._loaded = asyncio.Event()

    @classmethod
    async def open(cls, cdp: Cdp, downloads: Path, width: int = 1280, height: int = 800) -> Page:
        context_id = (await cdp.send("Target.createBrowserContext", {"disposeOnDetach": True}))["browserContextId"]
        target = await cdp.send("Target.createTarget", {"url": "about:blank", "browserContextId": context_id})
        session = await cdp.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        page = cls(cdp, context_id, target["targetId"], session["sessionId"])
        sid = page.session_id
        cdp.listen("Runtime.exceptionThrown", sid, lambda p: page.errors.append(str(p["exceptionDetails"])))
        cdp.listen("Log.entryAdded", sid, page._log_entry)
        cdp.listen("Runtime.consoleAPICalled", sid, page._console_call)
        cdp.listen("Page.loadEventFired", sid, lambda p: page._loaded.set())
        cdp.listen("Page.javascriptDialogOpening", sid, page._dialog)
        cdp.listen("Browser.downloadWillBegin", None, page._download_begins)
        cdp.listen("Browser.downloadProgress", None, page._download)
        for domain in ("Page", "Runtime", "Log"):
            await page.send(f"{domain}.enable")
        downloads.mkdir(parents=True, exist_ok=True)
        page.download_folder = downloads
        await cdp.send(
            "Browser.setDownloadBehavior",
            {"behavior": "allowAndName", "browserContextId": context_id, "downloadPath": str(downloads),
             "eventsEnabled": True},
        )
        await page.set_size(width, height)
        return page

    def _log_entry(self, params: dict[str, Any]) -> None:
        entry = params["entry"]
        # An API call answered with an error status is logged by the browser; the page shows those (the tests
        # check what it shows). Anything else logged as an error is a fault of the page.
        answered = entry["source"] == "network" and "responded with a status of" in entry["text"]
        if entry["level"] == "error" and not answered:
            self.errors.append(f"{entry['source']}: {entry['text']}")

    def _console_call(self, params: dict[str, Any]) -> None:
        if params["type"] in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(arg.get("value", arg)) for arg in params["args"]))

    def _dialog(self, params: dict[str, Any]) -> None:
        # alert() from a value that ran as script: noted, then dismissed so the page goes on.
        self.dialogs.append(params["message"])
        asyncio.get_running_loop().create_task(self.send("Page.handleJavaScriptDialog", {"accept": False}))

    def _download_begins(self, params: dict[str, Any]) -> None:
        self._download_names[params["guid"]] = params["suggestedFilename"]

    def _download(self, params: dict[str, Any]) -> None:
        if params["state"] == "completed" and params["guid"] in self._download_names:
            self.downloads[self._download_names[params["guid"]]] = params["guid"]

    async def downloaded(self, name: str, seconds: float = WAIT_SECONDS) -> bytes:
        """The bytes of the file the page downloaded as ``name``, once the browser says it is complete."""
        deadline = time.monotonic() + seconds
        while name not in self.downloads:
            assert time.monotonic() < deadline, f"the download {name} did not complete within {seconds} s"
            await asyncio.sleep(0.05)
        return (self.download_folder / self.downloads[name]).read_bytes()

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.cdp.send(method, params, session_id=self.session_id)

    async def close(self) -> None:
        try:
            await self.cdp.send("Target.closeTarget", {"targetId": self.target_id})
            await self.cdp.send("Target.disposeBrowserContext", {"browserContextId": self.context_id})
        except CdpError:
            pass  # already gone with the browser

    async def set_size(self, width: int, height: int) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    async def goto(self, url: str) -> None:
        self._loaded.clear()
        await self.send("Page.navigate", {"url": url})
        await asyncio.wait_for(self._loaded.wait(), WAIT_SECONDS)

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited); a ``CdpError`` if it throws."""
        answer = await self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in answer:
            raise CdpError(f"{expression!r} threw: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    async def wait_for(self, expression: str, what: str, seconds: float = WAIT_SECONDS) -> Any:
        """The expression's value once it is truthy; fails the test if it is not within ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            assert time.monotonic() < deadline, f"not within {seconds} s: {what} (last: {value!r})"
            await asyncio.sleep(0.05)

    async def text(self, selector: str) -> str:
        return await self.evaluate(f"document.querySelector({js(selector)}).textContent")

    async def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element (which moves the focus as a person's would)."""
        box = await self.evaluate(
            f"(() => {{ const e = document.querySelector({js(selector)}); e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            await self.send(
                "Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1}
            )

    async def press(self, key: str, **modifiers: bool) -> None:
        """One key, as the keyboard sends it; ``ctrl=True``, ``meta=True``, ``shift=True`` hold those."""
        code, key_code, text = KEYS[key]
        flags = sum(bit for name, bit in MODIFIERS.items() if modifiers.get(name))
        down: dict[str, Any] = {"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": key_code}
        down["modifiers"] = flags
        if text is not None and not flags & (MODIFIERS["ctrl"] | MODIFIERS["meta"]):
            down["text"] = text
        await self.send("Input.dispatchKeyEvent", down)
        await self.send(
            "Input.dispatchKeyEvent",
            {"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": key_code, "modifiers": flags},
        )

    async def type(self, text: str) -> None:
        """Text typed into the focused control (an input event, as from a keyboard)."""
        await self.send("Input.insertText", {"text": text})

    async def focused(self) -> str:
        """The focused element's id (or its tag and text when it has none)."""
        return await self.evaluate(
            "(() => { const e = document.activeElement; return e.id || e.tagName + ':' + e.textContent.trim(); })()"
        )

    async def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shot = await self.send("Page.captureScreenshot", {"format": "png"})
        path = SCREENSHOTS / f"{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


def js(value: Any) -> str:
    """A Python value written as a JavaScript literal (JSON), for building expressions safely."""
    return orjson.dumps(value).decode()


@pytest.fixture(scope="session")
def chromium() -> Iterator[ChromiumProcess]:
    """One headless Chromium for the session (installed by `make test`, scripts/ensure_chromium.py)."""
    executable = script("ensure_chromium").find_chromium()
    if executable is None:
        pytest.fail(
            "no Chromium found (chromium, chromium-browser, google-chrome): run `python scripts/ensure_chromium.py`, "
            "as `make test` does, or set DBGATEWAY_CHROMIUM to the browser's command",
            pytrace=False,
        )
    process = ChromiumProcess(executable)
    yield process
    process.stop()


OpenPage = Callable[..., Awaitable[Page]]


@pytest.fixture
async def open_page(chromium: ChromiumProcess, tmp_path: Path) -> AsyncIterator[OpenPage]:
    """Open pages (``await open_page(url, width=, height=)``); any page error not expected fails the test."""
    cdp = await Cdp.connect(chromium.websocket_url)
    pages: list[Page] = []

    async def start(url: str, width: int = 1280, height: int = 800) -> Page:
        page = await Page.open(cdp, tmp_path / "downloads", width, height)
        pages.append(page)
        await page.goto(url)
        return page

    yield start
    for page in pages:
        await page.close()
    await cdp.close()
    errors = [error for page in pages for error in page.errors]
    if errors:
        pytest.fail("the page reported errors:\n" + "\n".join(errors), pytrace=False)
