"""``DriverContract``: the tests every driver must pass, over real HTTP against an in-process gateway.

A driver package runs them against its own database by subclassing, in one of
its test modules::

    class TestMyDriverContract(DriverContract):
        under_test = MyDriverUnderTest()

Each test makes a scratch database (``DriverUnderTest.scratch_database``),
starts a gateway with the settings it needs, registers the database through
AddDatabase and grants the kit's user token every table but ``secret``. No
test measures time: waits poll the driver's probe up to a deadline. A test
needing a ``Capability`` the driver declares it lacks is skipped with the
driver's reason (``pytest -rs`` prints it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient

from gateway.databases.driver_loader import ENTRY_POINT_GROUP, declared_fields
from gateway.contract.connection_fields import ConnectionField, FieldKind
from gateway.contract.driver_protocol import Driver
from gateway.testing.catalog_contract import LOCAL_DATABASE, CatalogContract, Gateway
from gateway.testing.driver_under_test import (
    Capability, DriverUnderTest, ScratchColumn, ScratchDatabase, ScratchTable, ValueType,
)
from gateway.testing.gateway_under_test import (
    OTHER_TOKEN, USER_TOKEN, admin_headers, error_of, get_data, grant, register, rows_of,
    running_gateway, success_of, table_names, user_headers, wait_until,
)

ITEM_LABELS = ("one", "two", "three")
SECRET_LABEL = "kit-secret-never-answered"
SCRATCH_FOLDER = "database"
"""The folder of a test's ``tmp_path`` its scratch databases are made in (``scratch_database``'s ``workdir``)."""
PROBE_SECONDS = 20.0
"""Deadline for the driver's probe to see a query start or stop (generous: CI machines are busy)."""

_KIND_SAMPLES = {FieldKind.HOST: "127.0.0.1", FieldKind.PORT: "5432", FieldKind.INTEGER: "1", FieldKind.BOOLEAN: "true"}
"""A valid value of each kind of connection field (text: ``kit``; a choice: its first)."""


def _sample(field: ConnectionField) -> str:
    return field.choices[0] if field.choices else _KIND_SAMPLES.get(field.kind, "kit")


def other_drivers_fields() -> list[ConnectionField]:
    """The connection fields of every installed driver that builds without options (the gateway knows them all)."""
    fields: list[ConnectionField] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            fields.extend(declared_fields(entry.load()({})))
        except Exception:  # a driver needing options, or failing to import, is not the one under test
            continue
    return fields


def installed_driver(under_test: DriverUnderTest, workdir: Path) -> Driver:
    """The driver under test, built as the gateway builds it (its entry point, with its options for ``workdir``)."""
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == under_test.base_type:
            driver: Driver = entry.load()(dict(under_test.driver_options_in(workdir)))
            return driver
    raise AssertionError(f"no driver {under_test.base_type!r} in the {ENTRY_POINT_GROUP!r} entry-point group")


def kit_tables(under_test: DriverUnderTest) -> list[ScratchTable]:
    """``items`` (granted), ``secret`` (never granted), and one ``values_<type>`` table per value type."""
    id_column, label = ScratchColumn("id", under_test.id_type), ScratchColumn("label", under_test.text_type)
    tables = [
        ScratchTable("items", (id_column, label), tuple((n, text) for n, text in enumerate(ITEM_LABELS, 1))),
        ScratchTable("secret", (id_column, label), ((1, SECRET_LABEL),)),
    ]
    for value_type in under_test.value_types:
        values = [sample.stored for sample in value_type.samples] + [None]
        rows = tuple((n, value) for n, value in enumerate(values, 1))
        tables.append(ScratchTable(f"values_{value_type.name}", (id_column, ScratchColumn("v", value_type)), rows))
    return tables


