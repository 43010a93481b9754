"""What the gateway needs from a database backend.

A driver is found by its ``base_type`` (the AddDatabase parameter) through the
``dbgateway.drivers`` entry-point group; see ``gateway.driver_loader`` and
``docs/drivers.md``. The gateway only ever talks to a backend through the two
protocols below, so a new backend never needs an edit in ``gateway/``.

Errors a driver raises are the ones in ``gateway.errors``:
``DatabaseUnavailable`` (cannot connect, no free connection), ``QueryRejected``
(the SQL is not allowed), ``QueryFailed`` (the database refused it) and
``QueryTimeout``. Anything else becomes a 500 and is logged.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

import attrs
import structlog


@attrs.frozen
class ConnectionData:
    """Where a registered database lives and how to log in."""

    host: str
    """Address without the port (the specification's ``ip``)."""
    port: int
    """TCP port, 1-65535."""
    database: str
    """The database's name on its server."""
    username: str
    """The account the gateway reads through; its privileges always apply."""
    password: str = attrs.field(repr=False)
    """That account's password; never logged, never answered."""


@attrs.frozen
class PoolLimits:
    """Operator settings that bound every pool a driver opens."""

    min_size: int
    """Connections kept open once the pool is used."""
    max_size: int
    """Connections at most, per registered database."""
    acquire_timeout: float
    """Seconds a request waits for a free connection before 503."""
    statement_timeout: float
    """Seconds a query may run in all before 504."""
    row_limit: int
    """Rows a GetData answer carries at most; more sets ``truncated``."""
    batch_size: int = 5000
    """Rows fetched from the database per round trip while streaming."""


class TableKind(enum.Enum):
    """The relation kinds AddDatabase registers."""

    TABLE = "table"
    VIEW = "view"
    MATERIALIZED_VIEW = "materialized_view"
    FOREIGN_TABLE = "foreign_table"
    PARTITIONED_TABLE = "partitioned_table"


@attrs.frozen
class CatalogTable:
    """One relation found in a database's catalog."""

    folder: str
    """Schema (the specification's folder), exactly as the database spells it."""
    table: str
    """Relation name inside the folder, exactly as the database spells it."""
    kind: TableKind
    """What sort of relation it is."""


@attrs.frozen
class ColumnInfo:
    """A column as the database describes it."""

    name: str
    """Column name."""
    type_name: str
    """Type name as the database reports it (``timestamp without time zone``, ``text``)."""


TableRef = tuple[str, str]
"""A relation inside one database: ``(folder, table)``."""


@runtime_checkable
class QueryResult(Protocol):
    """An executing query whose rows are streamed in JSON-encoded batches."""

    columns: Sequence[ColumnInfo]
    """Result columns in order, names already made unique (``id``, ``id_2``)."""

    def json_batches(self) -> AsyncIterator[bytes]:
        """Yield rows as JSON objects joined by commas, without enclosing brackets.

        Each yielded chunk holds one or more complete rows. Stops at the row
        limit. Raises the errors listed in the module docstring.
        """
        ...

    @property
    def row_count(self) -> int:
        """Rows yielded so far."""
        ...

    @property
    def truncated(self) -> bool:
        """True once the row limit cut the result; final after iteration ends."""
        ...


@runtime_checkable
class DatabasePool(Protocol):
    """Connections to one registered database."""

    async def check(self) -> None:
        """Connect once and run a trivial statement; raise ``DatabaseUnavailable`` if that fails."""
        ...

    async def read_catalog(self) -> list[CatalogTable]:
        """Every user relation outside the system schemas."""
        ...

    async def describe_table(self, folder: str, table: str) -> list[ColumnInfo] | None:
        """Columns in ordinal order, read live; ``None`` when the relation no longer exists."""
        ...

    async def check_query(self, sql: str, granted: frozenset[TableRef]) -> Any:
        """Refuse (``QueryRejected``) anything but one read-only query over ``granted``.

        Returns an opaque checked query for ``run_query``. Async because a driver
        may need the database's catalog to decide (e.g. which functions exist);
        it should cache whatever does not depend on ``granted``.
        """
        ...

    def run_query(self, checked: Any) -> AbstractAsyncContextManager[QueryResult]:
        """Execute a checked query; the connection is returned clean when the context ends."""
        ...

    async def close(self) -> None:
        """Close every connection; later calls may reopen lazily or fail."""
        ...


@runtime_checkable
class Driver(Protocol):
    """A backend factory, registered under its ``base_type`` name."""

    base_type: str
    """The AddDatabase ``base_type`` this driver serves."""

    def open_pool(
        self,
        connection: ConnectionData,
        limits: PoolLimits,
        logger: structlog.typing.FilteringBoundLogger,
    ) -> DatabasePool:
        """Return a pool for one database; connections open lazily, on first use."""
        ...


DriverFactory = type[Driver] | Any
"""What an entry point names: a callable taking the driver's options mapping."""

DriverOptions = Mapping[str, Any]
"""The ``[drivers.<base_type>]`` table of the configuration file."""
