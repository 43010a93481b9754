"""The benchmark's data: a scratch database holding one table of ``rows`` rows, created and dropped per run.

The table has the column kinds the issue asks for (integer, text, numeric,
timestamp, jsonb) and a primary key for the point lookups. It is filled with
one ``INSERT ... SELECT generate_series`` and analysed, so the planner and the
buffer cache are in the same state for pgbench, psql and the gateway.
"""

from __future__ import annotations

import os
import secrets
import time
from typing import Any

import attrs
import psycopg2
import psycopg2.extensions

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"

TABLE = "public.bench_rows"
"""The benchmark table, written with its schema as GetData requires."""

COLUMNS = "id, quantity, label, amount, created_at, attributes"
"""Every column, in the order all three clients select them."""

POINT_LOOKUP_SQL = f"SELECT {COLUMNS} FROM {TABLE} WHERE id = "
"""The small query without its id: pgbench appends ``:id``, the gateway's client a random literal."""

LARGE_RESULT_SQL = f"SELECT {COLUMNS} FROM {TABLE}"
"""The large query: every row, no ORDER BY, so COPY and GetData's cursor both get a plain sequential scan."""


def _fill_sql(rows: int) -> str:
    """The statements that create and fill the table with ``rows`` rows."""
    return f"""
CREATE TABLE {TABLE} (
    id integer NOT NULL,
    quantity integer NOT NULL,
    label text NOT NULL,
    amount numeric(12, 2) NOT NULL,
    created_at timestamp NOT NULL,
    attributes jsonb NOT NULL
);
INSERT INTO {TABLE}
SELECT g,
       g % 1000,
       'item ' || g || ' ' || md5(g::text),
       round((g % 100000) * 1.37, 2),
       timestamp '2024-01-01 00:00:00' + g * interval '17 seconds',
       jsonb_build_object('color', (ARRAY['red', 'green', 'blue'])[1 + g % 3], 'size', g % 50,
                          'tags', jsonb_build_array('t' || g % 7, 't' || g % 11))
FROM generate_series(1, {int(rows)}) AS g;
ALTER TABLE {TABLE} ADD PRIMARY KEY (id);
"""


@attrs.frozen
class Server:
    """Where the PostgreSQL under test listens, as pgbench, psql and AddDatabase need it."""

    host: str
    """Host name or address."""
    port: int
    """TCP port."""
    user: str
    """Role that may create databases."""
    password: str = attrs.field(repr=False)
    """That role's password (empty for trust authentication)."""

    @classmethod
    def from_environment(cls) -> Server:
        """``DBGATEWAY_BENCH_DSN``, else ``DBGATEWAY_TEST_DSN``, else the local server as ``postgres``."""
        dsn = os.environ.get("DBGATEWAY_BENCH_DSN") or os.environ.get("DBGATEWAY_TEST_DSN") or DEFAULT_DSN
        parameters = psycopg2.extensions.parse_dsn(dsn)
        return cls(
            host=parameters.get("host", "127.0.0.1"),
            port=int(parameters.get("port", 5432)),
            user=parameters.get("user", "postgres"),
            password=parameters.get("password", ""),
        )

    def connect(self, database: str = "postgres") -> psycopg2.extensions.connection:
        """An autocommit connection to ``database``."""
        connection = psycopg2.connect(
            host=self.host, port=self.port, user=self.user, password=self.password, dbname=database
        )
        connection.autocommit = True
        return connection

    def dsn(self, database: str) -> str:
        """A libpq connection string for ``database`` (the pass-through's pool)."""
        return psycopg2.extensions.make_dsn(
            host=self.host, port=self.port, user=self.user, password=self.password or None, dbname=database
        )

    def client_arguments(self, database: str) -> list[str]:
        """``-h -p -U -d`` for psql and pgbench."""
        return ["-h", self.host, "-p", str(self.port), "-U", self.user, "-d", database]

    def client_environment(self) -> dict[str, str]:
        """The environment for psql and pgbench: ours plus the password, if any."""
        environment = dict(os.environ)
        if self.password:
            environment["PGPASSWORD"] = self.password
        return environment

    def version(self) -> str:
        return str(self.run("postgres", "SHOW server_version")[0][0])

    def run(self, database: str, sql: str, parameters: Any = None) -> list[tuple[Any, ...]]:
        """Run ``sql`` in ``database`` (autocommit) and return its rows, if any."""
        connection = self.connect(database)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, parameters)
                return cursor.fetchall() if cursor.description else []
        finally:
            connection.close()


@attrs.frozen
class ScratchDatabase:
    """The database a run created, and how long filling it took."""

    name: str
    """Its name on the server, ``dbgw_bench_<hex>``."""
    rows: int
    """Rows in ``public.bench_rows``."""
    fill_seconds: float
    """Seconds spent creating, filling, indexing and analysing the table."""


def create_scratch_database(server: Server, rows: int) -> ScratchDatabase:
    """Create ``dbgw_bench_<hex>`` and fill its table; drop it again if filling fails."""
    name = f"dbgw_bench_{secrets.token_hex(5)}"
    started = time.monotonic()
    server.run("postgres", f'CREATE DATABASE "{name}"')
    try:
        server.run(name, _fill_sql(rows))
        # VACUUM sets the visibility map (index-only checks stay cheap) and ANALYZE the statistics.
        server.run(name, f"VACUUM ANALYZE {TABLE}")
    except BaseException:
        drop_scratch_database(server, name)
        raise
    return ScratchDatabase(name=name, rows=rows, fill_seconds=time.monotonic() - started)


def drop_scratch_database(server: Server, name: str) -> None:
    """Drop the scratch database, ending any session still in it."""
    server.run("postgres", f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
