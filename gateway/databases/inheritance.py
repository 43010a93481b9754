"""Warnings about inheritance children that the grants leave out.

GetData reads every table as ONLY (``drivers/postgres/guard/inheritance.py``): the
rows of a table's inheritance children never come back through it, whatever
is granted. An administrator who grants such a parent may expect them, so the
gateway says so in the log, at warning, as ``inheritance_children_not_granted``:

- when a table is granted (``POST /GrantTableAccess/``): its children, and their
  children, that this token was not granted;
- when a database is refreshed: for each table granted to any token, its
  descendants that no token was granted.

The children come from ``CatalogTable.inherits_from`` (partitions are not
inheritance children: a partitioned table returns its partitions' rows).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import structlog

from gateway.contract.driver_protocol import CatalogTable, TableRef
from gateway.registry import TableRecord

WARNING_EVENT = "inheritance_children_not_granted"


def inheritance_descendants(catalog: Iterable[CatalogTable]) -> dict[TableRef, frozenset[TableRef]]:
    """Each inheritance parent's children, their children and so on, by ``(folder, table)``."""
    children: dict[TableRef, set[TableRef]] = defaultdict(set)
    for entry in catalog:
        for parent in entry.inherits_from:
            children[parent].add((entry.folder, entry.table))
    descendants: dict[TableRef, frozenset[TableRef]] = {}
    for parent in children:
        found: set[TableRef] = set()
        waiting = list(children[parent])
        while waiting:
            child = waiting.pop()
            if child not in found:
                found.add(child)
                waiting.extend(children.get(child, ()))
        descendants[parent] = frozenset(found)
    return descendants


def warn_children_not_granted(
    logger: structlog.typing.FilteringBoundLogger,
    table: TableRecord,
    descendants: dict[TableRef, frozenset[TableRef]],
    granted: frozenset[TableRef],
    *,
    granted_to: str,
) -> None:
    """Log the warning when ``table`` has descendants outside ``granted``; ``granted_to`` says whose grants."""
    missing = descendants.get((table.address.folder, table.address.table), frozenset()) - granted
    if not missing:
        return
    logger.warning(
        WARNING_EVENT,
        local_table_name=table.local_name,
        table=f"{table.address.folder}.{table.address.table}",
        children=[f"{folder}.{name}" for folder, name in sorted(missing)],
        not_granted_to=granted_to,
        hint="GetData reads every table as ONLY: these inheritance children's rows are not returned through "
        "the parent; grant a child and query it by name to read its rows",
    )
