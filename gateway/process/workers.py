"""``workers`` > 1: worker processes that share one port, and the parent that supervises them.

One Python process serves on one core. With ``workers = N`` (N > 1) the
``dbgateway serve`` process binds N sockets to the address with
``SO_REUSEPORT`` (``serving.worker_sockets``: a taken port stops it before
anything starts) and forks N workers, each serving one of them; the kernel
spreads new client connections over the workers. Each socket is held by its
worker alone (the parent closes its copy after the fork, a worker the copies of
later workers' sockets it inherited), so a worker that dies or drains takes its
socket out of the kernel's rotation instead of leaving connections queued where
nobody accepts them. Each builds its own app (pools, log buffer, metrics). The
registry file is already safe for several processes (see
``gateway.registry.store``).

The parent only supervises. SIGTERM, SIGINT or SIGHUP to it stops every worker
gracefully (a repeat is logged and ignored); it exits 0 once they have, or 1
when it had to kill one still running ``KILL_MARGIN_SECONDS`` past
``shutdown_timeout`` (or one failed to stop cleanly). A worker that dies while serving is replaced; one that dies within
``STARTUP_GRACE_SECONDS`` of its start stops the whole gateway with exit status
1, since a replacement would fail the same way. Workers run in their own
process group, so a terminal's Ctrl-C reaches the parent only, which then
stops them once. On Linux a worker also gets SIGTERM when the parent dies, even
by SIGKILL (``prctl(PR_SET_PDEATHSIG)``), so no orphan keeps serving the port.
Workers read each other's log buffers through sockets in a runtime folder the
parent makes and removes (``gateway.observability.log_sharing``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web

from gateway.observability.log_sharing import share_logs
from gateway.observability.log_stream import flush_held_lines
from gateway.process.serving import STOP_SIGNALS, StartupError, listening_sockets, serve
from gateway.settings.config import GatewayConfig
from gateway.web.getdata_forward import http_socket_path, serve_forwarded
from gateway.web.keys import LOG_RING

STARTUP_GRACE_SECONDS = 2.0
"""A worker that exits sooner than this after its start is taken to have failed to start."""

KILL_MARGIN_SECONDS = 2.0
"""How long past ``shutdown_timeout`` the parent waits for stopping workers before it kills them."""

_STOP_SIGNALS = set(STOP_SIGNALS)
# Exit codes of a worker that stopped as told: served and exited 0, or was still starting (signals at their default).
_CLEAN_STOPS = {0, *(-signum for signum in STOP_SIGNALS)}
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class WorkerSupervisor:
    """The parent process of ``workers`` serving processes: starts, replaces and stops them."""

    def __init__(
        self,
        config: GatewayConfig,
        build_app: Callable[[GatewayConfig], web.Application],
        logger: structlog.typing.FilteringBoundLogger,
        bound_sockets: list[list[socket.socket]],
    ) -> None:
        """``bound_sockets``: one list of bound sockets (``listening_sockets``) for each first worker.

        Makes the runtime folder for sharing logs; ``StartupError`` when it cannot.
        """
        try:
            self._runtime_folder = Path(tempfile.mkdtemp(prefix="dbgateway-"))
        except OSError as error:
            raise StartupError(
                f"cannot make a runtime folder for the workers in {tempfile.gettempdir()} ({error.strerror});"
                " set TMPDIR to a folder this user can write"
            ) from None
        self._config = config
        self._build_app = build_app
        self._logger = logger
        self._bound_sockets = bound_sockets
        self._started_at: dict[int, float] = {}
        self._stopping = False
        self._status = 0

    def run(self) -> int:
        """Serve with ``config.workers`` processes until told to stop; the exit status for ``dbgateway``."""
        try:
            return self._supervise()
        finally:
            shutil.rmtree(self._runtime_folder, ignore_errors=True)

    def _supervise(self) -> int:
        for signum in _STOP_SIGNALS:
            signal.signal(signum, self._stop_requested)
        for sockets in self._bound_sockets:
            self._start_worker(sockets)
        self._bound_sockets = []
        self._logger.info("workers_started", workers=sorted(self._started_at))
        while self._started_at:
            try:
                pid, wait_status = os.wait()
            except ChildProcessError:
                break
            started = self._started_at.pop(pid, None)
            if started is None:
                continue
            with contextlib.suppress(FileNotFoundError):  # a killed worker leaves its log socket behind
                (self._runtime_folder / f"{pid}.sock").unlink()
            with contextlib.suppress(FileNotFoundError):
                http_socket_path(self._runtime_folder, pid).unlink()
            code = os.waitstatus_to_exitcode(wait_status)
            if self._stopping:
                if code not in _CLEAN_STOPS:
                    self._status = 1
                continue
            if time.monotonic() - started < STARTUP_GRACE_SECONDS:
                self._logger.error("worker_failed_to_start", worker_pid=pid, exit_code=code)
                self._status = 1
                self._stop_workers()
            else:
                self._logger.error("worker_exited", worker_pid=pid, exit_code=code, action="replaced")
                self._replace_worker()
        self._logger.info("workers_stopped", exit_code=self._status)
        return self._status

    def _replace_worker(self) -> None:
        try:
            sockets = listening_sockets(self._config, reuse_port=True)
        except StartupError as error:
            self._logger.error("worker_not_replaced", reason=str(error))
            self._status = 1
            self._stop_workers()
            return
        self._start_worker(sockets)

    def _start_worker(self, sockets: list[socket.socket]) -> None:
        # Blocked across the fork, so the child never runs the parent's handlers (which signal the workers).
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            self._run_worker(parent, sockets)  # never returns
        for bound in sockets:
            bound.close()  # the worker holds them now; the parent must never accept a connection
        self._started_at[pid] = time.monotonic()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)

    def _run_worker(self, parent: int, sockets: list[socket.socket]) -> None:
        code = 1
        try:
            os.setpgid(0, 0)
            # Only its own listening sockets: a worker holding a sibling's would keep it listening after that
            # sibling died or began to drain, and the kernel would go on queuing connections nobody accepts.
            for others in self._bound_sockets:
                if others is not sockets:
                    for bound in others:
                        bound.close()
            for signum in _STOP_SIGNALS:
                signal.signal(signum, signal.SIG_DFL)
            _stop_when_parent_dies(parent)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
            app = self._build_app(self._config)
            share_logs(app, app[LOG_RING], self._runtime_folder)
            # Siblings forward the continuations of results this worker holds to its private socket.
            private = serve_forwarded(app, self._runtime_folder)
            code = serve(app, self._config, [*sockets, private])
        except BaseException as error:  # noqa: BLE001 - a worker must never fall back into the parent's loop
            print(f"dbgateway worker {os.getpid()}: {error!r}", file=sys.stderr)
        finally:
            flush_held_lines()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def _stop_requested(self, signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if self._stopping:
            self._logger.info("stop_signal_ignored", signal=name, reason="already stopping")
            return
        self._logger.info("workers_stopping", signal=name)
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
        signal.setitimer(signal.ITIMER_REAL, self._config.shutdown_timeout + KILL_MARGIN_SECONDS)

    def _kill_stragglers(self, signum: int, frame: Any) -> None:
        waited = self._config.shutdown_timeout + KILL_MARGIN_SECONDS
        for pid in list(self._started_at):
            self._logger.error("worker_killed", worker_pid=pid, reason=f"still running {waited:g} s after SIGTERM")
            self._status = 1
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _stop_when_parent_dies(parent: int) -> None:
    """Have the kernel send this process SIGTERM when its parent ends, however it ends (Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        # The parent died between fork and prctl: the signal above will never come.
        os.kill(os.getpid(), signal.SIGTERM)
