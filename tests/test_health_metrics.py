"""Health and metrics over real HTTP against a real PostgreSQL: /healthz, /readyz, /metrics.

One scratch database (public.items, 7 rows) serves the module; each test
starts its own gateway, so its metrics start from zero.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families

from gateway.settings.config import load_config
from support import (
    ADMIN_TOKEN,
    admin_headers,
    create_database,
    drop_database,
    error_of,
    GatewayFactory,
    grant,
    register_database,
    server_parameters,
    success_of,
    user_headers,
)

TOKEN = "metrics-reader-token-51c2"
"""Granted public.items of the module's database."""

ITEMS_SQL = "CREATE TABLE public.items AS SELECT g AS id, 'item ' || g AS note FROM generate_series(1, 7) AS g"
ITEM_ROWS = 7

GATEWAY_FAMILIES = {
    "dbgateway_http_requests",
    "dbgateway_http_request_duration_seconds",
    "dbgateway_getdata_queries",
    "dbgateway_getdata_refusals",
    "dbgateway_getdata_rows",
    "dbgateway_getdata_bytes",
    "dbgateway_pool_connections",
    "dbgateway_pool_max_connections",
    "dbgateway_pool_acquire_wait_seconds",
    "dbgateway_runaway_backends",
}
"""Every metric family the gateway exposes, present (perhaps without samples) from the first scrape."""

# Runs far longer than any statement time limit these tests set.
SLOW_QUERY = "select count(*) from public.items, generate_series(1, 1000000000)"


async def open_items(client: TestClient, database: str) -> TestClient:
    """Register ``database`` as "items" and grant TOKEN its table."""
    await register_database(client, "items", database)
    await grant(client, TOKEN, "items_public_items")
    return client


class Samples:
    """One scrape of /metrics: every sample by name and labels."""

    def __init__(self, text: str) -> None:
        self.values: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
        self.families: set[str] = set()
        for family in text_string_to_metric_families(text):
            self.families.add(family.name)
            for sample in family.samples:
                self.values[(sample.name, frozenset(sample.labels.items()))] = sample.value

    def value(self, name: str, **labels: str) -> float:
        """The sample's value; 0 when the series does not exist (yet)."""
        return self.values.get((name, frozenset(labels.items())), 0.0)

    def label_values(self, name: str, label: str) -> set[str]:
        """Every value ``label`` takes in the series of ``name``."""
        return {dict(labels)[label] for sample, labels in self.values if sample == name and label in dict(labels)}


async def scrape(client: TestClient, headers: dict[str, str] | None = None) -> Samples:
    """GET /metrics, with the admin token unless ``headers`` says otherwise."""
    response = await client.get("/metrics", headers=admin_headers() if headers is None else headers)
    text = await response.text()
    assert response.status == 200, text
    assert response.headers["Content-Type"] == CONTENT_TYPE_LATEST
    return Samples(text)


async def get_data(client: TestClient, query: str, token: str = TOKEN) -> Any:
    return await client.get(
        "/GetData", params={"local_database_name": "items", "query": query}, headers=user_headers(token)
    )


