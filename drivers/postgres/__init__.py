"""The PostgreSQL driver (``base_type = "postgres"``), built on aiopg.

Options (the ``[drivers.postgres]`` table of the configuration file):

``allow_functions``
    names of pg_catalog functions GetData queries may call beyond the built-in allowlist
    (each name the built-in rules refuse is logged at start-up as
    ``allow_functions_overrides_denial``, with the reason it was refused);
``deny_functions``
    names to refuse even though the allowlist has them (deny wins);
``max_bounded_literal_bytes``
    the most bytes of literal text one cost-driving argument of a function PostgreSQL cannot
    interrupt may hold (``LIKE``, ``@>``, ``&&``, ``replace``, ``ltrim``...; default 1024).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import structlog

from drivers.postgres.function_policy import denial_reason, normalize_configured_names
from drivers.postgres.pool import GuardOptions, PostgresPool
from drivers.postgres.query_errors import CanceledStatementLogFilter
from drivers.postgres.query_policy import DEFAULT_MAX_BOUNDED_LITERAL_BYTES
from gateway.connection_fields import DEFAULT_CONNECTION_FIELDS
from gateway.driver_protocol import ConnectionData, ConnectionField, PoolLimits

__all__ = ["PostgresDriver", "PostgresPool"]

_OPTION_NAMES = {"allow_functions", "deny_functions", "max_bounded_literal_bytes"}
_MAX_LITERAL_BOUND = 1024 * 1024


class PostgresDriver:
    """Opens ``PostgresPool`` s; one instance serves every registered PostgreSQL database."""

    base_type = "postgres"
    connection_fields: tuple[ConnectionField, ...] = DEFAULT_CONNECTION_FIELDS
    """ip, port, database, username (required) and password (optional: trust or peer authentication)."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        options = dict(options or {})
        unknown = set(options) - _OPTION_NAMES
        if unknown:
            raise ValueError(f"unknown [drivers.postgres] option(s): {', '.join(sorted(unknown))}")
        self.guard_options = GuardOptions(
            allow=_names(options, "allow_functions"),
            deny=_names(options, "deny_functions"),
            max_bounded_literal_bytes=_literal_bound(options),
        )
        _quiet_cancelled_statements()

    def startup_warnings(self) -> list[tuple[str, dict[str, str]]]:
        """(event, fields) for the gateway to log at start-up: allowed names the denylist refuses.

        Names the catalog rules refuse (volatile, catalog-lookup types) are
        logged when a database's pool first reads its catalog.
        """
        options = self.guard_options
        return [
            ("allow_functions_overrides_denial", {"function": name, "reason": reason})
            for name in sorted(options.allow - options.deny)
            if (reason := denial_reason(name)) is not None
        ]

    def open_pool(
        self, connection: ConnectionData, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger
    ) -> PostgresPool:
        return PostgresPool(connection, limits, logger, self.guard_options)


def _quiet_cancelled_statements() -> None:
    # aiopg hands every server-side cancel (our time limit, a client gone) to asyncio's
    # error log with a traceback; the runner already answers it, so the record is noise.
    asyncio_logger = logging.getLogger("asyncio")
    if not any(isinstance(f, CanceledStatementLogFilter) for f in asyncio_logger.filters):
        asyncio_logger.addFilter(CanceledStatementLogFilter())


def _names(options: Mapping[str, Any], key: str) -> frozenset[str]:
    value = options.get(key, [])
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{key} must be a list of function names")
    return normalize_configured_names((item for item in value if item.strip()), key)


def _literal_bound(options: Mapping[str, Any]) -> int:
    value = options.get("max_bounded_literal_bytes", DEFAULT_MAX_BOUNDED_LITERAL_BYTES)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_LITERAL_BOUND:
        raise ValueError(f"max_bounded_literal_bytes must be a whole number of bytes from 1 to {_MAX_LITERAL_BOUND}")
    return value
