"""The PostgreSQL driver against the driver contract kit (``gateway.testing``), as any driver package runs it.

The kit's own proof that it is not tied to one database: the same tests the
SQLite example passes (examples/sqlite-driver) pass here, on scratch databases
of the test server.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import Path

import psycopg2.extras

from gateway.testing import DriverContract, DriverUnderTest, ScratchDatabase, ScratchTable, ValueSample, ValueType
from support import create_database, drop_database, run_sql, server_parameters


same = ValueSample.unchanged


class PostgresDatabase(DriverUnderTest):
    base_type = "postgres"
    folder = "public"
    # PostgreSQL's own catalogs and statistics views, and the functions that turn a name or an oid into text.
    catalog_probes = (
        "SELECT relname FROM pg_catalog.pg_class",
        "SELECT relname FROM pg_class",
        "SELECT tablename FROM pg_catalog.pg_tables",
        "SELECT relname FROM pg_catalog.pg_stat_user_tables",
        "SELECT attrelid::regclass::text FROM pg_catalog.pg_attribute",
        "SELECT typname FROM pg_catalog.pg_type",
        "SELECT query FROM pg_catalog.pg_stat_activity",
        "SELECT to_regclass('public.items')::oid::regclass::text",
        "SELECT string_agg(table_name, ',') FROM information_schema.tables",
        "SELECT * FROM information_schema.table_privileges",
        "SELECT obj_description(oid) FROM pg_catalog.pg_class",
    )
    id_type = ValueType("integer", "integer", "integer", ())
    text_type = ValueType("text", "text", "text", ())
    value_types = (
        ValueType("integer", "integer", "integer", (same(0), same(-(2**31)), same(2**31 - 1)), "integer"),
        ValueType("bigint", "bigint", "bigint", (same(2**63 - 1),), "bigint"),
        ValueType(
            "numeric",
            "numeric",
            "numeric",
            (ValueSample(Decimal("12345678901234567890.5"), "12345678901234567890.5"),),
            "numeric",
        ),
        ValueType("boolean", "boolean", "boolean", (same(True), same(False)), "boolean"),
        ValueType("text", "text", "text", (same(""), same("naïve ☃ 😀")), "text"),
        ValueType(
            "timestamptz",
            "timestamptz",
            "timestamp with time zone",
            (
                ValueSample(
                    datetime.datetime(2024, 1, 2, 3, 4, 5, 123000, datetime.UTC), "2024-01-02T03:04:05.123+00:00"
                ),
            ),
            "timestamp with time zone",
        ),
        ValueType(
            "jsonb", "jsonb", "jsonb", (ValueSample(psycopg2.extras.Json({"a": [1, 2]}), {"a": [1, 2]}),), "jsonb"
        ),
        ValueType("int_array", "integer[]", "integer[]", (same([[1, 2], [3, 4]]),), "integer[]"),
        ValueType("bytea", "bytea", "bytea", (ValueSample(b"\x01\x02\xff", "\\x0102ff"),), "bytea"),
    )

    @contextlib.contextmanager
    def scratch_database(self, tables: Sequence[ScratchTable], workdir: Path) -> Iterator[ScratchDatabase]:
        name = create_database()
        try:
            for table in tables:
                columns = ", ".join(f"{column.name} {column.type.declared}" for column in table.columns)
                run_sql(name, f"CREATE TABLE public.{table.name} ({columns})")
                for row in table.rows:
                    run_sql(name, f"INSERT INTO public.{table.name} VALUES ({', '.join(['%s'] * len(row))})", row)
            yield ScratchDatabase({**server_parameters(), "database": name}, name)
        finally:
            drop_database(name)

    def slow_query(self, table: str) -> str:
        # Ten billion rows to count (the SQL guard lets it through: no pg_sleep).
        return (
            f"SELECT count(*) AS n FROM {self.qualified_name(table)} "
            "CROSS JOIN generate_series(1, 100000) AS a CROSS JOIN generate_series(1, 100000) AS b"
        )

    def many_rows_query(self, table: str, count: int) -> str:
        return f"SELECT g AS n FROM generate_series(1, {count}) AS g ORDER BY g"

    def query_running(self, database: ScratchDatabase) -> bool:
        rows = run_sql(
            database.handle,
            "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'dbgateway' AND state = 'active'",
        )
        return bool(rows[0][0])


class TestPostgresContract(DriverContract):
    under_test = PostgresDatabase()
