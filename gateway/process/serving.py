"""Serving one app: sockets bound before the gateway says it listens, and a shutdown that ends in time.

``dbgateway serve`` checks the data folder and binds its listening sockets
before it builds the app, so the usual reasons a start fails (port taken, an
address that does not resolve, a data folder it cannot write) stop it with one
sentence (``StartupError``, exit status 2) and ``gateway_listening`` is logged
only once the port is held.

After SIGTERM, SIGINT or SIGHUP (``STOP_SIGNALS``, logged with the signal's name
in ``gateway_stopping``; a repeat is logged and changes nothing) a serving
process stops accepting connections, lets
running requests go on for ``REQUEST_GRACE_SHARE`` of ``shutdown_timeout``,
then cancels those still running (a GetData stream to a client that reads
slowly is cut there), closes the database pools and exits 0. Should anything
still hold it at ``shutdown_timeout``, it exits 1 on the spot.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import os
import signal
import socket
import sys
import tempfile
import threading
import weakref

import structlog
from aiohttp import web

from gateway.observability.log_stream import flush_held_lines
from gateway.settings.config import GatewayConfig
from gateway.web.app import server_options
from gateway.web.keys import CONFIG, LOGGER, REQUEST_TASKS

LISTEN_BACKLOG = 128
"""Connections the kernel queues per listening socket until they are accepted (aiohttp's default)."""

REQUEST_GRACE_SHARE = 0.8
"""The share of ``shutdown_timeout`` running requests get after SIGTERM; the rest is for closing pools."""

FULL_COLLECTION_THRESHOLD = 100
"""Middle-generation collections between two full ones (Python's default is 10); see ``serve``."""

YOUNG_COLLECTION_THRESHOLD = 7000
"""New container objects between two young-generation collections (Python's default is 700); see ``serve``."""

FLUSH_POLL_SECONDS = 0.05
"""While stopping, how often the process looks whether the answers' last bytes left its buffers."""

DEADLINE_EXIT_STATUS = 1
"""The exit status of a process that was still stopping at ``shutdown_timeout``."""

_BIND_PROBLEMS = {
    errno.EADDRINUSE: "the address is already in use (is another gateway running?)",
    errno.EADDRNOTAVAIL: "the address is not one of this host's",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
}


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""Each begins the same graceful stop. SIGHUP too: the gateway has nothing it could reload in place (settings are
read at start, workers are forks of the main process), and a terminal that closes sends it."""


class StartupError(Exception):
    """The gateway cannot start; the message is one sentence saying what to fix."""


def prepare_data_dir(config: GatewayConfig) -> None:
    """Create the data folder if needed and make sure this process can write in it."""
    folder = config.data_dir
    hint = "set data_dir (or --data-dir) to a folder this user can write"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StartupError(f"data folder {folder} cannot be created ({error.strerror}); {hint}") from None
    try:
        descriptor, probe = tempfile.mkstemp(dir=folder, prefix=".write-check-")
        os.close(descriptor)
        os.unlink(probe)
    except OSError as error:
        raise StartupError(f"data folder {folder} is not writable ({error.strerror}); {hint}") from None


def listening_sockets(config: GatewayConfig, *, reuse_port: bool = False) -> list[socket.socket]:
    """One bound (not yet listening) socket per address ``listen_host`` resolves to, on ``listen_port``."""
    where = f"{config.listen_host}:{config.listen_port}"
    try:
        addresses = socket.getaddrinfo(
            config.listen_host, config.listen_port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as error:
        raise StartupError(f"cannot listen on {where}: the address does not resolve ({error.strerror})") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, protocol, _, address in dict.fromkeys(addresses):
            bound = socket.socket(family, kind, protocol)
            sockets.append(bound)
            bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                bound.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            bound.bind(address)
    except OSError as error:
        for bound in sockets:
            bound.close()
        problem = _BIND_PROBLEMS.get(error.errno or 0, (error.strerror or str(error)).lower())
        raise StartupError(f"cannot listen on {where}: {problem}") from None
    return sockets


def worker_sockets(config: GatewayConfig, workers: int) -> list[list[socket.socket]]:
    """The bound sockets of ``workers`` workers (``listening_sockets`` each), with ``SO_REUSEPORT``.

    ``SO_REUSEPORT`` lets any process of the same user bind the port once more,
    so binding alone would not notice another gateway that already serves it
    (its workers' sockets carry the option too) and both would split the
    traffic. A socket bound first without the option, and closed again once the
    workers' sockets are bound, fails as a single gateway's bind does when
    anything listens on the address.
    """
    probe = listening_sockets(config)
    try:
        return [listening_sockets(config, reuse_port=True) for _ in range(workers)]
    finally:
        for bound in probe:
            bound.close()


def serve(app: web.Application, config: GatewayConfig, sockets: list[socket.socket]) -> int:
    """Serve ``app`` on ``sockets`` until a stop signal; the exit status (0, or 1 past the deadline)."""
    # A full garbage collection walks every object of the process and holds the event loop for
    # as long (20 ms here); GetData's per-request caches churn enough to trigger one every second
    # or so. The objects built so far live as long as the process, so they are frozen out of the
    # collector's way, and full collections are made rarer. Young collections are unchanged.
    gc.collect()
    gc.freeze()
    _, middle, _ = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, FULL_COLLECTION_THRESHOLD)
    Drain(config).attach(app)
    web.run_app(
        app,
        sock=sockets,
        backlog=LISTEN_BACKLOG,
        # A client that goes away cancels its request: GetData then cancels its statement on the
        # server and gives the connection back, instead of running the query for nobody.
        handler_cancellation=True,
        print=None,
        access_log=None,
        shutdown_timeout=request_grace_seconds(config),
        **server_options(config),
    )
    return 0


class Drain:
    """A serving process's graceful stop: the signal that begins it, the running requests' grace, the answers' tails.

    ``STOP_SIGNALS`` replace aiohttp's own handlers (SIGINT and SIGTERM only,
    raising again at a repeat, which ended aiohttp's clean-up halfway): the
    first begins the stop, a later one is logged and ignored. Once the requests
    are done, the process waits, until their grace ends, for what their answers
    left in the event loop's write buffers (the part of an answer a slowly
    reading client has not taken yet, tens of KiB): the loop would otherwise
    close with it, and an answer the server finished would reach the client cut
    (``answers_still_sending`` says when it waits).
    """

    def __init__(self, config: GatewayConfig) -> None:
        self._config = config
        self.signal: str | None = None
        """The name of the signal that began the stop, once one did."""
        self._logger: structlog.typing.FilteringBoundLogger | None = None
        self._grace_ends: float | None = None
        self._connections: weakref.WeakSet[asyncio.Transport] = weakref.WeakSet()

    def attach(self, app: web.Application) -> None:
        app.on_startup.append(self._handle_signals)
        app.on_response_prepare.append(self._answering)
        app.on_shutdown.append(self._begin)
        app.on_cleanup.append(self._let_answers_out)

    async def _handle_signals(self, app: web.Application) -> None:
        """On start-up, after aiohttp installed its handlers, which these replace."""
        self._logger = app[LOGGER]
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            loop.add_signal_handler(signum, self._received, signum)

    def _received(self, signum: int) -> None:
        name = signal.Signals(signum).name
        if self.signal is not None:
            if self._logger is not None:
                self._logger.info("stop_signal_ignored", signal=name, reason=f"already stopping after {self.signal}")
            return
        self.signal = name
        raise web.GracefulExit()  # aiohttp's run_app then closes the sockets and runs _begin

    async def _answering(self, request: web.Request, response: web.StreamResponse) -> None:
        """``on_response_prepare``: the connection an answer goes out on."""
        if request.transport is not None:
            self._connections.add(request.transport)

    async def _begin(self, app: web.Application) -> None:
        """Runs once the sockets are closed: cut requests at the grace period, exit at ``shutdown_timeout``."""
        config, logger = self._config, app[LOGGER]
        grace = request_grace_seconds(config)
        running = len(app[REQUEST_TASKS])
        logger.info("gateway_stopping", signal=self.signal, running_requests=running, grace_seconds=grace)
        loop = asyncio.get_running_loop()
        self._grace_ends = loop.time() + grace
        loop.call_later(grace, _cut_running_requests, app)
        # aiohttp waits for handlers in two rounds of shutdown_timeout each, and closing pools can wait on
        # a database: a timer outside the event loop keeps the promise whatever holds the loop.
        deadline = threading.Timer(config.shutdown_timeout, _exit_at_deadline, args=(logger, config.shutdown_timeout))
        deadline.daemon = True
        deadline.start()

    async def _let_answers_out(self, app: web.Application) -> None:
        """``on_cleanup``, every request done: wait until the answers' last bytes left, or the grace ends."""
        loop = asyncio.get_running_loop()
        logged = False
        while self._grace_ends is not None and loop.time() < self._grace_ends:
            held = [size for connection in list(self._connections) if (size := connection.get_write_buffer_size())]
            if not held:
                return
            if not logged:
                app[LOGGER].info("answers_still_sending", connections=len(held), bytes=sum(held))
                logged = True
            await asyncio.sleep(FLUSH_POLL_SECONDS)


def request_grace_seconds(config: GatewayConfig) -> float:
    """How long running requests may go on after SIGTERM before they are cancelled."""
    return config.shutdown_timeout * REQUEST_GRACE_SHARE


def _cut_running_requests(app: web.Application) -> None:
    cut = app[REQUEST_TASKS].cancel_all()
    if cut:
        app[LOGGER].warning("requests_cut_at_shutdown", requests=cut, grace_seconds=request_grace_seconds(app[CONFIG]))


def _exit_at_deadline(logger: structlog.typing.FilteringBoundLogger, seconds: float) -> None:
    logger.error("shutdown_deadline_passed", seconds=seconds, exit_code=DEADLINE_EXIT_STATUS)
    flush_held_lines()
    sys.stderr.flush()
    os._exit(DEADLINE_EXIT_STATUS)
