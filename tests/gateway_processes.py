"""``dbgateway serve`` processes for tests that need several real gateways, and answers checked on the way.

A ``GatewayProcess`` writes its log to a file (a pipe nobody reads would fill
and stop the gateway after a few hundred requests). ``answer`` sends one
request with aiohttp and checks the answer against the OpenAPI document that
gateway serves, as ``make_gateway``'s clients do for in-process gateways.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from openapi_contract import ResponseContract
from support import ADMIN_TOKEN, free_port, gateway_command, process_environment, wait_until_listening


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.extend(int(child) for child in (task / "children").read_text().split())
    return sorted(found)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class GatewayProcess:
    """One ``dbgateway serve`` with its own port and data folder; settings as ``DBGATEWAY_*`` variables.

    The log goes to a file, or with ``log_to_pipe`` to a pipe read when the process stops (for a process
    whose file writes are limited; keep its log under the pipe's 64 KiB).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        preexec_fn: Callable[[], None] | None = None,
        log_to_pipe: bool = False,
        **settings: str,
    ) -> None:
        self.port = free_port()
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = data_dir.parent / f"gateway-{self.port}.log"
        with self.log_path.open("w") as log:
            self.process: subprocess.Popen[str] = subprocess.Popen(
                [gateway_command(), "serve", "--data-dir", str(data_dir), "--port", str(self.port)],
                env=process_environment(DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN, **settings),
                cwd=data_dir.parent,
                stdout=subprocess.PIPE if log_to_pipe else log,
                stderr=subprocess.STDOUT,
                text=True,
                preexec_fn=preexec_fn,
            )

    def wait_until_listening(self) -> None:
        try:
            wait_until_listening(self.process, self.port)
        except AssertionError as error:
            raise AssertionError(f"{error}; log: {self.log()[-2000:]}") from None

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def log(self) -> str:
        """The log so far (for a piped log: what ``stop`` read)."""
        return self.log_path.read_text()

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM and wait (kill after ``timeout``); the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            output, _ = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            output, _ = self.process.communicate()
        if output:
            self.log_path.write_text(output)
        return self.process.returncode


async def answer(
    session: aiohttp.ClientSession,
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """(status, parsed JSON body) of one request, after checking the answer against the OpenAPI document."""
    async with session.request(method, url, headers=headers, params=params) as response:
        body = await response.read()
        async with session.get(response.url.with_path("/openapi.json").with_query(None)) as served:
            contract = ResponseContract(orjson.loads(await served.read()))
        problems = contract.problems(method, response.url.path, response.status, response.content_type, body)
        assert not problems, problems
        return response.status, orjson.loads(body)
