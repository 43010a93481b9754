"""The kit's catalog tests: reading the database's catalog or metadata shows a token only what it was granted.

Issue 21 found a driver that passed every other kit test and answered
``information_schema.tables`` with the names of tables the token was never
granted. Each query of ``CATALOG_PROBES`` and of the driver's own
``DriverUnderTest.catalog_probes`` is sent by a token granted one table.
``DriverContract`` (``gateway.testing.contract``) inherits these tests.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import ClassVar

import pytest
from aiohttp.test_utils import TestClient

from gateway.testing.driver_under_test import CATALOG_PROBES, DriverUnderTest
from gateway.testing.gateway_under_test import ONE_TABLE_TOKEN, get_data, grant

LOCAL_DATABASE = "kit"
"""The local name the kit registers its scratch database under."""

Gateway = Callable[..., Awaitable[TestClient]]
"""The kit's ``gateway`` fixture: starts a gateway with settings, the scratch database registered."""


class CatalogContract:
    """Catalog reads refused or filtered to the grants; ``DriverContract`` provides the fixtures and the names."""

    under_test: ClassVar[DriverUnderTest]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "catalog_probe" in metafunc.fixturenames:
            probes = CATALOG_PROBES + tuple(getattr(self.under_test, "catalog_probes", ()))
            metafunc.parametrize("catalog_probe", probes, ids=[" ".join(probe.split())[:60] for probe in probes])

    def local_table(self, table: str) -> str:
        """The local name AddDatabase gives a scratch table (``DriverContract``'s)."""
        raise NotImplementedError

    def table_names(self) -> list[str]:
        """The scratch tables' names (``DriverContract``'s)."""
        raise NotImplementedError

    def test_driver_declares_its_catalog_probes(self) -> None:
        """The driver names the queries that would read its own catalog (the standard ones are not enough)."""
        probes = getattr(self.under_test, "catalog_probes", ())
        assert probes, (
            f"{type(self.under_test).__name__}.catalog_probes is empty: name the queries that list tables in your"
            " dialect (system tables and views, table functions, pragmas); the kit checks each leaks nothing"
        )

    @pytest.mark.asyncio
    async def test_catalog_reads_show_only_granted_names(self, gateway: Gateway, catalog_probe: str) -> None:
        """A catalog or metadata read is refused, or answers no table the token was not granted.

        The token is granted ``items`` alone; no other kit table's name may appear in
        the answer (nor in a refusal, unless the query named it itself).
        """
        client = await gateway()
        await grant(client, ONE_TABLE_TOKEN, self.local_table("items"))
        hidden = [name for name in self.table_names() if name != "items"]
        response = await get_data(client, LOCAL_DATABASE, catalog_probe, token=ONE_TABLE_TOKEN)
        text = await response.text()
        if response.status == 200:
            answered = json.dumps(json.loads(text)).lower()
            leaked = [name for name in hidden if name in answered]
            assert not leaked, f"{catalog_probe!r} answered ungranted table names {leaked}: {text[:2000]}"
            return
        assert 400 <= response.status < 500, f"{catalog_probe!r} answered {response.status}: {text[:2000]}"
        leaked = [name for name in hidden if name in text.lower() and name not in catalog_probe.lower()]
        assert not leaked, f"the refusal of {catalog_probe!r} names ungranted tables {leaked}: {text[:2000]}"