class DriverContract(CatalogContract):
    """The driver contract as tests; subclass it with ``under_test`` set (see the module docstring)."""

    under_test: ClassVar[DriverUnderTest]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "value_type" in metafunc.fixturenames:
            types = self.under_test.value_types
            metafunc.parametrize("value_type", types, ids=[value_type.name for value_type in types])
        super().pytest_generate_tests(metafunc)

    def requires(self, capability: Capability) -> None:
        """Skip the calling test, with the driver's reason, when the driver declares it lacks ``capability``."""
        reason = self.under_test.lacks.get(capability)
        if reason is not None:
            pytest.skip(f"not applicable to {self.under_test.base_type} (lacks {capability.value}): {reason}")

    def local_table(self, table: str) -> str:
        """The local name AddDatabase gives a scratch table."""
        return f"{LOCAL_DATABASE}_{self.under_test.folder}_{table}"

    def table_names(self) -> list[str]:
        return [table.name for table in kit_tables(self.under_test)]

    @pytest.fixture
    def scratch(self, tmp_path: Path) -> Iterator[ScratchDatabase]:
        """The test's scratch database holding ``kit_tables``."""
        workdir = tmp_path / SCRATCH_FOLDER
        workdir.mkdir()
        with self.under_test.scratch_database(kit_tables(self.under_test), workdir) as database:
            yield database

    @pytest_asyncio.fixture
    async def gateway(self, tmp_path: Path, scratch: ScratchDatabase) -> AsyncIterator[Gateway]:
        """Start a gateway with settings, the scratch database registered and every table but ``secret`` granted."""
        under_test = self.under_test
        if under_test.base_type not in {entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)}:
            pytest.fail(
                f"no driver {under_test.base_type!r} is installed in the {ENTRY_POINT_GROUP!r} entry-point group: "
                "install the driver package beside dbgateway first (pip install -e .)",
                pytrace=False,
            )
        started = 0
        async with contextlib.AsyncExitStack() as stack:

            async def start(**settings: Any) -> TestClient:
                nonlocal started
                started += 1
                data_dir = tmp_path / f"gateway-{started}"
                options = under_test.driver_options_in(tmp_path / SCRATCH_FOLDER)
                drivers = {under_test.base_type: dict(options)} if options else {}
                client = await stack.enter_async_context(running_gateway(data_dir, drivers=drivers, **settings))
                await register(client, LOCAL_DATABASE, under_test.base_type, dict(scratch.parameters))
                for table in kit_tables(under_test):
                    if table.name != "secret":
                        await grant(client, USER_TOKEN, self.local_table(table.name))
                return client

            yield start

    # -- registration and catalog -------------------------------------------------------------------

    @pytest.mark.asyncio
    async def test_add_database_registers_every_table(self, gateway: Gateway) -> None:
        """AddDatabase reads the catalog: every scratch table is listed under <local>_<folder>_<table>."""
        client = await gateway()
        expected = sorted(self.local_table(table.name) for table in kit_tables(self.under_test))
        assert await table_names(client, LOCAL_DATABASE) == expected
        body = await success_of(
            await client.get("/Database", params={"local_database_name": LOCAL_DATABASE}, headers=admin_headers())
        )
        assert body[0]["base_type"] == self.under_test.base_type, body

    @pytest.mark.asyncio
    async def test_connection_fields_are_the_declared_ones(
        self, gateway: Gateway, scratch: ScratchDatabase, tmp_path: Path
    ) -> None:
        """AddDatabase takes the declared connection fields only (400 for another); the answer shows no other."""
        client = await gateway()
        driver = installed_driver(self.under_test, tmp_path / SCRATCH_FOLDER)
        declared = {field.name for field in declared_fields(driver)}
        assert set(scratch.parameters) <= declared, "scratch_database's parameters must be declared connection fields"
        body = await success_of(
            await client.get("/Database", params={"local_database_name": LOCAL_DATABASE}, headers=admin_headers())
        )
        shown = {field.name for field in declared_fields(driver) if not field.secret}
        assert set(body[0]) - {"status", "local_name", "base_type"} <= shown, body
        others = {field.name: field for field in other_drivers_fields() if field.name not in declared}
        for undeclared, field in others.items():
            parameters = {**scratch.parameters, undeclared: _sample(field)}
            parameters.update(local_database_name="kit_other", base_type=self.under_test.base_type)
            response = await client.put("/Database", params=parameters, headers=admin_headers())
            assert undeclared in await error_of(response, 400, "bad_request")

    @pytest.mark.asyncio
    async def test_table_data_describes_columns_in_order(self, gateway: Gateway) -> None:
        """GetTableData answers the table's columns in order with the driver's type names."""
        client = await gateway()
        response = await client.get(
            "/Table", params={"local_table_name": self.local_table("items")}, headers=user_headers()
        )
        table_data = (await success_of(response))["TableData"]
        assert list(table_data["columns"].items()) == [
            ("id", self.under_test.id_type.described),
            ("label", self.under_test.text_type.described),
        ], table_data
        assert (table_data["database_name"], table_data["folder_name"], table_data["table_name"]) == (
            LOCAL_DATABASE,
            self.under_test.folder,
            "items",
        )

    # -- values ----------------------------------------------------------------------------------------

    @pytest.mark.asyncio
    async def test_value_round_trip(self, gateway: Gateway, value_type: ValueType) -> None:
        """Every sample of a claimed type, and NULL, comes back through GetData as the JSON the driver promises."""
        client = await gateway()
        table = f"values_{value_type.name}"
        described = (await success_of(
            await client.get("/Table", params={"local_table_name": self.local_table(table)}, headers=user_headers())
        ))["TableData"]["columns"]
        assert described == {"id": self.under_test.id_type.described, "v": value_type.described}
        result = await rows_of(client, LOCAL_DATABASE, self.under_test.read_table_query(table, ["id", "v"]))
        expected = [sample.json for sample in value_type.samples] + [None]
        assert [row["v"] for row in result["data"]] == expected
        assert [row["id"] for row in result["data"]] == list(range(1, len(expected) + 1))
        assert [column["name"] for column in result["columns"]] == ["id", "v"]
        if value_type.result_type is not None:
            assert result["columns"][1]["type"] == value_type.result_type, result["columns"]

    @pytest.mark.asyncio
    async def test_repeated_column_names_are_made_unique(self, gateway: Gateway) -> None:
        """A name the result repeats becomes name_2, and no value is lost."""
        client = await gateway()
        result = await rows_of(client, LOCAL_DATABASE, self.under_test.read_table_query("items", ["id", "label", "id"]))
        assert [column["name"] for column in result["columns"]] == ["id", "label", "id_2"]
        assert result["data"][0] == {"id": 1, "label": "one", "id_2": 1}

    # -- grants ----------------------------------------------------------------------------------------

    @pytest.mark.asyncio
    async def test_ungranted_table_is_refused_like_a_missing_one(self, gateway: Gateway) -> None:
        """Reading a table not granted is 400 query_rejected, worded as for a table that does not exist."""
        client = await gateway()
        under_test = self.under_test
        refusals = {}
        for table in ("secret", "no_such_table"):
            response = await get_data(client, LOCAL_DATABASE, under_test.read_table_query(table, ["id", "label"]))
            refusals[table] = (await error_of(response, 400, "query_rejected")).replace(table, "<>")
        assert refusals["secret"] == refusals["no_such_table"], refusals
        assert SECRET_LABEL not in refusals["secret"]

    @pytest.mark.asyncio
    @pytest.mark.parametrize(
        "shape",
        [
            "SELECT i.id FROM {items} AS i JOIN {secret} AS s ON s.id = i.id",
            "SELECT id FROM {items} WHERE id IN (SELECT id FROM {secret})",
            "SELECT count(*) AS n FROM {secret}",
        ],
        ids=["join", "subquery", "count"],
    )
    async def test_ungranted_table_is_refused_wherever_it_is_read(self, gateway: Gateway, shape: str) -> None:
        """A granted table beside an ungranted one does not let the ungranted one through."""
        client = await gateway()
        names = {name: self.under_test.qualified_name(name) for name in ("items", "secret")}
        response = await get_data(client, LOCAL_DATABASE, shape.format(**names))
        assert SECRET_LABEL not in await error_of(response, 400, "query_rejected")

    @pytest.mark.asyncio
    @pytest.mark.parametrize(
        "shape", ["DELETE FROM {items}", "UPDATE {items} SET label = 'changed'", "DROP TABLE {items}"]
    )
    async def test_statements_other_than_reads_are_refused(self, gateway: Gateway, shape: str) -> None:
        """Writes and schema changes are refused before they run; the table is unchanged."""
        client = await gateway()
        items = self.under_test.qualified_name("items")
        await error_of(await get_data(client, LOCAL_DATABASE, shape.format(items=items)), 400, "query_rejected")
        result = await rows_of(client, LOCAL_DATABASE, self.under_test.read_table_query("items", ["id", "label"]))
        assert [row["label"] for row in result["data"]] == list(ITEM_LABELS)

    @pytest.mark.asyncio
    async def test_token_without_grants_in_the_database_is_403(self, gateway: Gateway) -> None:
        """A token granted nothing in the database gets 403 access_denied, not the rows."""
        client = await gateway()
        query = self.under_test.read_table_query("items", ["id"])
        await error_of(await get_data(client, LOCAL_DATABASE, query, token=OTHER_TOKEN), 403, "access_denied")

    # -- limits ----------------------------------------------------------------------------------------

    @pytest.mark.asyncio
    async def test_statement_time_limit_is_504_and_frees_its_slot(self, gateway: Gateway) -> None:
        """A query past statement_timeout answers 504 query_timeout, and the pool's one slot serves the next query."""
        client = await gateway(statement_timeout=1, pool_max_size=1)
        await self.slow_query_times_out(client)
        result = await rows_of(client, LOCAL_DATABASE, self.under_test.read_table_query("items", ["id"]))
        assert result["row_count"] == len(ITEM_LABELS)

    @pytest.mark.asyncio
    async def test_timed_out_query_stops_in_the_database(self, gateway: Gateway, scratch: ScratchDatabase) -> None:
        """After its 504 the query no longer runs in the database (the driver's probe, up to a deadline)."""
        self.requires(Capability.WATCH_RUNNING_QUERY)
        client = await gateway(statement_timeout=1, pool_max_size=1)
        await self.slow_query_times_out(client)
        await wait_until(lambda: not self.under_test.query_running(scratch), PROBE_SECONDS, "the timed-out query stops")

    async def slow_query_times_out(self, client: TestClient) -> None:
        try:
            response = await asyncio.wait_for(
                get_data(client, LOCAL_DATABASE, self.under_test.slow_query("items")), PROBE_SECONDS
            )
        except TimeoutError:
            raise AssertionError(f"no answer {PROBE_SECONDS:g} s after a 1 s statement time limit") from None
        await error_of(response, 504, "query_timeout")

    @pytest.mark.asyncio
    async def test_client_that_goes_away_stops_its_query(self, gateway: Gateway, scratch: ScratchDatabase) -> None:
        """Closing the connection mid-query stops the query in the database and gives its slot back."""
        self.requires(Capability.WATCH_RUNNING_QUERY)
        client = await gateway(statement_timeout=600, pool_max_size=1)
        under_test = self.under_test
        slow = asyncio.create_task(get_data(client, LOCAL_DATABASE, under_test.slow_query("items")))
        await wait_until(lambda: under_test.query_running(scratch), PROBE_SECONDS, "the slow query runs")
        assert not slow.done(), "the slow query answered before its client went away"
        slow.cancel()  # aiohttp closes the connection of a request cancelled mid-way
        await asyncio.gather(slow, return_exceptions=True)
        await wait_until(lambda: not under_test.query_running(scratch), PROBE_SECONDS, "the abandoned query stops")
        # The pool's one slot came back: the next query is served.
        result = await rows_of(client, LOCAL_DATABASE, under_test.read_table_query("items", ["id"]))
        assert result["row_count"] == len(ITEM_LABELS)

    @pytest.mark.asyncio
    async def test_a_cut_result_reads_on_through_its_continuation(self, gateway: Gateway) -> None:
        """A pool that ``holds_results``: the cut answer's ``next`` reads the rows after it, page by page, each
        once, to the last (no ``next``). A pool that does not: a cut answer has no ``next`` at all."""
        client = await gateway(row_limit=5, fetch_batch_size=2)
        query = self.under_test.many_rows_query("items", 23)
        result = (await success_of(await get_data(client, LOCAL_DATABASE, query)))[0]
        read = [row["n"] for row in result["data"]]
        while "next" in result:
            assert result["truncated"] is True
            response = await client.post(
                "/GetData",
                json={"local_database_name": LOCAL_DATABASE, "query": query, "continuation": result["next"]},
                headers=user_headers(USER_TOKEN),
            )
            result = (await success_of(response))[0]
            read += [row["n"] for row in result["data"]]
        if len(read) > 5:  # continued: every row once, in order
            assert read == list(range(1, 24)) and result["truncated"] is False
        else:
            assert read == [1, 2, 3, 4, 5] and result["truncated"] is True

    @pytest.mark.asyncio
    @pytest.mark.parametrize(("rows", "truncated"), [(4, False), (5, False), (6, True), (23, True)])
    async def test_row_limit_cuts_the_result_and_says_so(self, gateway: Gateway, rows: int, truncated: bool) -> None:
        """Past row_limit (5) the answer holds the first 5 rows and truncated is true; at the limit it is false."""
        client = await gateway(row_limit=5, fetch_batch_size=2)  # several fetches before the limit
        response = await get_data(client, LOCAL_DATABASE, self.under_test.many_rows_query("items", rows))
        assert response.headers.get("Dbgateway-Truncated") == ("true" if truncated else "false")
        result = (await success_of(response))[0]
        assert [row["n"] for row in result["data"]] == list(range(1, min(rows, 5) + 1))
        assert (result["row_count"], result["truncated"]) == (min(rows, 5), truncated)
