"""The app factory: ``create_app(config)`` wires registry, drivers, pools, logs, operations and middlewares."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any, TextIO

from aiohttp import web

from gateway.contract.driver_protocol import PoolLimits
from gateway.databases.continuations import Continuations
from gateway.databases.driver_loader import DriverCatalog
from gateway.databases.pools import DatabasePools
from gateway.databases.token_queries import TokenQueryLimiter
from gateway.observability.audit import AUDITOR, Auditor
from gateway.observability.audit_file import AuditFile
from gateway.observability.library_logs import library_logs
from gateway.observability.log_ring import LogLevel, LogRing
from gateway.observability.logbook import SecretRedactor, make_loggers, wants_console
from gateway.observability.loop_lag import measure_loop_lag
from gateway.observability.metrics import GatewayMetrics
from gateway.registry import Registry, RegistryState, open_registry
from gateway.request.request_tasks import REQUEST_TASKS, RequestTasks
from gateway.settings.admin_token import resolve_admin_token
from gateway.settings.config import GatewayConfig
from gateway.web.console.routes import add_console_routes
from gateway.web.keys import (
    ADMIN_TOKEN,
    CONFIG,
    CONTINUATIONS,
    DRIVERS,
    LOG_RING,
    LOGGER,
    METRICS,
    POOLS,
    REDACTOR,
    REGISTRY,
    REQUEST_LOG,
    TOKEN_QUERIES,
)
from gateway.web.middlewares import request_middleware, send_request_id
from gateway.web.openapi_document import OPENAPI_DOCUMENT, ServedDocument
from gateway.web.operations import add_routes, handler_operations
from gateway.web.parameters import DocumentContext
from gateway.web.protocol_errors import install as install_json_protocol_errors


def setup_middlewares(app: web.Application) -> None:
    # One middleware: the request's context, task, error answer, written answer and observation (middlewares.py).
    app.middlewares.append(request_middleware)
    app.on_response_prepare.append(send_request_id)


def server_options(config: GatewayConfig) -> dict[str, Any]:
    """Options for aiohttp's request handler: room for GetData queries sent in the URL."""
    # URL-encoding can triple a query's size; the 100 KiB query limit is then checked with a JSON error.
    return {"max_line_size": 3 * config.max_query_bytes + 8190, "max_field_size": 16 * 1024}


def instance_name(config: GatewayConfig) -> str:
    """The ``instance`` every log entry carries: the setting, else the host name."""
    return config.instance if config.instance is not None else socket.gethostname()


