"""Large results: ``psql COPY ... TO STDOUT`` versus one GetData streaming every row, and small queries beside it.

The GetData client is aiohttp reading the chunked body in 1 MiB pieces and
keeping only the last bytes, to check the answer's tail (``row_count``,
``truncated``). It records its own CPU time, so the report shows it was not
the bottleneck. psql writes COPY's text to ``/dev/null``.
"""

from __future__ import annotations

import asyncio
import re
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import attrs

from bench.dataset import LARGE_RESULT_SQL, Server
from bench.gateway_process import LOCAL_DATABASE, GatewayProcess
from bench.small_queries import LoadResult, parse_wrk_output, wrk_command

_TAIL = re.compile(rb'\],"row_count":(\d+),"truncated":(true|false)\}\]$')


@attrs.frozen
class StreamResult:
    """One large result read to its end."""

    client: str
    """``psql_copy`` or ``getdata``."""
    rows: int
    """Rows received."""
    seconds: float
    """Wall-clock seconds from sending the request to the last byte."""
    body_bytes: int
    """Bytes received."""
    client_cpu_seconds: float | None = None
    """CPU the reading client used (GetData only); far below ``seconds`` means it was not the bottleneck."""

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds

    def as_dict(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "rows_per_second": self.rows_per_second}


def time_copy(server: Server, database: str, rows: int) -> StreamResult:
    """``psql -c "COPY (LARGE_RESULT_SQL) TO STDOUT"`` into ``/dev/null``, timed from start to exit."""
    command = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", *server.client_arguments(database),
               "-c", f"COPY ({LARGE_RESULT_SQL}) TO STDOUT"]  # fmt: skip
    with open("/dev/null", "wb") as sink:
        started = time.perf_counter()
        finished = subprocess.run(command, stdout=sink, stderr=subprocess.PIPE, env=server.client_environment())
        seconds = time.perf_counter() - started
    if finished.returncode != 0:
        raise RuntimeError(f"psql COPY failed: {finished.stderr.decode().strip()}")
    return StreamResult(client="psql_copy", rows=rows, seconds=seconds, body_bytes=0)


async def stream_getdata(
    gateway: GatewayProcess, session: aiohttp.ClientSession, received: list[int] | None = None
) -> StreamResult:
    """One GetData of every row, read to the end; raises unless the tail says the whole result came.

    ``received``, if given, has the bytes of every piece appended as they arrive.
    """
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    async with session.get(
        f"{gateway.base_url}/GetData",
        params={"local_database_name": LOCAL_DATABASE, "query": LARGE_RESULT_SQL},
        headers={"user_token": gateway.user_token, "Accept": "application/json"},
    ) as response:
        if response.status != 200:
            raise RuntimeError(f"GetData answered {response.status}: {(await response.text())[:300]}")
        size, tail = 0, b""
        async for piece in response.content.iter_chunked(1 << 20):
            size += len(piece)
            tail = (tail + piece)[-200:]
            if received is not None:
                received.append(len(piece))
    seconds = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    found = _TAIL.search(tail)
    if found is None or found.group(2) != b"false":
        raise RuntimeError(f"GetData's answer ended unexpectedly: ...{tail[-120:]!r}")
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return StreamResult(
        client="getdata", rows=int(found.group(1)), seconds=seconds, body_bytes=size, client_cpu_seconds=cpu
    )


def _session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600), read_bufsize=1 << 20)


async def time_getdata(gateway: GatewayProcess) -> StreamResult:
    async with _session() as session:
        return await stream_getdata(gateway, session)


@attrs.frozen
class MixedLoadResult:
    """Small queries measured while large results streamed back to back."""

    small: LoadResult
    """wrk's figures for the small queries."""
    large_results_completed: int
    """Large GetData answers read to the end during the run."""
    large_mib_per_second: float
    """Body bytes of large answers received per second during the run (one is always streaming)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "small": self.small.as_dict(),
            "large_results_completed": self.large_results_completed,
            "large_mib_per_second": round(self.large_mib_per_second, 1),
        }


async def small_queries_while_streaming(
    gateway: GatewayProcess, wrk_script: Path, concurrency: int, seconds: int
) -> MixedLoadResult:
    """Run wrk for ``seconds`` while one client streams the large result again and again."""
    wrk = await asyncio.create_subprocess_exec(
        *wrk_command(gateway.base_url, wrk_script, concurrency, seconds),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    streamed: list[StreamResult] = []
    received: list[int] = []

    async def stream_until_cancelled() -> None:
        async with _session() as session:
            while True:
                streamed.append(await stream_getdata(gateway, session, received))

    started = time.perf_counter()
    streaming = asyncio.create_task(stream_until_cancelled())
    stdout, stderr = await wrk.communicate()
    elapsed = time.perf_counter() - started
    streaming.cancel()
    try:
        await streaming
    except asyncio.CancelledError:
        pass
    if wrk.returncode != 0:
        raise RuntimeError(f"wrk failed ({wrk.returncode}): {stderr.decode().strip()}")
    return MixedLoadResult(
        small=parse_wrk_output(stdout.decode(), concurrency),
        large_results_completed=len(streamed),
        large_mib_per_second=sum(received) / 2**20 / elapsed,
    )
