"""A TCP proxy on the test's event loop that can hold answers back after a number of bytes, or cut them there.

The console's streaming test puts it between the browser and the gateway:
``hold_after(n)`` lets only ``n`` more bytes of answers through and keeps the
rest until ``release()``, so the test sees what the page shows while an answer
is part-way (no sleeping, no timing: the answer stays part-way until the test
lets it go). ``cut()`` closes every connection instead, as a gateway that cut an
answer short does (docs/api.md, "a client can always tell").
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


class HeldProxy:
    """Forwards 127.0.0.1:``port`` to ``target_port``; answers flow freely until ``hold_after``."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self._budget: int | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.held_bytes = 0
        """Bytes of answers kept back so far."""
        self.closed_by_clients = 0
        """Connections the client (the browser) closed."""

    async def __aenter__(self) -> HeldProxy:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cut()
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def hold_after(self, budget: int) -> None:
        """From now on let ``budget`` more bytes of answers through, then hold the rest."""
        self._budget = budget
        self._flowing.clear()

    def release(self) -> None:
        """Let everything through again, what was held first."""
        self._budget = None
        self._flowing.set()

    def cut(self) -> None:
        """Close every connection now, both ways, whatever was held."""
        for writer in list(self._writers):
            writer.transport.abort()

    async def _connection(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers.update((client_writer, server_writer))
        up = asyncio.create_task(self._pump(client_reader, server_writer, held=False))
        down = asyncio.create_task(self._pump(server_reader, client_writer, held=True))
        self._tasks.update((up, down))
        await asyncio.wait((up, down), return_when=asyncio.FIRST_COMPLETED)
        if up.done() and client_reader.at_eof():
            self.closed_by_clients += 1
        for writer in (client_writer, server_writer):
            self._writers.discard(writer)
            writer.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, held: bool) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                while held and data and self._budget is not None:
                    allowed = min(len(data), self._budget)
                    writer.write(data[:allowed])
                    self._budget -= allowed
                    data = data[allowed:]
                    if data:
                        self.held_bytes += len(data)
                        await self._flowing.wait()  # the budget is spent: wait for release()
                writer.write(data)
                await writer.drain()
