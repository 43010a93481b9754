"""Serving the app: in this process, or in ``workers`` processes that share one port.

One Python process serves on one core. With ``workers = N`` (N > 1) the
``dbgateway serve`` process forks N workers; each builds its own app (pools,
log buffer, metrics) and binds the same address with ``SO_REUSEPORT``, so the
kernel spreads new client connections over them. The registry file is already
safe for several processes (see ``gateway.registry.store``).

The parent only supervises. SIGTERM or SIGINT to it stops every worker
gracefully and it exits 0 once they have. A worker that dies while serving is
replaced; one that dies within ``STARTUP_GRACE_SECONDS`` of its start (port
taken, for example) stops the whole gateway with exit status 1, since a
replacement would fail the same way. Workers run in their own process group,
so a terminal's Ctrl-C reaches the parent only, which then stops them once.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

import structlog
from aiohttp import web

from gateway.app import server_options
from gateway.config import GatewayConfig

STARTUP_GRACE_SECONDS = 2.0
"""A worker that exits sooner than this after its start is taken to have failed to start."""

STOP_TIMEOUT_SECONDS = 20.0
"""How long the parent waits for stopped workers before killing them (their own shutdown takes at most 10 s)."""

_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


FULL_COLLECTION_THRESHOLD = 100
"""Young-generation collections between two full ones (Python's default is 10); see ``serve``."""


def serve(app: web.Application, config: GatewayConfig, *, reuse_port: bool = False) -> None:
    """Run ``app`` on the configured address until SIGINT or SIGTERM."""
    # A full garbage collection walks every object of the process and holds the event loop for
    # as long (20 ms here); GetData's per-request caches churn enough to trigger one every second
    # or so. The objects built so far live as long as the process, so they are frozen out of the
    # collector's way, and full collections are made rarer. Young collections are unchanged.
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_THRESHOLD)
    web.run_app(
        app,
        host=config.listen_host,
        port=config.listen_port,
        reuse_port=reuse_port,
        # A client that goes away cancels its request: GetData then cancels its statement on the
        # server and gives the connection back, instead of running the query for nobody.
        handler_cancellation=True,
        print=None,
        access_log=None,
        shutdown_timeout=10.0,
        **server_options(config),
    )


class WorkerSupervisor:
    """The parent process of ``workers`` serving processes: starts, replaces and stops them."""

    def __init__(
        self,
        config: GatewayConfig,
        build_app: Callable[[GatewayConfig], web.Application],
        logger: structlog.typing.FilteringBoundLogger,
    ) -> None:
        self._config = config
        self._build_app = build_app
        self._logger = logger
        self._started_at: dict[int, float] = {}
        self._stopping = False

    def run(self) -> int:
        """Serve with ``config.workers`` processes until told to stop; the exit status for ``dbgateway``."""
        for signum in _STOP_SIGNALS:
            signal.signal(signum, self._stop_requested)
        for _ in range(self._config.workers):
            self._start_worker()
        self._logger.info("workers_started", workers=sorted(self._started_at))
        status = 0
        while self._started_at:
            try:
                pid, wait_status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for clarity on old kernels
                continue
            started = self._started_at.pop(pid, None)
            if started is None or self._stopping:
                continue
            code = os.waitstatus_to_exitcode(wait_status)
            if time.monotonic() - started < STARTUP_GRACE_SECONDS:
                self._logger.error("worker_failed_to_start", pid=pid, exit_code=code)
                status = 1
                self._stop_workers()
            else:
                self._logger.error("worker_exited", pid=pid, exit_code=code, action="replaced")
                self._start_worker()
        self._logger.info("workers_stopped")
        return status

    def _start_worker(self) -> None:
        # Blocked across the fork, so the child never runs the parent's handlers (which signal the workers).
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        pid = os.fork()
        if pid == 0:
            self._run_worker()  # never returns
        self._started_at[pid] = time.monotonic()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)

    def _run_worker(self) -> None:
        code = 1
        try:
            os.setpgid(0, 0)
            for signum in _STOP_SIGNALS:
                signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
            serve(self._build_app(self._config), self._config, reuse_port=True)
            code = 0
        except BaseException as error:  # noqa: BLE001 - a worker must never fall back into the parent's loop
            print(f"dbgateway worker {os.getpid()}: {error!r}", file=sys.stderr)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def _stop_requested(self, signum: int, frame: Any) -> None:
        self._logger.info("workers_stopping", signal=signal.Signals(signum).name)
        self._stop_workers()

    def _stop_workers(self) -> None:
        if self._stopping:
            return
        self._stopping = True
        for pid in list(self._started_at):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        signal.signal(signal.SIGALRM, self._kill_stragglers)
        signal.setitimer(signal.ITIMER_REAL, STOP_TIMEOUT_SECONDS)

    def _kill_stragglers(self, signum: int, frame: Any) -> None:
        for pid in list(self._started_at):
            self._logger.error("worker_killed", pid=pid, reason=f"still running {STOP_TIMEOUT_SECONDS:g} s after SIGTERM")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