class TestHealth:
    async def test_healthz_answers_without_a_token(self, gateway: TestClient) -> None:
        """GET /healthz needs no token and says the process is alive."""
        assert await success_of(await gateway.get("/healthz")) == {"status": "success", "alive": True}
        assert await success_of(await gateway.get("/healthz/")) == {"status": "success", "alive": True}

    async def test_readyz_answers_without_a_token(self, gateway: TestClient) -> None:
        """GET /readyz needs no token and reports the registry loaded, without probing databases."""
        body = await success_of(await gateway.get("/readyz"))
        assert body == {"status": "success", "ready": True, "registry": "loaded"}

    async def test_readyz_with_databases_reports_a_reachable_database(
        self, gateway: TestClient, items_database: str
    ) -> None:
        """With databases=1 each registered database is probed; all reachable is 200, counted, named for the admin."""
        await open_items(gateway, items_database)
        counted = {
            "status": "success",
            "ready": True,
            "registry": "loaded",
            "database_counts": {"reachable": 1, "unreachable": 0},
        }
        assert await success_of(await gateway.get("/readyz", params={"databases": "1"})) == counted
        named = await success_of(await gateway.get("/readyz", params={"databases": "1"}, headers=admin_headers()))
        assert named == {**counted, "databases": {"items": "reachable"}}

    async def test_readyz_with_an_unreachable_database_is_503_without_connection_data(
        self, gateway: TestClient, items_database: str
    ) -> None:
        """A registered database that is gone makes /readyz?databases=1 a 503 naming only local names (to the admin)."""
        await open_items(gateway, items_database)
        doomed = create_database()
        try:
            await register_database(gateway, "doomed", doomed)
        finally:
            drop_database(doomed)
        response = await gateway.get("/readyz", params={"databases": "1"}, headers=admin_headers())
        text = await response.text()
        assert response.status == 503, text
        assert response.content_type == "application/json"
        body = await response.json()
        assert body["status"] == "error" and body["error"] == "database_unavailable" and body["message"]
        assert body["databases"] == {"doomed": "unreachable", "items": "reachable"}
        assert body["database_counts"] == {"reachable": 1, "unreachable": 1}
        assert set(body) == {"status", "error", "message", "database_counts", "databases"}
        server = server_parameters()
        for connection_detail in (server["ip"], server["port"], server["username"], doomed, "does not exist"):
            assert connection_detail not in text
        assert '"readiness_database_unreachable"' in gateway.log_stream.getvalue()  # type: ignore[attr-defined]

    async def test_readyz_refuses_an_unknown_databases_value(self, gateway: TestClient) -> None:
        """databases takes 1 or 0 (true / false); anything else is 400 naming the parameter."""
        response = await gateway.get("/readyz", params={"databases": "maybe"})
        assert response.status == 400
        assert "'databases'" in (await error_of(response))["message"]


class TestRequestMetrics:
    async def test_metrics_is_prometheus_text_without_a_token_when_opened(self, make_gateway: GatewayFactory) -> None:
        """/metrics answers the Prometheus text format to anyone once metrics_require_admin is off."""
        samples = await scrape(await make_gateway(metrics_require_admin=False), headers={})
        assert GATEWAY_FAMILIES <= samples.families, GATEWAY_FAMILIES - samples.families
        assert "process_resident_memory_bytes" in samples.families

    async def test_requests_are_counted_by_route_template_method_and_status(self, gateway: TestClient) -> None:
        """Each answer adds one to its (route, method, status) series; both slash spellings are one route."""
        for path in ("/Database/list", "/Database/list/", "/Database/list"):
            await success_of(await gateway.get(path, headers=admin_headers()))
        response = await gateway.get("/Database/list", headers=admin_headers(admin_token="wrong-token-000000"))
        assert response.status == 403
        samples = await scrape(gateway)
        ok = {"route": "/Database/list", "method": "GET", "status": "200"}
        assert samples.value("dbgateway_http_requests_total", **ok) == 3
        assert samples.value("dbgateway_http_requests_total", **{**ok, "status": "403"}) == 1
        duration = samples.value("dbgateway_http_request_duration_seconds_count", route="/Database/list", method="GET")
        assert duration == 4
        assert samples.value("dbgateway_http_request_duration_seconds_sum", route="/Database/list", method="GET") > 0

    async def test_unknown_paths_and_methods_share_bounded_labels(self, gateway: TestClient) -> None:
        """Requests to /nope/123 and friends all count under route "unmatched"; unknown methods under "other"."""
        for path in ("/nope/123", "/nope/456", "/nope/7/8"):
            assert (await gateway.get(path)).status == 404
        assert (await gateway.request("PROPFIND", "/healthz")).status == 405
        samples = await scrape(gateway)
        assert samples.value("dbgateway_http_requests_total", route="unmatched", method="GET", status="404") == 3
        assert samples.value("dbgateway_http_requests_total", route="unmatched", method="other", status="405") == 1
        routes = samples.label_values("dbgateway_http_requests_total", "route")
        assert not any("nope" in route for route in routes), routes
        assert "PROPFIND" not in samples.label_values("dbgateway_http_requests_total", "method")

    async def test_two_gateways_keep_separate_counts(self, make_gateway: GatewayFactory, tmp_path: Path) -> None:
        """Metrics belong to one app: requests to one gateway never show in another's scrape."""
        first = await make_gateway(tmp_path / "first")
        second = await make_gateway(tmp_path / "second")
        await success_of(await first.get("/healthz"))
        samples = await scrape(second)
        assert samples.value("dbgateway_http_requests_total", route="/healthz", method="GET", status="200") == 0


