"""What a driver says an operator should know about a grant (``Driver.grant_notes``), logged at warning.

The gateway knows nothing of why: it reads the database's catalog, asks the
database's driver for its ``GrantNote`` s about one granted table and the tables
its grantees may read, and logs each with the table's names and whose grants
were compared. A driver without ``grant_notes`` has nothing to say.

- when a table is granted (``POST /GrantTableAccess/``): against this token's grants;
- when a database is refreshed: for each table granted to any token, against
  every token's grants in that database.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from gateway.contract.driver_protocol import CatalogTable, Driver, TableRef
from gateway.registry import TableRecord

SKIPPED_EVENT = "grant_notes_skipped"
"""Debug event: the catalog could not be read in time, so the grant's notes were not looked for."""


def has_grant_notes(driver: Driver) -> bool:
    return callable(getattr(driver, "grant_notes", None))


def log_grant_notes(
    logger: structlog.typing.FilteringBoundLogger,
    driver: Driver,
    catalog: Sequence[CatalogTable],
    table: TableRecord,
    granted: frozenset[TableRef],
    *,
    granted_to: str,
) -> None:
    """Log the driver's notes about ``table`` granted beside ``granted``; ``granted_to`` says whose grants."""
    notes = getattr(driver, "grant_notes", None)
    if notes is None:
        return
    for note in notes(catalog, (table.address.folder, table.address.table), granted):
        logger.warning(
            note.event,
            local_table_name=table.local_name,
            table=f"{table.address.folder}.{table.address.table}",
            **note.fields,
            not_granted_to=granted_to,
        )
