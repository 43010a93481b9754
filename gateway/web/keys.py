"""Typed keys for everything the app object holds; the one place to see the app's state."""

from __future__ import annotations

from aiohttp import web

from gateway.databases.continuations import Continuations
from gateway.databases.driver_loader import DriverCatalog
from gateway.databases.pools import DatabasePools
from gateway.databases.token_queries import TokenQueryLimiter
from gateway.observability.audit import AUDITOR as AUDITOR  # defined beside Auditor: GetData's decorator reads it
from gateway.observability.log_ring import LogRing
from gateway.observability.log_sharing import LOG_SIBLINGS as LOG_SIBLINGS  # defined beside LogSiblings
from gateway.observability.logbook import LOGGER as LOGGER  # defined beside Loggers: the library log bridge reads it
from gateway.observability.logbook import FixedEventLogger, SecretRedactor
from gateway.observability.metrics import METRICS as METRICS  # defined beside GatewayMetrics
from gateway.observability.observation import REQUEST_CONTEXT as REQUEST_CONTEXT  # beside RequestContext
from gateway.registry import Registry
from gateway.request.request_tasks import REQUEST_TASKS as REQUEST_TASKS  # defined beside its middleware
from gateway.settings.config import GatewayConfig

CONFIG = web.AppKey("config", GatewayConfig)
ADMIN_TOKEN = web.AppKey("admin_token", str)
REGISTRY = web.AppKey("registry", Registry)
DRIVERS = web.AppKey("drivers", DriverCatalog)
POOLS = web.AppKey("pools", DatabasePools)
REQUEST_LOG = web.AppKey("request_log", FixedEventLogger)
"""The fast path of ``LOGGER`` for the access line every request writes."""
LOG_RING = web.AppKey("log_ring", LogRing)
REDACTOR = web.AppKey("redactor", SecretRedactor)
TOKEN_QUERIES = web.AppKey("token_queries", TokenQueryLimiter)
CONTINUATIONS = web.AppKey("continuations", Continuations)
"""Results held past row_limit for their next pages (``gateway.databases.continuations``)."""
AUDITED_ROUTES = web.AppKey("audited_routes", frozenset)
"""The route templates whose requests end in a GetData audit entry (``Operation.audited``)."""
# AUDITOR, LOG_SIBLINGS, LOGGER, METRICS, REQUEST_CONTEXT and REQUEST_TASKS are imported above, each from beside its class.
