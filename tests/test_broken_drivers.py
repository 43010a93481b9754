"""A broken third-party driver installed beside dbgateway: reported, and the other drivers still served.

Issue 21: with such a package in the environment, dozens of unrelated tests
failed. Here the broken drivers are entry points added to the
``dbgateway.drivers`` group (``importlib.metadata``'s listing is replaced, not
the database): one whose module does not import, one whose callable raises, one
that needs options nobody gave, one whose declaration is not a declaration.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from support import (
    GatewayFactory,
    admin_headers,
    database_parameters,
    error_of,
    gateway_config,
    read_logs,
    user_headers,
)

from gateway.databases import driver_loader
from gateway.observability.log_stream import CapturedLog
from gateway.settings.config import ConfigError
from gateway.web.app import create_app

SHOP_SQL = "CREATE TABLE public.items (id integer); INSERT INTO public.items VALUES (1), (2)"
"""The module's scratch database (the ``shop_database`` fixture of conftest.py), served by the postgres driver."""

TOKEN = "broken-driver-reader-7c1e"
SHOP_GRANTS = {TOKEN: ["shop_public_items"]}
"""The grants of the ``shop`` fixture (conftest.py)."""


class CrashingDriver:
    """A driver whose constructor fails with the driver's own bug."""

    def __init__(self, options: dict[str, Any]) -> None:
        raise RuntimeError("the driver crashes when built")


class OptionsNeeded:
    """A driver that refuses to be built without a ``path`` option."""

    def __init__(self, options: dict[str, Any]) -> None:
        if "path" not in options:
            raise ValueError("needs a 'path' option")


class Shapeless:
    """A driver whose connection_fields is not a sequence of fields."""

    connection_fields = 42

    def __init__(self, options: dict[str, Any]) -> None:
        pass


BROKEN = {
    "brokenimport": "dbgateway_no_such_driver_module_i21:Driver",
    "brokenbuild": f"{__name__}:CrashingDriver",
    "brokenoptions": f"{__name__}:OptionsNeeded",
    "brokenshape": f"{__name__}:Shapeless",
}
"""Each broken driver's base_type and entry-point target."""


@pytest.fixture(autouse=True)
def broken_drivers_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    real_entry_points = driver_loader.entry_points
    broken = [EntryPoint(name, target, driver_loader.ENTRY_POINT_GROUP) for name, target in BROKEN.items()]

    def with_broken_drivers(*, group: str) -> list[EntryPoint]:
        return [*real_entry_points(group=group), *(broken if group == driver_loader.ENTRY_POINT_GROUP else [])]

    monkeypatch.setattr(driver_loader, "entry_points", with_broken_drivers)


async def test_the_gateway_serves_postgres_beside_broken_drivers(shop: TestClient) -> None:
    """The gateway starts, registers and reads a PostgreSQL database; each broken driver is logged once, with why."""
    response = await shop.get(
        "/GetData", params={"local_database_name": "shop", "query": "select id from public.items order by id"},
        headers=user_headers(TOKEN),
    )  # fmt: skip
    assert response.status == 200, await response.text()
    assert (await response.json(content_type=None))[0]["data"] == [{"id": 1}, {"id": 2}]
    failures = {entry["driver"]: entry for entry in await read_logs(shop) if entry["event"] == "driver_load_failed"}
    assert set(BROKEN) <= set(failures)
    assert {entry["level"] for entry in failures.values()} == {"error"}
    assert "ModuleNotFoundError" in failures["brokenimport"]["error"]
    assert "the driver crashes when built" in failures["brokenbuild"]["error"]
    assert "[drivers.brokenoptions]" in failures["brokenoptions"]["error"]
    assert "connection_fields" in failures["brokenshape"]["error"]


@pytest.mark.parametrize("base_type", sorted(BROKEN))
async def test_adding_a_database_of_a_broken_driver_says_why(gateway: TestClient, base_type: str) -> None:
    """AddDatabase for a broken driver's base_type is 400 unsupported_base_type naming the failure and what is served."""
    parameters = database_parameters("broken", "anything", base_type=base_type)
    response = await gateway.put("/Database", params=parameters, headers=admin_headers())
    assert response.status == 400, await response.text()
    body = await error_of(response)
    assert body["error"] == "unsupported_base_type"
    assert "installed but failed to load" in body["message"] and "postgres" in body["message"], body


def test_options_the_driver_refuses_still_stop_the_gateway(tmp_path: Path) -> None:
    """A [drivers.<name>] table the operator wrote and the driver refuses is a configuration error, as before."""
    config = gateway_config(tmp_path / "data", drivers={"brokenoptions": {"colour": "blue"}})
    with pytest.raises(ConfigError, match=r"\[drivers\.brokenoptions\] is invalid: needs a 'path' option"):
        create_app(config, log_stream=CapturedLog())


async def test_an_unrelated_gateway_answers_its_description(make_gateway: GatewayFactory) -> None:
    """The API description lists only the drivers that loaded as base_type values."""
    client = await make_gateway()
    document = await (await client.get("/openapi.json")).json()
    assert "brokenbuild" not in str(document) and "postgres" in str(document)
