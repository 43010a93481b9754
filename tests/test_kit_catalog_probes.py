"""The contract kit fails a driver that answers catalog reads with tables the token was never granted.

Issue 21: a driver passed every kit test while ``information_schema.tables``
listed every table. Here the SQLite example is made to leak (its guard lets
``sqlite_master`` through) and installed beside the real one; the kit's
catalog tests run in a pytest of their own against each: the leaky one fails
naming the ungranted tables, the real one passes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("dbgateway_sqlite", reason="the SQLite example driver is not installed (make test installs it)")

CONFTEST = '''
from importlib.metadata import EntryPoint, entry_points

import gateway.databases.driver_loader as loader
import gateway.testing.contract as kit

LEAKY = EntryPoint("leakysqlite", "leaky_driver:LeakyDriver", loader.ENTRY_POINT_GROUP)


def with_leaky(*, group):
    found = list(entry_points(group=group))
    return [*found, LEAKY] if group == loader.ENTRY_POINT_GROUP else found


loader.entry_points = with_leaky
kit.entry_points = with_leaky
'''

LEAKY_DRIVER = '''
from dbgateway_sqlite import SQLiteDriver, database_file
from dbgateway_sqlite.grants import SQLiteQuery, fingerprint
from dbgateway_sqlite.pool import SQLitePool, SQLiteStatement


class LeakyPool(SQLitePool):
    """Lets any read of sqlite_master through, unchecked: the bug the kit must catch."""

    async def check_query(self, sql, granted):
        if "sqlite_master" in sql.lower():
            return SQLiteQuery(sql, granted, frozenset(), fingerprint(sql))
        return await super().check_query(sql, granted)

    def execute(self, connection, checked):
        if "sqlite_master" in checked.sql.lower():
            return SQLiteStatement(connection.execute(checked.sql))
        return super().execute(connection, checked)


class LeakyDriver(SQLiteDriver):
    base_type = "leakysqlite"

    def open_pool(self, connection, limits, logger):
        return LeakyPool(database_file(connection), limits, logger, self.directory)
'''

KIT_RUN = '''
import contextlib
import sqlite3

from gateway.testing import DriverContract, DriverUnderTest, ScratchDatabase, ValueType


class Described(DriverUnderTest):
    base_type = "{base_type}"
    folder = "main"
    catalog_probes = ("SELECT name FROM sqlite_master", "SELECT name FROM pragma_table_list")
    id_type = ValueType("integer", "INTEGER", "INTEGER", ())
    text_type = ValueType("text", "TEXT", "TEXT", ())
    value_types = (ValueType("blob", "BLOB", "BLOB", ()),)

    def driver_options_in(self, workdir):
        return {{"directory": str(workdir)}}

    @contextlib.contextmanager
    def scratch_database(self, tables, workdir):
        path = workdir / "kit.sqlite3"
        with contextlib.closing(sqlite3.connect(path)) as connection, connection:
            for table in tables:
                columns = ", ".join(f"{{column.name}} {{column.type.declared}}" for column in table.columns)
                connection.execute(f"CREATE TABLE {{table.name}} ({{columns}})")
                marks = ", ".join("?" for _ in table.columns)
                connection.executemany(f"INSERT INTO {{table.name}} VALUES ({{marks}})", table.rows)
        yield ScratchDatabase({{"database": str(path)}}, path)

    def slow_query(self, table):
        raise NotImplementedError

    def many_rows_query(self, table, count):
        raise NotImplementedError


class TestKit(DriverContract):
    under_test = Described()
'''


def run_catalog_tests(tmp_path: Path, base_type: str) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / base_type
    folder.mkdir()
    (folder / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (folder / "leaky_driver.py").write_text(textwrap.dedent(LEAKY_DRIVER))
    (folder / "test_kit_run.py").write_text(textwrap.dedent(KIT_RUN.format(base_type=base_type)))
    options = ["-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-k", "catalog", "-o", "asyncio_mode=auto"]
    options += ["-o", "asyncio_default_fixture_loop_scope=function", "--rootdir", str(folder), str(folder)]
    command = [sys.executable, "-m", "pytest", *options]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)


def test_the_kit_fails_a_driver_that_lists_ungranted_tables(tmp_path: Path) -> None:
    """The leaky driver fails the one probe it leaks on, naming the tables; the SQLite example passes them all."""
    leaky = run_catalog_tests(tmp_path, "leakysqlite")
    assert leaky.returncode == 1, leaky.stdout + leaky.stderr
    assert "'SELECT name FROM sqlite_master' answered ungranted table names ['secret', 'values_blob']" in leaky.stdout
    # Only that probe: the standard ones and pragma_table_list are still refused, and the other catalog test passes.
    assert "1 failed, 5 passed" in leaky.stdout
    sound = run_catalog_tests(tmp_path, "sqlite")
    assert sound.returncode == 0, sound.stdout + sound.stderr
