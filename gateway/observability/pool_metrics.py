"""The pools' metrics, read from the drivers' pools when Prometheus scrapes (part of ``gateway.observability.metrics``).

Pool gauges (connections in use and idle, the maximum, runaway backends) and
the acquire-wait histograms are not updated by requests: a collector asks every
open pool for its ``PoolStats`` at scrape time, so an unregistered database
disappears from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from gateway.contract.driver_protocol import ACQUIRE_WAIT_BUCKETS, PoolStats


class PoolCollector(Collector):
    """Pool gauges and acquire-wait histograms, read from the pools when Prometheus scrapes."""

    def __init__(self, pool_stats: Callable[[], Mapping[str, PoolStats]]) -> None:
        self._pool_stats = pool_stats

    def collect(self) -> Iterator[Metric]:
        connections = GaugeMetricFamily(
            "dbgateway_pool_connections",
            "Connections of each database's pool, by state (in_use, idle).",
            labels=["database", "state"],
        )
        max_connections = GaugeMetricFamily(
            "dbgateway_pool_max_connections",
            "Connections each database's pool opens at most.",
            labels=["database"],
        )
        runaways = GaugeMetricFamily(
            "dbgateway_runaway_backends",
            "Backends of each database still running after the gateway discarded their connection"
            " (the statement ignored the cancel); each counts against the pool's maximum.",
            labels=["database"],
        )
        waits = HistogramMetricFamily(
            "dbgateway_pool_acquire_wait_seconds",
            "Time spent waiting to take a connection from a database's pool (every attempt, also failed ones).",
            labels=["database"],
        )
        bounds = [floatToGoString(bound) for bound in ACQUIRE_WAIT_BUCKETS]
        for database, stats in sorted(self._pool_stats().items()):
            connections.add_metric([database, "in_use"], stats.in_use)
            connections.add_metric([database, "idle"], stats.idle)
            max_connections.add_metric([database], stats.max_size)
            runaways.add_metric([database], stats.runaway)
            tally = stats.acquire_waits
            buckets = [*zip(bounds, tally.bucket_counts), ("+Inf", tally.count)]
            waits.add_metric([database], buckets, tally.sum_seconds)
        yield connections
        yield max_connections
        yield runaways
        yield waits
