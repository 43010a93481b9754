"""Large query texts: do 100 KiB queries hold up the other requests of a gateway process?

While two clients send ~96 KiB GetData queries back to back (``SELECT
ARRAY[1,1,...]`` and ``... WHERE 1 IN (1,2,...)``, alternately), wrk sends point lookups at
concurrency 16 to the same one-worker gateway. The gateway's own histogram
``dbgateway_event_loop_lag_seconds`` (a probe every 50 ms) is read before and
after: the report gives how many probes the loop woke more than 20 ms late,
and the small queries' latency beside the large texts.
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import attrs
from prometheus_client.parser import text_string_to_metric_families

from bench.gateway_process import LOCAL_DATABASE, GatewayProcess
from bench.small_queries import LoadResult, parse_wrk_output, wrk_command

LARGE_TEXTS = (
    "SELECT ARRAY[" + ",".join(["1"] * 48_000) + "]",
    "SELECT 1 WHERE 1 IN (" + ",".join(str(n) for n in range(1, 17_000)) + ")",
)
"""Two shapes of a query text near max_query_bytes (100 KiB): a long array constructor and a long IN list."""

LAG_BOUND_SECONDS = 0.02
_LAG = "dbgateway_event_loop_lag_seconds"


@attrs.frozen
class LargeTextResult:
    """What the run measured."""

    small: LoadResult
    """wrk's point lookups meanwhile."""
    large_texts_answered: int
    """Large-text queries answered (200) during the run."""
    probes: int
    """Event-loop probes during the run."""
    probes_over_20ms: int
    """Probes the loop woke more than 20 ms late."""
    worst_lag_bucket_seconds: float | None
    """Upper bound of the highest lag bucket any probe of the run fell into."""

    def as_dict(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "small": self.small.as_dict()}


def _lag_buckets(gateway: GatewayProcess) -> dict[float, float]:
    request = urllib.request.Request(f"{gateway.base_url}/metrics", headers={"admin_token": gateway.admin_token})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    buckets: dict[float, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name == _LAG:
            for sample in family.samples:
                if sample.name == _LAG + "_bucket":
                    buckets[float(sample.labels["le"])] = sample.value
    return buckets


async def large_texts_beside_small_queries(
    gateway: GatewayProcess, wrk_script: Path, concurrency: int, seconds: int
) -> LargeTextResult:
    """Run wrk for ``seconds`` while two clients send the large texts again and again."""
    before = _lag_buckets(gateway)
    wrk = await asyncio.create_subprocess_exec(
        *wrk_command(gateway.base_url, wrk_script, concurrency, seconds),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    answered = 0
    deadline = time.monotonic() + seconds

    async def send_large_texts(first: int) -> None:
        nonlocal answered
        async with aiohttp.ClientSession() as session:
            turn = first
            while time.monotonic() < deadline:
                async with session.post(
                    f"{gateway.base_url}/GetData",
                    json={"local_database_name": LOCAL_DATABASE, "query": LARGE_TEXTS[turn % len(LARGE_TEXTS)]},
                    headers={"user_token": gateway.user_token},
                ) as response:
                    await response.read()
                    if response.status != 200:
                        raise RuntimeError(f"a large text answered {response.status}")
                    answered += 1
                turn += 1

    senders = asyncio.gather(send_large_texts(0), send_large_texts(1))
    stdout, stderr = await wrk.communicate()
    await senders
    if wrk.returncode != 0:
        raise RuntimeError(f"wrk failed ({wrk.returncode}): {stderr.decode().strip()}")
    after = _lag_buckets(gateway)
    during = {bound: after[bound] - before.get(bound, 0.0) for bound in after}
    probes = int(during.get(float("inf"), 0))
    within = int(during.get(LAG_BOUND_SECONDS, 0))
    filled = [bound for bound in sorted(during) if during[bound] >= probes and probes > 0]
    return LargeTextResult(
        small=parse_wrk_output(stdout.decode(), concurrency),
        large_texts_answered=answered,
        probes=probes,
        probes_over_20ms=probes - within,
        worst_lag_bucket_seconds=filled[0] if filled else None,
    )
