"""The PostgreSQL guard's own refusal reasons, beside the gateway's ``RefusalReason`` (metric labels).

The driver declares them (``PostgresDriver.refusal_reasons``), so the gateway
counts them apart in ``dbgateway_getdata_refusals_total`` instead of as ``other``.
"""

from __future__ import annotations

import enum


class PostgresRefusal(enum.StrEnum):
    """Why the guard refused a query, where the reason is PostgreSQL's own."""

    TYPE = "type"
    """A type outside pg_catalog, or one that looks catalog objects up (reg*)."""
    OPERATOR = "operator"
    """An operator outside pg_catalog."""
    COLLATION = "collation"
    """A collation outside pg_catalog."""
