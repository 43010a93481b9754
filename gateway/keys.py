"""Typed keys for everything the app object holds; the one place to see the app's state."""

from __future__ import annotations

import structlog
from aiohttp import web

from gateway.config import GatewayConfig
from gateway.driver_loader import DriverCatalog
from gateway.logbook import LogRing, SecretRedactor
from gateway.metrics import METRICS as METRICS  # defined beside GatewayMetrics: its GetData decorator reads it
from gateway.pools import DatabasePools
from gateway.registry import RegistryStore
from gateway.token_queries import TokenQueryLimiter

CONFIG = web.AppKey("config", GatewayConfig)
ADMIN_TOKEN = web.AppKey("admin_token", str)
REGISTRY = web.AppKey("registry", RegistryStore)
DRIVERS = web.AppKey("drivers", DriverCatalog)
POOLS = web.AppKey("pools", DatabasePools)
LOGGER = web.AppKey("logger", structlog.typing.FilteringBoundLogger)
LOG_RING = web.AppKey("log_ring", LogRing)
REDACTOR = web.AppKey("redactor", SecretRedactor)
TOKEN_QUERIES = web.AppKey("token_queries", TokenQueryLimiter)
# METRICS (GatewayMetrics) is imported above from gateway.metrics.
