"""The SQLite example driver against the contract kit (``gateway.testing``), plus SQLite-only refusals.

Everything the kit needs to know about SQLite is in ``SQLiteDatabase``: how to
make a scratch file, the types it serves, two queries in SQLite's dialect and
a probe that tells whether the gateway still reads the file. The tests at the
end hold the driver to its folder (``[drivers.sqlite] directory``).
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from gateway.testing import DriverContract, DriverUnderTest, ScratchDatabase, ScratchTable, ValueSample, ValueType
from gateway.testing.contract import LOCAL_DATABASE, SECRET_LABEL, Gateway
from gateway.testing.gateway_under_test import (
    USER_TOKEN,
    admin_headers,
    error_of,
    get_data,
    grant,
    running_gateway,
)


same = ValueSample.unchanged


class SQLiteDatabase(DriverUnderTest):
    base_type = "sqlite"
    folder = "main"

    def driver_options_in(self, workdir: Path) -> dict[str, str]:
        # The driver serves files of its configured folder only: the kit's scratch files are made in workdir.
        return {"directory": str(workdir)}

    # Every way SQLite lists what a file holds: the schema table under its names, and the pragma table functions.
    catalog_probes = (
        "SELECT name FROM sqlite_master",
        "SELECT name FROM sqlite_schema",
        "SELECT tbl_name FROM main.sqlite_master",
        "SELECT name FROM sqlite_temp_master",
        "SELECT name FROM pragma_table_list",
        "SELECT * FROM pragma_table_list()",
        "SELECT name FROM pragma_index_list('items')",
        "SELECT * FROM pragma_database_list",
        "SELECT name FROM sqlite_master WHERE name IN (SELECT label FROM main.items)",
    )
    id_type = ValueType("integer", "INTEGER", "INTEGER", ())
    text_type = ValueType("text", "TEXT", "TEXT", ())
    # SQLite's five storage classes (NULL is the kit's own row in every table). The result type is
    # the storage class of the first row's value: SQLite has no result column types.
    value_types = (
        ValueType("integer", "INTEGER", "INTEGER", (same(0), same(-1), same(2**63 - 1), same(-(2**63))), "integer"),
        ValueType(
            "real",
            "REAL",
            "REAL",
            (same(0.5), same(-1e-7), same(1.7976931348623157e308), ValueSample(math.inf, "Infinity"),
             ValueSample(-math.inf, "-Infinity")),
            "real",
        ),
        ValueType("text", "TEXT", "TEXT", (same(""), same("naïve ☃ 😀"), same('"quoted" \\ and\nnew line')), "text"),
        ValueType("blob", "BLOB", "BLOB", (ValueSample(b"\x00\x01\xff", "\\x0001ff"), ValueSample(b"", "\\x")), "blob"),
    )

    @contextlib.contextmanager
    def scratch_database(self, tables: Sequence[ScratchTable], workdir: Path) -> Iterator[ScratchDatabase]:
        path = workdir / "kit.sqlite3"
        with contextlib.closing(sqlite3.connect(path)) as connection, connection:
            for table in tables:
                columns = ", ".join(f"{column.name} {column.type.declared}" for column in table.columns)
                connection.execute(f"CREATE TABLE {table.name} ({columns})")
                marks = ", ".join("?" for _ in table.columns)
                connection.executemany(f"INSERT INTO {table.name} VALUES ({marks})", table.rows)
        # The one connection field the driver declares: the gateway would refuse ip, port or username.
        yield ScratchDatabase({"database": str(path)}, path)
        path.unlink()

    def slow_query(self, table: str) -> str:
        # Counts forever (a recursive WITH without end), reading the table all along.
        return (
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
            f"SELECT count(*) AS n FROM c CROSS JOIN {self.qualified_name(table)}"
        )

    def many_rows_query(self, table: str, count: int) -> str:
        return f"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {count}) SELECT n FROM c"

    def query_running(self, database: ScratchDatabase) -> bool:
        # A statement reading the file holds SQLite's shared lock until it ends; an exclusive lock
        # cannot be had while any does (the file is in the default rollback-journal mode).
        with contextlib.closing(sqlite3.connect(database.handle, timeout=0, isolation_level=None)) as probe:
            try:
                probe.execute("BEGIN EXCLUSIVE")
            except sqlite3.OperationalError as error:
                if "locked" not in str(error):
                    raise
                return True
            probe.execute("ROLLBACK")
            return False


class TestSQLiteContract(DriverContract):
    under_test = SQLiteDatabase()

    @pytest.mark.asyncio
    @pytest.mark.parametrize(
        "query",
        [
            "SELECT items.id FROM main.items JOIN main.secret USING (id)",  # the authorizer never sees secret
            "SELECT * FROM main.items NATURAL JOIN main.secret",
            "SELECT name FROM sqlite_master",
            "SELECT * FROM pragma_table_info('secret')",
            "PRAGMA table_info(secret)",
            "ATTACH DATABASE ':memory:' AS other",
            "CREATE TEMP TABLE t AS SELECT * FROM main.items",
            "SELECT 1; SELECT 2",
        ],
        ids=["using", "natural", "schema", "pragma_function", "pragma", "attach", "temp_table", "two_statements"],
    )
    async def test_sqlite_ways_around_the_grants_are_refused(self, gateway: Gateway, query: str) -> None:
        """SQLite-only ways to read or change what was not granted are 400 query_rejected."""
        client = await gateway()
        message = await error_of(await get_data(client, LOCAL_DATABASE, query), 400, "query_rejected")
        assert SECRET_LABEL not in message


    @pytest.mark.asyncio
    async def test_parameter_values_are_refused_plainly(self, gateway: Gateway) -> None:
        """This example binds no parameter values (GetData's ``params``): 400 saying so, never a run without them."""
        client = await gateway()
        answer = await client.post(  # type: ignore[attr-defined]
            "/GetData", json={"local_database_name": LOCAL_DATABASE, "query": "SELECT $1 AS v", "params": ["x"]},
            headers={"user_token": USER_TOKEN},
        )
        message = await error_of(answer, 400, "query_rejected")
        assert "takes no parameter values" in message


# -- the driver's folder ------------------------------------------------------------------------------------


def sqlite_file(path: Path) -> Path:
    """A small SQLite file at ``path`` with one table, t."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("CREATE TABLE t (id INTEGER)")
        connection.execute("INSERT INTO t VALUES (1)")
    return path


async def add_database(client: object, path: Path | str) -> object:
    parameters = {"local_database_name": "files", "base_type": "sqlite", "database": str(path)}
    return await client.put("/Database", params=parameters, headers=admin_headers())  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_without_a_directory_the_driver_serves_no_file(tmp_path: Path) -> None:
    """Installed but not configured (as `make test` once left it in the venv `make run` serves): no file at all."""
    readable = sqlite_file(tmp_path / "any.sqlite3")
    async with running_gateway(tmp_path / "gateway") as client:
        message = await error_of(await add_database(client, readable), 502, "database_unavailable")
    assert "[drivers.sqlite] directory" in message


@pytest.mark.asyncio
@pytest.mark.parametrize("way", ["outside", "dot_dot", "link"])
async def test_a_file_outside_the_directory_is_refused(tmp_path: Path, way: str) -> None:
    """A path leading out of the folder, directly, through ``..`` or through a link inside it, is 502."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = sqlite_file(tmp_path / "elsewhere" / "secret.sqlite3")
    if way == "outside":
        path: Path | str = outside
    elif way == "dot_dot":
        path = f"{allowed}/../elsewhere/secret.sqlite3"
    else:
        path = allowed / "link.sqlite3"
        path.symlink_to(outside)
    async with running_gateway(tmp_path / "gateway", drivers={"sqlite": {"directory": str(allowed)}}) as client:
        message = await error_of(await add_database(client, path), 502, "database_unavailable")
    assert str(allowed) in message


@pytest.mark.asyncio
async def test_a_file_replaced_by_a_link_leading_out_is_no_longer_read(tmp_path: Path) -> None:
    """The path is resolved at every open: a registered file swapped for a link to another file is refused."""
    allowed = tmp_path / "allowed"
    registered = sqlite_file(allowed / "data.sqlite3")
    outside = sqlite_file(tmp_path / "elsewhere" / "secret.sqlite3")
    async with running_gateway(tmp_path / "gateway", drivers={"sqlite": {"directory": str(allowed)}}) as client:
        assert (await add_database(client, registered)).status == 200  # type: ignore[attr-defined]
        await grant(client, "files-reader-token-0123", "files_main_t")
        query = "SELECT id FROM main.t"
        assert (await get_data(client, "files", query, token="files-reader-token-0123")).status == 200
        registered.unlink()
        registered.symlink_to(outside)
        await error_of(await get_data(client, "files", query, token="files-reader-token-0123"), 503, "database_unavailable")


def test_a_directory_that_is_no_folder_stops_the_gateway(tmp_path: Path) -> None:
    from dbgateway_sqlite import SQLiteDriver

    with pytest.raises(ValueError, match="absolute path"):
        SQLiteDriver({"directory": "relative/folder"})
    with pytest.raises(ValueError, match="is not a folder"):
        SQLiteDriver({"directory": str(tmp_path / "missing")})
    with pytest.raises(ValueError, match="one option is directory"):
        SQLiteDriver({"directry": str(tmp_path)})


@pytest.mark.asyncio
@pytest.mark.parametrize("narrowing", [{"columns": "id"}, {"row_filter": "id = 1"}])
async def test_a_grant_narrower_than_the_table_is_refused(tmp_path: Path, narrowing: dict[str, str]) -> None:
    """This driver's check_query takes no ``narrowing`` (issue 22): a narrowed grant is a 400 naming the input,
    never a whole grant; ``expires_at`` alone needs nothing of the driver."""
    allowed = tmp_path / "allowed"
    registered = sqlite_file(allowed / "data.sqlite3")
    async with running_gateway(tmp_path / "gateway", drivers={"sqlite": {"directory": str(allowed)}}) as client:
        assert (await add_database(client, registered)).status == 200  # type: ignore[attr-defined]
        grant_inputs = {"user_token": "files-reader-token-0123", "local_table_name": "files_main_t"}
        response = await client.post("/GrantTableAccess/", params={**grant_inputs, **narrowing},
                                     headers=admin_headers())
        message = await error_of(response, 400, "bad_request")
        assert f"parameter {next(iter(narrowing))!r} cannot be granted" in message
        response = await client.post("/GrantTableAccess/", params={**grant_inputs, "expires_at": "2999-01-01T00:00:00Z"},
                                     headers=admin_headers())
        assert response.status == 200