def create_app(config: GatewayConfig, *, log_stream: TextIO | None = None) -> web.Application:
    """Build the application; raises ``RegistryLoadError``, ``RegistryUnreachable`` or ``ConfigError`` first."""
    install_json_protocol_errors()  # what aiohttp cannot parse is answered in JSON too
    # Opened first: a path that cannot be written stops start-up before anything is logged.
    audit_file = AuditFile(config.audit_file, config.audit_file_max_bytes) if config.audit_file is not None else None
    ring = LogRing(config.log_buffer_size, config.log_buffer_bytes)
    redactor = SecretRedactor()
    console = wants_console(config.log_format, log_stream)
    loggers = make_loggers(
        ring,
        redactor,
        level=LogLevel.parse(config.log_level),
        stream=log_stream,
        instance=instance_name(config),
        console=console,
    )
    logger = loggers.structured
    # First: options a driver refuses stop start-up (ConfigError) before a registry or an admin token is made.
    drivers = DriverCatalog.from_entry_points(config.drivers, logger)
    redactor.add(config.secret_key)
    store, state = _opened_registry(config, redactor, logger)
    admin_token = resolve_admin_token(config, logger)
    redactor.add(admin_token)
    auditor = _auditor(config, ring, redactor, store, admin_token, log_stream, audit_file, console)

    app = web.Application(client_max_size=config.max_body_bytes)
    app[CONFIG] = config
    app[ADMIN_TOKEN] = admin_token
    app[REGISTRY] = store
    app[DRIVERS] = drivers
    app[POOLS] = DatabasePools(drivers, _pool_limits(config), logger)
    app[TOKEN_QUERIES] = TokenQueryLimiter(config.queries_per_token, config.acquire_timeout)
    app[CONTINUATIONS] = Continuations(
        app[TOKEN_QUERIES],
        limit=config.continuation_limit,
        per_database=max(1, config.pool_max_size // 2),
        expiry_seconds=config.continuation_expiry_seconds,
        logger=logger,
    )
    app[METRICS] = GatewayMetrics(app[POOLS].stats, lambda: app[CONTINUATIONS].count, drivers.refusal_reasons)
    app[LOGGER] = logger
    app[REQUEST_LOG] = loggers.fixed
    app[LOG_RING] = ring
    app[REDACTOR] = redactor
    app[REQUEST_TASKS] = RequestTasks()
    app[AUDITOR] = auditor
    # Every operation is declared beside its handler; the document is built from the same declarations.
    operations = handler_operations()
    add_routes(app, operations, config)
    add_console_routes(app)  # a page for people, not an operation: not in the document (docs/console.md)
    app[OPENAPI_DOCUMENT] = ServedDocument.of(operations, DocumentContext(config, drivers))
    setup_middlewares(app)
    _setup_cleanup(app, audit_file)
    logger.info(
        "gateway_created",
        registry=config.registry_location.display,
        databases=len(state.databases),
        tables=len(state.tables),
        drivers=drivers.names,
    )
    return app


def _opened_registry(
    config: GatewayConfig, redactor: SecretRedactor, logger: Any
) -> tuple[Registry, RegistryState]:
    """The registry the settings name, opened, its passwords (now and as they come) handed to the redactor."""
    location = config.registry_location
    redactor.add(location.password)
    store = open_registry(location, config.secret_key, max_staleness=config.registry_max_staleness)

    def redact_passwords(state: RegistryState) -> None:
        # Databases registered through another gateway arrive here, not through a request.
        for record in state.databases.values():
            for secret in record.connection.secrets.values():
                redactor.add(secret)

    store.watch(redact_passwords)
    state = store.open()
    leftovers = getattr(store, "leftovers_removed", None)  # a file registry: what writers killed mid-write left
    if leftovers:
        logger.info("registry_leftovers_removed", registry=location.display, files=leftovers)
    if not store.encrypts_passwords:  # only a file: a registry in PostgreSQL requires secret_key
        logger.warning(
            "passwords_stored_in_clear",
            path=str(config.registry_path.resolve()),
            hint="the registry file (mode 0600) holds database passwords in clear; set secret_key to encrypt them",
        )
    return store, state


def _pool_limits(config: GatewayConfig) -> PoolLimits:
    """What every driver's pool is told of the settings."""
    return PoolLimits(
        min_size=config.pool_min_size,
        max_size=config.pool_max_size,
        acquire_timeout=config.acquire_timeout,
        statement_timeout=config.statement_timeout,
        row_limit=config.row_limit,
        batch_size=config.fetch_batch_size,
        max_row_bytes=config.max_row_bytes,
    )


def _setup_cleanup(app: web.Application, audit_file: AuditFile | None) -> None:
    """Resources opened at start and closed at stop, in ``cleanup_ctx`` order (closed in reverse)."""
    app.cleanup_ctx.append(library_logs)
    app.cleanup_ctx.append(measure_loop_lag)
    app.cleanup_ctx.append(_registry_following)
    app.cleanup_ctx.append(_database_pools)
    app.cleanup_ctx.append(_held_results)  # after the pools: cleaned up before them, which wait for connections
    if audit_file is not None:

        async def close_audit_file(_: web.Application) -> None:
            audit_file.close()

        app.on_cleanup.append(close_audit_file)


async def _registry_following(app: web.Application) -> AsyncIterator[None]:
    """Follow registry changes made by other gateways while serving (a PostgreSQL registry's LISTEN)."""
    await app[REGISTRY].start(app[LOGGER])
    yield
    await app[REGISTRY].close()


def _auditor(
    config: GatewayConfig,
    ring: LogRing,
    redactor: SecretRedactor,
    store: Registry,
    admin_token: str,
    log_stream: TextIO | None,
    audit_file: AuditFile | None,
    console: bool,
) -> Auditor:
    """The app's ``Auditor``: its own loggers, at info whatever ``log_level`` says, writing to ``audit_file`` too."""
    loggers = make_loggers(
        ring,
        redactor,
        level=LogLevel.INFO,
        stream=log_stream,
        instance=instance_name(config),
        extra_sink=audit_file,
        console=console,
    )
    return Auditor(loggers, store, admin_token, query_text=config.audit_query_text)


async def _held_results(app: web.Application) -> AsyncIterator[None]:
    """Shutdown closes every result held for a next page (their connections go back before the pools close)."""
    yield
    await app[CONTINUATIONS].close_all()


async def _database_pools(app: web.Application) -> AsyncIterator[None]:
    yield
    await app[POOLS].close_all()
    app[LOGGER].info("database_pools_closed")
