"""A TCP proxy a test controls: it forwards to a server until told to hang, then holds every byte.

``HangingProxy`` stands for a network path that goes silent while the TCP
connections over it stay open (a blackholed route, a frozen firewall state):
after ``hang()`` nothing more reaches either side, no socket is closed, and new
connections are accepted but never reach the server. ``resume()`` delivers what
was held, in order, as TCP would once the path came back. It runs its own event
loop in a thread, so a test may call gateways synchronously meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any


class HangingProxy:
    """Forwards 127.0.0.1:``port`` to ``target`` until ``hang()``; ``resume()`` lets the held bytes through."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hanging-proxy", daemon=True)
        self._flowing: asyncio.Event | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.port = 0
        self.held_from_clients = 0
        """Bytes clients sent over connections opened before the hang, read while hung (not yet delivered)."""
        self.connections_while_hung = 0
        """Connections accepted while hung (held, never connected to the server until ``resume``)."""

    def __enter__(self) -> HangingProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    @property
    def hung(self) -> bool:
        return self._flowing is not None and not self._flowing.is_set()

    def hang(self) -> None:
        """From now on nothing is forwarded, in either direction, on old or new connections."""
        asyncio.run_coroutine_threadsafe(self._set_flowing(False), self._loop).result(10)

    def resume(self) -> None:
        """Forward again, the held bytes first."""
        asyncio.run_coroutine_threadsafe(self._set_flowing(True), self._loop).result(10)

    async def _set_flowing(self, flowing: bool) -> None:
        assert self._flowing is not None
        if flowing:
            self._flowing.set()
        else:
            self._flowing.clear()

    async def _start(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None and self._flowing is not None
        self._flowing.set()
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None and self._flowing is not None
        self._tasks.add(task)
        upstream_writer: asyncio.StreamWriter | None = None
        try:
            if not self._flowing.is_set():
                self.connections_while_hung += 1
                await self._flowing.wait()
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._target)
            await asyncio.gather(
                self._pipe(client_reader, upstream_writer, counted=True),
                self._pipe(upstream_reader, client_writer, counted=False),
            )
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            for writer in (client_writer, upstream_writer):
                if writer is not None:
                    writer.close()
            self._tasks.discard(task)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, counted: bool) -> None:
        assert self._flowing is not None
        try:
            while data := await reader.read(65536):
                if not self._flowing.is_set():
                    if counted:
                        self.held_from_clients += len(data)
                    await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            # One side ended: so does the other, as a real connection's end would reach it.
            with contextlib.suppress(OSError):
                writer.close()
