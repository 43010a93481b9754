"""The app factory: ``create_app(config)`` wires registry, drivers, pools, logs, routes and middlewares."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TextIO

from aiohttp import web

from gateway.admin_token import resolve_admin_token
from gateway.config import GatewayConfig
from gateway.driver_loader import DriverCatalog
from gateway.driver_protocol import PoolLimits
from gateway.handlers import data, database_lifecycle, databases, grants, health, logs, openapi, tables, tokens
from gateway.keys import (
    ADMIN_TOKEN,
    CONFIG,
    DRIVERS,
    LOG_RING,
    LOGGER,
    METRICS,
    POOLS,
    REDACTOR,
    REGISTRY,
    TOKEN_QUERIES,
)
from gateway.logbook import LogLevel, LogRing, SecretRedactor, make_logger
from gateway.metrics import GatewayMetrics
from gateway.middlewares import access_log_middleware, error_middleware
from gateway.pools import DatabasePools
from gateway.registry import RegistryStore
from gateway.token_queries import TokenQueryLimiter

# (method, path, handler); every path is also served with a trailing slash.
ROUTES: list[tuple[str, str, Any]] = [
    ("PUT", "/Database", databases.add_database),
    ("GET", "/Database", databases.get_database),
    ("GET", "/Database/list", databases.list_databases_or_tables),
    ("GET", "/Database/List", databases.list_databases_or_tables),
    ("POST", "/Table", tables.change_local_table_name),
    ("GET", "/Table", tables.get_table_data),
    ("GET", "/Table/list", tables.list_tables),
    ("GET", "/Table/List", tables.list_tables),
    ("POST", "/GrantTableAccess", grants.grant_table_access),
    ("DELETE", "/GrantTableAccess", grants.revoke_table_access),
    ("GET", "/GrantTableAccess", grants.list_grants),
    ("PUT", "/UserToken", tokens.mint_user_token),
    ("DELETE", "/Database", database_lifecycle.unregister_database),
    ("POST", "/Database", database_lifecycle.refresh_database),
    ("PATCH", "/Database", database_lifecycle.update_database),
    ("GET", "/Logs", logs.read_logs),
    ("GET", "/GetData", data.get_data),
    ("POST", "/GetData", data.get_data),
    ("GET", "/openapi.json", openapi.openapi_document),
    ("GET", "/healthz", health.healthz),
    ("GET", "/readyz", health.readyz),
    ("GET", "/metrics", health.metrics),
]


def setup_routes(app: web.Application) -> None:
    for method, path, handler in ROUTES:
        app.router.add_route(method, path, handler)
        app.router.add_route(method, path + "/", handler)


def setup_middlewares(app: web.Application) -> None:
    # The access log is outermost so it records the status the error middleware chose.
    app.middlewares.extend([access_log_middleware, error_middleware])


def server_options(config: GatewayConfig) -> dict[str, Any]:
    """Options for aiohttp's request handler: room for GetData queries sent in the URL."""
    # URL-encoding can triple a query's size; the 100 KiB query limit is then checked with a JSON error.
    return {"max_line_size": 3 * config.max_query_bytes + 8190, "max_field_size": 16 * 1024}


def create_app(config: GatewayConfig, *, log_stream: TextIO | None = None) -> web.Application:
    """Build the application; raises ``RegistryLoadError`` or ``ConfigError`` before serving anything."""
    ring = LogRing(config.log_buffer_size)
    redactor = SecretRedactor()
    logger = make_logger(ring, redactor, level=LogLevel.parse(config.log_level), stream=log_stream)
    redactor.add(config.secret_key)
    store = RegistryStore(config.registry_path, config.secret_key)
    state = store.open()
    if not store.encrypts_passwords:
        logger.warning(
            "passwords_stored_in_clear",
            path=str(config.registry_path.resolve()),
            hint="the registry file (mode 0600) holds database passwords in clear; set secret_key to encrypt them",
        )
    admin_token = resolve_admin_token(config, logger)
    redactor.add(admin_token)
    for record in state.databases.values():
        redactor.add(record.password)
    drivers = DriverCatalog.from_entry_points(config.drivers, logger)
    limits = PoolLimits(
        min_size=config.pool_min_size,
        max_size=config.pool_max_size,
        acquire_timeout=config.acquire_timeout,
        statement_timeout=config.statement_timeout,
        row_limit=config.row_limit,
        batch_size=config.fetch_batch_size,
    )

    app = web.Application(client_max_size=config.max_body_bytes)
    app[CONFIG] = config
    app[ADMIN_TOKEN] = admin_token
    app[REGISTRY] = store
    app[DRIVERS] = drivers
    app[POOLS] = DatabasePools(drivers, limits, logger)
    app[TOKEN_QUERIES] = TokenQueryLimiter(config.queries_per_token, config.acquire_timeout)
    app[METRICS] = GatewayMetrics(app[POOLS].stats)
    app[LOGGER] = logger
    app[LOG_RING] = ring
    app[REDACTOR] = redactor
    setup_routes(app)
    setup_middlewares(app)
    app.cleanup_ctx.append(_database_pools)
    logger.info(
        "gateway_created",
        registry=str(config.registry_path),
        databases=len(state.databases),
        tables=len(state.tables),
        drivers=drivers.names,
    )
    return app


async def _database_pools(app: web.Application) -> AsyncIterator[None]:
    yield
    await app[POOLS].close_all()
    app[LOGGER].info("database_pools_closed")
