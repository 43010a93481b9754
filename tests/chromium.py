"""A real headless Chromium, driven over the Chrome DevTools Protocol with aiohttp's websocket client.

Why this rather than a library: the browser is Debian's ``chromium`` package
(``scripts/ensure_chromium.py`` installs it where missing), and the protocol is
JSON over one websocket, which aiohttp (already a dependency) speaks. Playwright
downloads a browser build of its own, which this project's machines cannot
fetch; Selenium needs chromedriver in the exact version of the browser and adds
a process between the test and the page. Here nothing is added to the test
environment, and every step a test takes is one protocol command it can read
(docs/console.md, "Tests").

``ChromiumProcess`` starts one browser for the whole session (about a second);
``Cdp`` is one connection to it, opened per test on the test's event loop; each
page lives in a browser context of its own (its own session storage, cookies
and downloads), made and thrown away by the test (``console_page.Page``).
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

START_TIMEOUT = 30.0
COMMAND_TIMEOUT = 30.0

FLAGS = (
    "--headless",
    "--no-sandbox",  # the tests run as root on the project's machines, where the sandbox cannot start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",  # no update checks, no safe-browsing lists: the machines have no internet
    "--disable-component-update",
    "--disable-sync",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--password-store=basic",
    "--font-render-hinting=none",  # the same glyphs on every machine, for screenshots that compare
    "--hide-scrollbars",
    "--mute-audio",
)


class ChromiumProcess:
    """One headless Chromium with a fresh profile; its DevTools websocket URL once it listens."""

    def __init__(self, executable: str) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="dbgateway-chromium-"))
        self.log_path = self.profile / "chromium.log"
        self._log = self.log_path.open("wb")
        command = [executable, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "about:blank"]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        self.websocket_url = self._wait_for_port()

    def _wait_for_port(self) -> str:
        """Chromium writes the port it chose and the browser's path to DevToolsActivePort once it listens."""
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            lines = port_file.read_text().split() if port_file.exists() else []
            if len(lines) >= 2:
                return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"Chromium did not start within {START_TIMEOUT} s:\n{self.log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


class CdpError(Exception):
    """A protocol command failed, or the page threw."""


Listener = Callable[[dict[str, Any]], None]


class Cdp:
    """One DevTools connection: commands with their answers, events to whoever listens for them."""

    def __init__(self, session: aiohttp.ClientSession, socket: aiohttp.ClientWebSocketResponse) -> None:
        self._session = session
        self._socket = socket
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._listeners: list[tuple[str, str | None, Listener]] = []
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(cls, websocket_url: str) -> Cdp:
        session = aiohttp.ClientSession()
        socket = await session.ws_connect(websocket_url, max_msg_size=0)
        return cls(session, socket)

    async def close(self) -> None:
        self._reader.cancel()
        await self._socket.close()
        await self._session.close()

    async def send(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None) -> Any:
        """Send a command and return its result (a ``CdpError`` if the browser refused it)."""
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future = asyncio.get_running_loop().create_future()
        self._waiting[message_id] = future
        await self._socket.send_json(message)
        try:
            answer = await asyncio.wait_for(future, COMMAND_TIMEOUT)
        finally:
            self._waiting.pop(message_id, None)
        if "error" in answer:
            raise CdpError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def listen(self, method: str, session_id: str | None, listener: Listener) -> None:
        """Call ``listener(params)`` for every event ``method`` of that session (None: the browser's own)."""
        self._listeners.append((method, session_id, listener))

    async def _read(self) -> None:
        async for message in self._socket:
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            data = message.json()
            if "id" in data:
                future = self._waiting.get(data["id"])
                if future is not None and not future.done():
                    future.set_result(data)
                continue
            for method, session_id, listener in list(self._listeners):
                if data.get("method") == method and data.get("sessionId") == session_id:
                    listener(data.get("params", {}))
        for future in self._waiting.values():  # the browser went away: nobody waits forever
            if not future.done():
                future.set_exception(CdpError("the DevTools connection closed"))
