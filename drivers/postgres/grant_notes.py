"""The note a grant gets when it leaves out inheritance children (the driver's ``grant_notes``).

GetData reads every table as ONLY (``drivers/postgres/guard/inheritance.py``): the
rows of a table's inheritance children never come back through it, whatever is
granted. An administrator who grants such a parent may expect them, so the
gateway logs this note at warning, as ``inheritance_children_not_granted``:

- when a table is granted (``POST /GrantTableAccess/``): its children, and their
  children, that this token was not granted;
- when a database is refreshed: for each table granted to any token, its
  descendants that no token was granted.

The children come from ``PostgresCatalogTable.inherits_from`` (partitions are
not inheritance children: a partitioned table returns its partitions' rows).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from drivers.postgres.catalog import PostgresCatalogTable
from gateway.contract.driver_protocol import CatalogTable, GrantNote, TableRef

WARNING_EVENT = "inheritance_children_not_granted"
HINT = (
    "GetData reads every table as ONLY: these inheritance children's rows are not returned through "
    "the parent; grant a child and query it by name to read its rows"
)


def inheritance_descendants(catalog: Iterable[CatalogTable]) -> dict[TableRef, frozenset[TableRef]]:
    """Each inheritance parent's children, their children and so on, by ``(folder, table)``."""
    children: dict[TableRef, set[TableRef]] = defaultdict(set)
    for entry in catalog:
        for parent in entry.inherits_from if isinstance(entry, PostgresCatalogTable) else ():
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


def children_not_granted(
    catalog: Sequence[CatalogTable], table: TableRef, granted: frozenset[TableRef]
) -> list[GrantNote]:
    """The note when ``table`` has inheritance descendants outside ``granted``; none otherwise."""
    missing = inheritance_descendants(catalog).get(table, frozenset()) - granted
    if not missing:
        return []
    return [GrantNote(WARNING_EVENT, {"children": [f"{folder}.{name}" for folder, name in sorted(missing)], "hint": HINT})]
