"""The contract kit for driver authors: prove a driver meets the gateway's contract, over real HTTP.

Needs pytest and pytest-asyncio (dbgateway's ``test`` extra). In the driver
package's tests, describe the database once and subclass the contract::

    from gateway.testing import DriverContract, DriverUnderTest

    class MyDatabase(DriverUnderTest):
        base_type = "mydb"
        ...

    class TestMyDriverContract(DriverContract):
        under_test = MyDatabase()

docs/drivers.md walks through an example driver package that does this.

May import: every room of ``gateway`` but ``gateway.process`` (the kit starts a
gateway in-process, ``gateway.web.app.create_app``). Nothing in ``gateway``
imports it: only driver packages' tests and ours.
"""

from __future__ import annotations

import pytest

# Before the kit's modules are imported: their asserts then explain a failure as a test module's would.
pytest.register_assert_rewrite(
    "gateway.testing.catalog_contract", "gateway.testing.contract", "gateway.testing.gateway_under_test"
)

from gateway.testing.contract import DriverContract, kit_tables  # noqa: E402
from gateway.testing.driver_under_test import (  # noqa: E402
    CATALOG_PROBES,
    Capability,
    DriverUnderTest,
    ScratchColumn,
    ScratchDatabase,
    ScratchTable,
    ValueSample,
    ValueType,
)

__all__ = [
    "CATALOG_PROBES",
    "Capability",
    "DriverContract",
    "DriverUnderTest",
    "ScratchColumn",
    "ScratchDatabase",
    "ScratchTable",
    "ValueSample",
    "ValueType",
    "kit_tables",
]
