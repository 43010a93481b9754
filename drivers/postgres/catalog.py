"""Catalog queries: which relations a database has, and a relation's columns.

Type names come from ``format_type(type, NULL)``: for built-in types that is
exactly information_schema's ``data_type`` (``timestamp without time zone``,
``text``, ``real``); for arrays and user-defined types it is more precise
(``integer[]``, ``mood``) than data_type's ``ARRAY`` / ``USER-DEFINED``.
Materialized views have columns here too, unlike in information_schema.
"""

from __future__ import annotations

import enum

import attrs

from gateway.contract.driver_protocol import CatalogTable, ColumnInfo, TableKind, TableRef


class PostgresTableKind(enum.StrEnum):
    """The relation kinds AddDatabase registers beyond a table and a view."""

    MATERIALIZED_VIEW = "materialized_view"
    FOREIGN_TABLE = "foreign_table"
    PARTITIONED_TABLE = "partitioned_table"


RELATION_KINDS: dict[str, str] = {
    "r": TableKind.TABLE,
    "v": TableKind.VIEW,
    "m": PostgresTableKind.MATERIALIZED_VIEW,
    "f": PostgresTableKind.FOREIGN_TABLE,
    "p": PostgresTableKind.PARTITIONED_TABLE,
}


@attrs.frozen
class PostgresCatalogTable(CatalogTable):
    """A relation of the catalog, with the tables it inherits from (for ``grant_notes``)."""

    inherits_from: tuple[TableRef, ...] = ()
    """``(folder, table)`` of each table it inherits from directly, partitioning excluded."""

# The last column lists the direct inheritance parents as {{schema, table}, ...};
# a partition's parent is its partitioned table, which is not inheritance here.
CATALOG_SQL = """
SELECT n.nspname, c.relname, c.relkind::text,
       ARRAY(SELECT ARRAY[pn.nspname::text, p.relname::text]
             FROM pg_catalog.pg_inherits AS i
             JOIN pg_catalog.pg_class AS p ON p.oid = i.inhparent
             JOIN pg_catalog.pg_namespace AS pn ON pn.oid = p.relnamespace
             WHERE i.inhrelid = c.oid AND NOT c.relispartition
             ORDER BY i.inhseqno)
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'
ORDER BY n.nspname, c.relname
"""

# LEFT JOIN so a relation with no columns still answers one row (with NULLs),
# which tells "exists, no columns" apart from "does not exist" in one round trip.
COLUMNS_SQL = """
SELECT a.attname, pg_catalog.format_type(a.atttypid, NULL)
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_attribute AS a
  ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = %(folder)s AND c.relname = %(table)s
  AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
ORDER BY a.attnum
"""


def catalog_tables(rows: list[tuple[str, str, str, list[list[str]]]]) -> list[CatalogTable]:
    return [
        PostgresCatalogTable(folder, table, RELATION_KINDS[kind], tuple((parent[0], parent[1]) for parent in parents))
        for folder, table, kind, parents in rows
    ]


def table_columns(rows: list[tuple[str | None, str | None]]) -> list[ColumnInfo] | None:
    if not rows:
        return None
    return [ColumnInfo(name, type_name) for name, type_name in rows if name is not None and type_name is not None]
