"""What docs/operations.md promises an operator: every setting listed as the code has it, and GetData behind nginx."""

from __future__ import annotations

import asyncio
import re
import tomllib
import urllib.parse
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest
from aiohttp.test_utils import TestClient

from drivers.postgres import OPTION_NAMES, PostgresDriver
from drivers.postgres.guard.policy import GuardLimits
from gateway.settings.config import ENV_PREFIX, GatewayConfig
from support import create_database, drop_database, grant, register_database

OPERATIONS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "operations.md"
EXAMPLE_CONFIG = Path(__file__).resolve().parent.parent / "config" / "gateway.example.toml"
CONFIG_FILE_ONLY = {"drivers"}
"""Settings with no environment variable (tables of options)."""


def settings_table() -> dict[str, list[str]]:
    """The rows of the page's settings table: setting name to its cells (backticks removed)."""
    section = OPERATIONS_PAGE.read_text(encoding="utf-8").split("## Every setting", 1)[1]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip().replace("`", "") for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            rows[cells[0]] = cells[1:]
    return rows


def shown_default(field: attrs.Attribute[Any]) -> str:
    """How the table writes a field's default: TOML-like, ``unset`` for None."""
    default = field.default
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        return "none"
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, Path):
        return f"./{default}"
    return str(default)


def test_every_setting_is_in_the_operations_table() -> None:
    """The table lists exactly GatewayConfig's fields."""
    assert set(settings_table()) == {field.name for field in attrs.fields(GatewayConfig)}


@pytest.mark.parametrize("field", attrs.fields(GatewayConfig), ids=lambda field: field.name)
def test_setting_row_names_its_variable_and_default(field: attrs.Attribute[Any]) -> None:
    """Each row names the DBGATEWAY_ variable the code reads and the code's default."""
    variable, default, meaning = settings_table()[field.name]
    if field.name in CONFIG_FILE_ONLY:
        assert variable.startswith("—")
    else:
        assert variable == ENV_PREFIX + field.name.upper()
    assert default.split(":")[0] == shown_default(field)
    assert meaning


def example_settings() -> dict[str, str]:
    """config/gateway.example.toml's top-level settings, set or commented out (``# name = value``), with their lines."""
    found: dict[str, str] = {}
    for line in EXAMPLE_CONFIG.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            break  # the tables of options ([drivers.postgres]) come last
        match = re.match(r"^#? ?(\w+) = ", line)
        if match:
            found[match.group(1)] = line
    return found


def test_example_config_names_every_setting_at_its_default() -> None:
    """config/gateway.example.toml shows every GatewayConfig field but the drivers' tables, each set to the code's
    default or, when that default is unset (or a secret), commented out; the drivers' options are a table."""
    fields = attrs.fields_dict(GatewayConfig)
    shown = example_settings()
    assert set(shown) == set(fields) - CONFIG_FILE_ONLY
    settings = tomllib.loads(EXAMPLE_CONFIG.read_text(encoding="utf-8"))
    assert set(settings) == {name for name, line in shown.items() if not line.startswith("#")} | CONFIG_FILE_ONLY
    for name, value in settings.items():
        if name not in CONFIG_FILE_ONLY:
            assert (str(value).lower() if isinstance(value, bool) else str(value)) == shown_default(fields[name]), name
    assert set(settings["drivers"]) == {"postgres"}


def driver_options_table() -> dict[str, list[str]]:
    """The rows of the page's ``[drivers.postgres]`` table: option name to its cells (backticks removed)."""
    section = OPERATIONS_PAGE.read_text(encoding="utf-8").split("Options of the PostgreSQL driver", 1)[1]
    rows: dict[str, list[str]] = {}
    for line in section.split("\n\n", 2)[1].splitlines():
        cells = [cell.strip().replace("`", "") for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `"):
            rows[cells[0]] = cells[1:]
    return rows


def test_driver_options_table_and_example_config_follow_the_code() -> None:
    """docs/operations.md lists every [drivers.postgres] option with the code's default, and
    config/gateway.example.toml sets each to that default."""
    limits = GuardLimits()
    table = driver_options_table()
    assert set(table) == set(OPTION_NAMES)
    for name in attrs.fields_dict(GuardLimits):
        assert table[name][0].split(" ")[0] == str(getattr(limits, name)), name
    example = tomllib.loads(EXAMPLE_CONFIG.read_text(encoding="utf-8"))["drivers"]["postgres"]
    assert set(example) == set(OPTION_NAMES)
    assert PostgresDriver(example).guard_options.limits == limits


BIG_TABLE_SQL = "CREATE TABLE public.big AS SELECT g AS id, repeat('x', 100) AS pad FROM generate_series(1, 4000) AS g"


async def http_1_0_get(client: TestClient, target: str, headers: dict[str, str]) -> tuple[str, bytes]:
    """Status line and body of an HTTP/1.0 GET, as nginx sends by default (proxy_http_version 1.0)."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    lines = [f"GET {target} HTTP/1.0", f"Host: {client.host}", *(f"{name}: {value}" for name, value in headers.items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    response = await asyncio.wait_for(reader.read(), timeout=30)
    writer.close()
    head, _, body = response.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0].decode(), body


async def test_streamed_getdata_answer_reaches_an_http_1_0_proxy(gateway: TestClient) -> None:
    """A GetData result too large for one body streams whole to an HTTP/1.0 client, ending with the connection."""
    database = create_database(BIG_TABLE_SQL)
    try:
        await register_database(gateway, "shop", database)
        await grant(gateway, "proxy-user-token-0001", "shop_public_big")
        query = urllib.parse.urlencode({"local_database_name": "shop", "query": "SELECT * FROM public.big ORDER BY id"})
        status, body = await http_1_0_get(gateway, f"/GetData?{query}", {"User-Token": "proxy-user-token-0001"})
    finally:
        drop_database(database)
    assert status == "HTTP/1.0 200 OK", body[:300]
    assert len(body) > 256 * 1024  # past the single-body size: this answer was streamed
    answer = orjson.loads(body)
    assert answer[0]["row_count"] == 4000 and answer[0]["data"][-1]["id"] == 4000
