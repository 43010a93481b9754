"""The PostgreSQL driver (``base_type = "postgres"``), built on aiopg.

Options (the ``[drivers.postgres]`` table of the configuration file):

``allow_functions``
    names of pg_catalog functions GetData queries may call beyond the built-in allowlist;
``deny_functions``
    names to refuse even though the allowlist has them (deny wins).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import structlog

from drivers.postgres.function_policy import normalize_configured_names
from drivers.postgres.pool import FunctionOptions, PostgresPool
from drivers.postgres.query_errors import CanceledStatementLogFilter
from gateway.driver_protocol import ConnectionData, PoolLimits

__all__ = ["PostgresDriver", "PostgresPool"]

_OPTION_NAMES = {"allow_functions", "deny_functions"}


class PostgresDriver:
    """Opens ``PostgresPool`` s; one instance serves every registered PostgreSQL database."""

    base_type = "postgres"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        options = dict(options or {})
        unknown = set(options) - _OPTION_NAMES
        if unknown:
            raise ValueError(f"unknown [drivers.postgres] option(s): {', '.join(sorted(unknown))}")
        self.function_options = FunctionOptions(
            allow=_names(options, "allow_functions"), deny=_names(options, "deny_functions")
        )
        _quiet_cancelled_statements()

    def open_pool(
        self, connection: ConnectionData, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger
    ) -> PostgresPool:
        return PostgresPool(connection, limits, logger, self.function_options)


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
