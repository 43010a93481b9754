"""Prometheus metrics of one gateway app, served at ``GET /metrics``.

Each app owns a ``CollectorRegistry`` of its own (tests build many apps in one
process, and two gateways must never add to each other's counters). Labels are
bounded: ``route`` is the route's path template (never the raw path; unknown
paths are ``unmatched``), ``method`` one of the HTTP methods the gateway knows,
``database`` a registered local database name, ``outcome`` and ``reason`` closed
sets. Pool gauges and acquire waits are read from the drivers' pools at scrape
time, so an unregistered database disappears from them.

Every metric and label is listed in ``docs/api.md`` ("Health and metrics").
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

from gateway.contract.driver_protocol import PoolStats
from gateway.errors import QueryRejected, RefusalReason
from gateway.observability.observation import Observation
from gateway.observability.pool_metrics import PoolCollector

EXPOSITION_CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The content type of ``GET /metrics`` (Prometheus text format)."""

UNMATCHED_ROUTE = "unmatched"
"""The ``route`` label of a request no route served (404, 405)."""

OTHER_METHOD = "other"
"""The ``method`` label of a request with a method outside ``KNOWN_METHODS``."""

KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods kept as they are in the ``method`` label; a client may send any token there."""

LOOP_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""Upper bounds of ``dbgateway_event_loop_lag_seconds``'s buckets (seconds); 20 ms is issue 10's bound."""

_REFUSAL_REASONS = frozenset(reason.value for reason in RefusalReason)
"""The refusal reasons every gateway counts apart; the installed drivers add theirs (``GatewayMetrics``)."""


class QueryOutcome(enum.StrEnum):
    """How a GetData query on a registered database ended (the ``outcome`` label): the ``query_outcome`` of the
    error's class (``gateway.errors``), ``ok`` without one."""

    OK = "ok"
    """The answer was sent in full."""
    REFUSED = "refused"
    """The SQL check refused it (400 query_rejected); the reason is counted apart."""
    FAILED = "failed"
    """The database refused it (400 query_failed, 422 result_too_large), the answer could not be sent as asked
    (422 for a CSV past the row limit, 426 upgrade_required), or the gateway failed unexpectedly."""
    TIMEOUT = "timeout"
    """Past the statement time limit (504 query_timeout)."""
    UNAVAILABLE = "unavailable"
    """No connection in time, or the connection broke (503 database_unavailable)."""
    DENIED = "denied"
    """The token has no table granted in that database (403 access_denied)."""
    LIMITED = "limited"
    """The token ran its limit of queries on that database at once (429 too_many_queries)."""


def refusal_reason(error: QueryRejected, known: frozenset[str] = _REFUSAL_REASONS) -> str:
    """The error's reason slug if ``known`` (a ``RefusalReason`` or a driver's declared one), else ``other``.

    Only declared slugs become labels: a label per made-up reason would let a driver grow the metric without end.
    """
    reason = getattr(error, "reason", RefusalReason.OTHER)
    return str(reason) if reason in known else RefusalReason.OTHER.value


def route_label(request: web.Request) -> str:
    """The path template of the route that served ``request``, without a trailing slash."""
    resource = request.match_info.route.resource
    if resource is None:  # the router's own 404 / 405
        return UNMATCHED_ROUTE
    return resource.canonical.rstrip("/") or "/"


def method_label(method: str) -> str:
    return method if method in KNOWN_METHODS else OTHER_METHOD


class _LabelledChildren:
    """A labelled metric's children by label values, found by one dictionary look-up per request.

    prometheus-client's ``labels()`` validates, builds a key and takes a lock on
    every call: a few microseconds, five times per GetData. Label values here come
    from closed sets (routes, methods, statuses, outcomes) or registered names.
    """

    def __init__(self, metric: Any) -> None:
        self._metric = metric
        self._known: dict[tuple[str, ...], Any] = {}

    def __call__(self, *values: str) -> Any:
        child = self._known.get(values)
        if child is None:
            child = self._known[values] = self._metric.labels(*values)
        return child


class GatewayMetrics:
    """The metric objects of one app and the registry that exposes them."""

    def __init__(
        self,
        pool_stats: Callable[[], Mapping[str, PoolStats]],
        held_results: Callable[[], int] = lambda: 0,
        driver_refusal_reasons: Iterable[str] = (),
    ) -> None:
        self._refusal_reasons = _REFUSAL_REASONS | frozenset(driver_refusal_reasons)
        self.registry = CollectorRegistry()
        Gauge(
            "dbgateway_continuations_open",
            "GetData results held open past row_limit for their next pages (continuation tokens live).",
            registry=self.registry,
        ).set_function(held_results)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        self.http_requests = Counter(
            "dbgateway_http_requests",
            "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.http_request_duration = Histogram(
            "dbgateway_http_request_duration_seconds",
            "Time from receiving a request to the end of its answer (a streamed GetData answer included).",
            ["route", "method"],
            registry=self.registry,
        )
        self.getdata_queries = Counter(
            "dbgateway_getdata_queries",
            "GetData queries on a registered database, by outcome"
            " (ok, refused, failed, timeout, unavailable, denied, limited).",
            ["database", "outcome"],
            registry=self.registry,
        )
        self.getdata_refusals = Counter(
            "dbgateway_getdata_refusals",
            "GetData queries the SQL check refused, by reason.",
            ["database", "reason"],
            registry=self.registry,
        )
        self.getdata_rows = Counter(
            "dbgateway_getdata_rows", "Result rows GetData sent.", ["database"], registry=self.registry
        )
        self.getdata_bytes = Counter(
            "dbgateway_getdata_bytes", "Response body bytes GetData sent.", ["database"], registry=self.registry
        )
        self.event_loop_lag = Histogram(
            "dbgateway_event_loop_lag_seconds",
            "How much later than asked the event loop woke a probe scheduled every 50 ms"
            " (the time other work held it; gateway/observability/loop_lag.py).",
            buckets=LOOP_LAG_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(PoolCollector(pool_stats))
        self._requests_by = _LabelledChildren(self.http_requests)
        self._durations_by = _LabelledChildren(self.http_request_duration)
        self._queries_by = _LabelledChildren(self.getdata_queries)
        self._rows_by = _LabelledChildren(self.getdata_rows)
        self._bytes_by = _LabelledChildren(self.getdata_bytes)

    def observe(self, observation: Observation) -> None:
        """Count one request from its observation, and, for GetData on a registered database, its query."""
        route, method = observation.route, method_label(observation.method)
        self._requests_by(route, method, str(observation.status)).inc()
        self._durations_by(route, method).observe(observation.seconds)
        tally = observation.context.getdata
        database = tally.database if tally is not None else None
        if tally is None or database is None:  # one that never named a registered database is not a query
            return
        self._rows_by(database).inc(tally.rows)
        self._bytes_by(database).inc(tally.bytes)
        if observation.query_outcome is None:  # the connection closed first: nothing to count
            return
        self._queries_by(database, observation.query_outcome).inc()
        if isinstance(observation.error, QueryRejected):
            self.getdata_refusals.labels(database, refusal_reason(observation.error, self._refusal_reasons)).inc()

    def exposition(self) -> bytes:
        """Every metric in the Prometheus text format."""
        return generate_latest(self.registry)


METRICS = web.AppKey("metrics", GatewayMetrics)
"""Where the app keeps its ``GatewayMetrics`` (re-exported by ``gateway.web.keys``)."""
