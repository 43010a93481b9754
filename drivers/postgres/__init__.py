"""The PostgreSQL driver (``base_type = "postgres"``), built on aiopg.

Options (the ``[drivers.postgres]`` table of the configuration file):

``allow_functions``
    names of pg_catalog functions GetData queries may call beyond the built-in allowlist
    (each name the built-in rules refuse is logged at start-up as
    ``allow_functions_overrides_denial``, with the reason it was refused);
``deny_functions``
    names to refuse even though the allowlist has them (deny wins);
``max_built_value_bytes``
    the largest value a query may build from its own constants (``repeat``, ``array_fill``,
    ``lpad``, literals...; default 8 MiB);
``max_expression_milliseconds``
    the most work, in estimated milliseconds, one row's evaluation may take without PostgreSQL
    checking for interrupts (default 1000);
``max_expression_memory_bytes``
    the most memory the values of one row's evaluation may take (default 256 MiB);
``assumed_data_value_bytes``
    how large a stored value (or an aggregate of stored values) counts where a query multiplies it
    (default 64 KiB);
``max_data_amplification``
    how many times over one value may multiply the stored data it reads (default 4096).

docs/security.md ("The size and cost model") explains each.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import structlog

from drivers.postgres.guard.rules.function_policy import denial_reason, normalize_configured_names
from drivers.postgres.guard.policy import GuardLimits
from drivers.postgres.pool import GuardOptions, PostgresPool
from drivers.postgres.results.query_errors import CanceledStatementLogFilter
from drivers.postgres.grant_notes import children_not_granted
from drivers.postgres.guard.refusal_reasons import PostgresRefusal
from gateway.contract.driver_protocol import (
    CatalogTable,
    ConnectionData,
    ConnectionField,
    FieldKind,
    GrantNote,
    PoolLimits,
    TableRef,
)

__all__ = ["CONNECTION_FIELDS", "OPTION_NAMES", "PostgresDriver", "PostgresPool"]

CONNECTION_FIELDS: tuple[ConnectionField, ...] = (
    ConnectionField("ip", FieldKind.HOST, description="Host name or address of the database server, without port"),
    ConnectionField("port", FieldKind.PORT, description="TCP port of the database server"),
    ConnectionField("database", FieldKind.TEXT, description="The database's name on its server"),
    ConnectionField("username", FieldKind.TEXT, description="The account the gateway reads through"),
    ConnectionField(
        "password", FieldKind.TEXT, required=False, secret=True, description="That account's password; never answered"
    ),
)
"""What AddDatabase takes for a PostgreSQL database (the contract's ip, port, database, username, password)."""

_LIMITS = {
    # option: (smallest, largest)
    "max_built_value_bytes": (1024, 1 << 30),
    "max_expression_milliseconds": (1, 600_000),
    "max_expression_memory_bytes": (1024 * 1024, 1 << 34),
    "assumed_data_value_bytes": (1, 1 << 30),
    "max_data_amplification": (1, 1 << 30),
}
OPTION_NAMES = frozenset({"allow_functions", "deny_functions", *_LIMITS})
"""The options of ``[drivers.postgres]``."""
_REPLACED = {"max_bounded_literal_bytes": "the guard now budgets work instead (max_expression_milliseconds, "
                                          "max_built_value_bytes; docs/security.md)"}


class PostgresDriver:
    """Opens ``PostgresPool`` s; one instance serves every registered PostgreSQL database."""

    base_type = "postgres"
    connection_fields: tuple[ConnectionField, ...] = CONNECTION_FIELDS
    refusal_reasons: tuple[str, ...] = tuple(PostgresRefusal)
    """The guard's own refusal reasons (type, operator, collation): counted apart in the refusal metric."""
    """ip, port, database, username (required) and password (optional: trust or peer authentication)."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        options = dict(options or {})
        for name, replacement in _REPLACED.items():
            if name in options:
                raise ValueError(f"[drivers.postgres] {name} is no longer a setting: {replacement}; remove it")
        unknown = set(options) - OPTION_NAMES
        if unknown:
            raise ValueError(f"unknown [drivers.postgres] option(s): {', '.join(sorted(unknown))}")
        self.guard_options = GuardOptions(
            allow=_names(options, "allow_functions"),
            deny=_names(options, "deny_functions"),
            limits=_limits(options),
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

    def grant_notes(
        self, catalog: Sequence[CatalogTable], table: TableRef, granted: frozenset[TableRef]
    ) -> list[GrantNote]:
        """Inheritance children of ``table`` outside ``granted``: GetData never returns their rows through it."""
        return children_not_granted(catalog, table, granted)

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


def _limits(options: Mapping[str, Any]) -> GuardLimits:
    values = {}
    for name, (smallest, largest) in _LIMITS.items():
        if name not in options:
            continue
        value = options[name]
        if isinstance(value, bool) or not isinstance(value, int) or not smallest <= value <= largest:
            raise ValueError(f"{name} must be a whole number from {smallest} to {largest}")
        values[name] = value
    return GuardLimits(**values)