class TestGetDataMetrics:
    async def test_each_outcome_is_counted_with_refusal_reasons(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """ok, refused (by reason), failed, timeout and denied each count once per query on the database."""
        client = await open_items(await make_gateway(statement_timeout=0.5), items_database)
        assert (await get_data(client, "select id from public.items")).status == 200
        assert (await error_of(await get_data(client, "select id from items")))["error"] == "query_rejected"
        response = await get_data(client, "select 'public.items'::regclass::oid as o from public.items")
        assert (await error_of(response))["error"] == "query_rejected"  # a reason the PostgreSQL driver declares
        response = await get_data(client, "select id from public.other")
        assert (await error_of(response))["error"] == "query_rejected"
        assert (await error_of(await get_data(client, "select nope from public.items")))["error"] == "query_failed"
        assert (await error_of(await get_data(client, SLOW_QUERY)))["error"] == "query_timeout"
        response = await get_data(client, "select id from public.items", token="token-without-grants")
        assert (await error_of(response))["error"] == "access_denied"
        unknown = await client.get(
            "/GetData", params={"local_database_name": "unknown_db", "query": "select 1"}, headers=user_headers(TOKEN)
        )
        assert unknown.status == 403

        samples = await scrape(client)
        counts = {
            outcome: samples.value("dbgateway_getdata_queries_total", database="items", outcome=outcome)
            for outcome in ("ok", "refused", "failed", "timeout", "unavailable", "denied")
        }
        assert counts == {"ok": 1, "refused": 3, "failed": 1, "timeout": 1, "unavailable": 0, "denied": 1}
        assert samples.value("dbgateway_getdata_refusals_total", database="items", reason="not_qualified") == 1
        assert samples.value("dbgateway_getdata_refusals_total", database="items", reason="type") == 1
        assert samples.value("dbgateway_getdata_refusals_total", database="items", reason="not_granted") == 1
        # A name that is not registered must not become a label (clients choose it).
        assert samples.label_values("dbgateway_getdata_queries_total", "database") == {"items"}

    async def test_rows_and_bytes_count_what_was_sent(self, gateway: TestClient, items_database: str) -> None:
        """Rows and body bytes grow by exactly what each answer carried, for one-piece and streamed answers."""
        await open_items(gateway, items_database)
        before = await scrape(gateway)
        small = await get_data(gateway, "select id, note from public.items")
        small_body = await small.read()
        assert small.status == 200 and "Content-Length" in small.headers
        streamed = await get_data(gateway, "select g, repeat('x', 200) as pad from generate_series(1, 3000) as g")
        streamed_body = await streamed.read()
        assert streamed.status == 200 and streamed.headers.get("Transfer-Encoding") == "chunked"
        after = await scrape(gateway)
        rows = after.value("dbgateway_getdata_rows_total", database="items") - before.value(
            "dbgateway_getdata_rows_total", database="items"
        )
        sent = after.value("dbgateway_getdata_bytes_total", database="items") - before.value(
            "dbgateway_getdata_bytes_total", database="items"
        )
        assert rows == ITEM_ROWS + 3000
        assert sent == len(small_body) + len(streamed_body)

    async def test_pool_gauges_and_acquire_waits_for_a_registered_database(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """A registered database shows its idle / in-use connections, pool size and a non-empty wait histogram."""
        client = await open_items(await make_gateway(pool_max_size=3), items_database)
        assert (await get_data(client, "select id from public.items")).status == 200
        samples = await scrape(client)
        assert samples.value("dbgateway_pool_connections", database="items", state="in_use") == 0
        assert samples.value("dbgateway_pool_connections", database="items", state="idle") >= 1
        assert samples.value("dbgateway_pool_max_connections", database="items") == 3
        count = samples.value("dbgateway_pool_acquire_wait_seconds_count", database="items")
        assert count > 0
        assert samples.value("dbgateway_pool_acquire_wait_seconds_bucket", database="items", le="+Inf") == count
        assert samples.value("dbgateway_pool_acquire_wait_seconds_sum", database="items") >= 0

    async def test_a_saturated_pool_shows_in_use_long_waits_and_unavailable(
        self, make_gateway: GatewayFactory, items_database: str
    ) -> None:
        """With the only connection busy, the gauge says in_use 1, and the refused wait is counted as unavailable."""
        # token_query_limit=2: the pool, not the per-token limit, must be what refuses the second query.
        client = await open_items(
            await make_gateway(
                pool_min_size=1, pool_max_size=1, acquire_timeout=0.3, statement_timeout=1.5, token_query_limit=2
            ),
            items_database,
        )
        # The first query also reads the function allowlist through the pool: then in_use 1 below is the slow query.
        assert (await get_data(client, "select id from public.items")).status == 200
        slow = asyncio.ensure_future(get_data(client, SLOW_QUERY))
        try:
            busy = await _wait_for_in_use(client, "items", 1)
            assert busy.value("dbgateway_pool_connections", database="items", state="idle") == 0
            assert (await error_of(await get_data(client, "select id from public.items")))["error"] == (
                "database_unavailable"
            )
        finally:
            assert (await slow).status == 504
        samples = await scrape(client)
        assert samples.value("dbgateway_getdata_queries_total", database="items", outcome="unavailable") == 1
        assert samples.value("dbgateway_getdata_queries_total", database="items", outcome="timeout") == 1
        count = samples.value("dbgateway_pool_acquire_wait_seconds_count", database="items")
        quick = samples.value("dbgateway_pool_acquire_wait_seconds_bucket", database="items", le="0.25")
        assert count - quick >= 1, "the wait that ran into acquire_timeout (0.3 s) lies above the 0.25 s bucket"


async def _wait_for_in_use(client: TestClient, database: str, connections: int) -> Samples:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        samples = await scrape(client)
        if samples.value("dbgateway_pool_connections", database=database, state="in_use") == connections:
            return samples
        await asyncio.sleep(0.02)
    raise AssertionError(f"the pool of {database} never had {connections} connection(s) in use")


class TestEventLoopLag:
    async def test_a_held_event_loop_shows_in_the_lag_histogram(self, gateway: TestClient) -> None:
        """Holding the loop for 150 ms puts one more probe into the (0.1 s, 0.25 s] bucket."""
        name = "dbgateway_event_loop_lag_seconds_bucket"

        async def held() -> float:
            samples = await scrape(gateway)
            return samples.value(name, le="0.25") - samples.value(name, le="0.1")

        before = await held()
        time.sleep(0.15)  # noqa: ASYNC251 - the point: nothing else of the process runs meanwhile
        deadline = time.monotonic() + 5
        while await held() < before + 1:
            assert time.monotonic() < deadline, "the probe did not record the held loop"
            await asyncio.sleep(0.05)


class TestMetricsProtection:
    async def test_metrics_require_admin_refuses_without_the_admin_token(self, gateway: TestClient) -> None:
        """By default (metrics_require_admin on) /metrics is 403 without (or with a wrong) admin token, 200 with it."""
        client = gateway
        missing = await client.get("/metrics")
        assert missing.status == 403 and (await error_of(missing))["error"] == "access_denied"
        wrong = await client.get("/metrics", headers={"admin_token": "not-the-admin-token"})
        assert wrong.status == 403 and (await error_of(wrong))["error"] == "access_denied"
        samples = await scrape(client, headers={"admin_token": ADMIN_TOKEN})
        assert samples.value("dbgateway_http_requests_total", route="/metrics", method="GET", status="403") == 2
        await success_of(await client.get("/healthz"))
        await success_of(await client.get("/readyz"))

    def test_metrics_require_admin_is_a_boolean_setting(self, tmp_path: Path) -> None:
        """The setting defaults to on and reads yes/no words from DBGATEWAY_METRICS_REQUIRE_ADMIN."""
        assert load_config(environ={}).metrics_require_admin is True
        assert load_config(environ={"DBGATEWAY_METRICS_REQUIRE_ADMIN": "yes"}).metrics_require_admin is True
        assert load_config(environ={"DBGATEWAY_METRICS_REQUIRE_ADMIN": "0"}).metrics_require_admin is False
