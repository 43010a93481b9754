"""Choosing and moving the registry: the setting registry_url, `dbgateway registry copy`, rotate-key on PostgreSQL."""

from __future__ import annotations

import asyncio
import datetime
import subprocess
import time
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from cryptography.fernet import Fernet
from support import (
    DISTINCTIVE_PASSWORD,
    GatewayFactory,
    admin_headers,
    dsn_under_test,
    free_port,
    grant,
    message_lines,
    read_logs,
    register_database,
    registry_path,
    rename_table,
    run_command,
    run_sql,
    success_of,
    table_data,
    wait_until,
)

from gateway.registry import GrantLimits, RegistryLoadError, RegistryState
from gateway.registry.file_format import load_registry
from gateway.registry.secrets_at_rest import PasswordCipher
from gateway.settings.config import ConfigError, load_config
from gateway.web.keys import REGISTRY

KEY = Fernet.generate_key().decode()


FOLLOW_DEADLINE_SECONDS = 30.0
"""How long a gateway on the registry database may take to follow a NOTIFY: a deadline, not a speed asserted."""

SHOP_SQL = "CREATE TABLE public.alpha (id integer); CREATE TABLE public.beta (id integer)"
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


def postgresql_url(database: str, password: str | None = None) -> str:
    server = dsn_under_test().rsplit("/", 1)[0]
    if password is not None:
        server = server.replace("postgres@", f"postgres:{password}@", 1)
    return f"{server}/{database}"


def copy(source: str, target: str, *options: str, key: str | None = KEY) -> subprocess.CompletedProcess[str]:
    settings = {"DBGATEWAY_SECRET_KEY": key} if key else {}
    return run_command("registry", "copy", f"--from={source}", f"--to={target}", *options, **settings)


def file_state(path: Path, key: str = KEY) -> RegistryState:
    return load_registry(path.read_bytes(), PasswordCipher(key))


def assert_one_line_refusal(result: subprocess.CompletedProcess[str], *expected: str) -> None:
    """Exit 2 with one line on stderr naming what is wrong; no traceback, nothing on stdout."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dbgateway registry copy: "), result.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    assert result.stdout == ""


async def furnished(make_gateway: GatewayFactory, shop_database: str, data_dir: Path | None = None) -> TestClient:
    """A file-registry gateway with "shop" (the distinctive password), a renamed table, a grant and a minted token."""
    client = await make_gateway(data_dir=data_dir, secret_key=KEY)
    await register_database(client, "shop", shop_database, password=DISTINCTIVE_PASSWORD)
    await success_of(
        await rename_table(client, {"table": {"local_table_name": "shop_public_alpha"}, "new_local_table_name": "a"})
    )
    # A narrowed grant (issue 22): the copy must carry its columns, row filter and expiry.
    await success_of(await client.post("/GrantTableAccess/", headers=admin_headers(), params={
        "user_token": "copied-reader-0123456", "local_table_name": "a", "columns": "id", "row_filter": "id > 0",
        "expires_at": "2999-01-01T00:00:00Z"}))
    await success_of(await client.put("/UserToken", headers=admin_headers()))
    return client


async def wait_until_following(database: str) -> None:
    """Return once a gateway's follower session on ``database`` has listened and checked the version."""
    sql = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = 'dbgateway registry'"
        " AND query LIKE 'SELECT version, CASE%%'"
    )
    deadline = time.monotonic() + 10.0
    while run_sql(None, sql, (database,))[0][0] == 0:
        assert time.monotonic() < deadline, "no gateway follows the registry database"
        await asyncio.sleep(0.02)


# -- dbgateway registry copy ------------------------------------------------------------------------------


async def test_copy_moves_a_registry_to_postgresql_and_back_exactly(
    make_gateway: GatewayFactory, shop_database: str, registry_database: str, tmp_path: Path
) -> None:
    """file -> PostgreSQL -> file gives the same registry; a gateway already on the database serves it (no restart)."""
    source = registry_path(await furnished(make_gateway, shop_database))
    url = postgresql_url(registry_database)
    follower = await make_gateway(data_dir=tmp_path / "follower", registry_url=url, secret_key=KEY)
    await wait_until_following(registry_database)

    there = await asyncio.to_thread(copy, f"file:{source}", url)
    assert there.returncode == 0, there.stderr
    assert there.stdout.splitlines() == [
        f"copied 1 database(s), 2 table(s), 1 grant(s) to 1 token(s) and 1 minted token(s) from file:{source} to "
        f"postgresql://postgres@{url.split('@', 1)[1]}; passwords encrypted with secret_key"
    ]
    async def served() -> bool:
        return (await table_data(follower, "copied-reader-0123456", local_table_name="a")).status == 200

    # Followed through NOTIFY: an event, awaited; the deadline only keeps a broken follower from hanging the run.
    await wait_until(served, FOLLOW_DEADLINE_SECONDS, "the gateway on the database serves the copy")
    assert follower.app[REGISTRY].state.database("shop").connection["password"] == DISTINCTIVE_PASSWORD

    back = tmp_path / "back" / "registry.json"
    result = copy(url, f"file:{back}")
    assert result.returncode == 0, result.stderr
    assert file_state(back) == file_state(source)
    assert list(file_state(back).grant_limits.values()) == [GrantLimits(
        columns=("id",), row_filter="id > 0", expires_at=datetime.datetime(2999, 1, 1, tzinfo=datetime.timezone.utc))]
    assert file_state(back).database("shop").connection["password"] == DISTINCTIVE_PASSWORD
    assert DISTINCTIVE_PASSWORD not in back.read_text() + there.stdout + result.stdout


def stored_state(url: str) -> RegistryState:
    """The registry at ``url`` (``file:PATH`` or a database of the test server), read directly."""
    if url.startswith("file:"):
        return file_state(Path(url.removeprefix("file:")))
    document = run_sql(url.rsplit("/", 1)[1], "SELECT document::text FROM dbgateway_registry.registry")[0][0]
    return load_registry(document.encode(), PasswordCipher(KEY))


@pytest.mark.parametrize("target_kind", ["file", "postgresql"])
async def test_copy_replaces_a_registry_with_content_only_with_force(
    make_gateway: GatewayFactory, shop_database: str, registry_database: str, tmp_path: Path, target_kind: str
) -> None:
    """A target holding databases, grants or minted tokens is refused (exit 2, unchanged) unless --force."""
    source = registry_path(await furnished(make_gateway, shop_database))
    other = await make_gateway(data_dir=tmp_path / "other", secret_key=KEY)
    await success_of(await other.put("/UserToken", headers=admin_headers()))
    target = f"file:{registry_path(other)}"
    if target_kind == "postgresql":
        target = postgresql_url(registry_database)
        assert copy(f"file:{registry_path(other)}", target).returncode == 0
    before = stored_state(target)
    assert len(before.minted_tokens) == 1

    refused = copy(f"file:{source}", target)
    assert_one_line_refusal(refused, "already holds a registry", "--force")
    assert stored_state(target) == before

    forced = copy(f"file:{source}", target, "--force")
    assert forced.returncode == 0, forced.stderr
    assert stored_state(target) == file_state(source)


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("file:{tmp}/missing.json", "file:{tmp}/out.json", "no such file"),
        ("file:{tmp}/same.json", "file:{tmp}/same.json", "the same registry"),
        ("mysql://root:{password}@host/db", "file:{tmp}/out.json", "--from"),
        ("file:{tmp}/missing.json", "postgresql://u:{password}@h/db?nonsense=1", "--to"),
        ("postgresql://postgres:{password}@127.0.0.1:{port}/registry", "file:{tmp}/out.json", "cannot be reached"),
    ],
    ids=["missing-source", "same", "unknown-scheme", "unreadable-url", "unreachable"],
)
def test_copy_errors_are_one_sentence_without_the_password(
    tmp_path: Path, source: str, target: str, expected: str
) -> None:
    """A copy that cannot be done exits 2 with one line saying why, never showing a URL's password."""
    values = {"tmp": tmp_path, "password": DISTINCTIVE_PASSWORD, "port": free_port()}
    result = copy(source.format(**values), target.format(**values))
    assert_one_line_refusal(result, expected)
    assert DISTINCTIVE_PASSWORD not in result.stderr
    assert not (tmp_path / "out.json").exists()


async def test_copy_to_postgresql_needs_a_secret_key(
    make_gateway: GatewayFactory, registry_database: str, tmp_path: Path
) -> None:
    """Without secret_key a PostgreSQL target is refused: its passwords would be stored in clear."""
    source = registry_path(await make_gateway())
    result = copy(f"file:{source}", postgresql_url(registry_database), key=None)
    assert_one_line_refusal(result, "secret_key")
    assert run_sql(registry_database, "SELECT to_regclass('dbgateway_registry.registry') IS NULL") == [(True,)]


# -- rotate-key on a PostgreSQL registry --------------------------------------------------------------------


async def test_rotate_key_re_encrypts_a_postgresql_registry(
    make_gateway: GatewayFactory, shop_database: str, registry_database: str, tmp_path: Path
) -> None:
    """rotate-key --registry-url re-seals the passwords in the database: the new key serves, the old one is refused."""
    url = postgresql_url(registry_database)
    client = await make_gateway(registry_url=url, secret_key=KEY)
    await register_database(client, "shop", shop_database, password=DISTINCTIVE_PASSWORD)
    await grant(client, "rotated-reader-0123456", "shop_public_alpha")
    new = Fernet.generate_key().decode()
    result = run_command("rotate-key", f"--registry-url={url}", f"--new-key={new}", DBGATEWAY_SECRET_KEY=KEY)
    assert result.returncode == 0, result.stderr
    assert "1 database password" in result.stdout and "registry database postgresql://" in result.stdout
    stored = run_sql(registry_database, "SELECT document #>> '{databases,0,secrets,password}' FROM dbgateway_registry.registry")
    assert Fernet(new).decrypt(stored[0][0].removeprefix("fernet:").encode()).decode() == DISTINCTIVE_PASSWORD
    with pytest.raises(RegistryLoadError) as refused:
        await make_gateway(data_dir=tmp_path / "old", registry_url=url, secret_key=KEY)
    assert "does not decrypt" in str(refused.value)
    renewed = await make_gateway(data_dir=tmp_path / "new", registry_url=url, secret_key=new)
    assert (await table_data(renewed, "rotated-reader-0123456", local_table_name="shop_public_alpha")).status == 200


# -- the setting registry_url --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"DBGATEWAY_REGISTRY_URL": f"mysql://root:{DISTINCTIVE_PASSWORD}@db/registry"}, "registry_url must be"),
        ({"DBGATEWAY_REGISTRY_URL": f"postgresql://:{DISTINCTIVE_PASSWORD}@/?x=1"}, "registry_url is not a URL"),
        ({"DBGATEWAY_REGISTRY_URL": "file:"}, "needs a path"),
        ({"DBGATEWAY_REGISTRY_URL": f"postgresql://u:{DISTINCTIVE_PASSWORD}@db/r"}, "needs secret_key"),
        (
            {"DBGATEWAY_REGISTRY_URL": "file:a.json", "DBGATEWAY_REGISTRY_FILE": "b.json"},
            "registry_file and registry_url name different registries",
        ),
        (
            {
                "DBGATEWAY_REGISTRY_URL": f"postgresql://u:{DISTINCTIVE_PASSWORD}@db/r",
                "DBGATEWAY_REGISTRY_FILE": "b.json",
                "DBGATEWAY_SECRET_KEY": KEY,
            },
            "registry_file and registry_url name different registries",
        ),
    ],
    ids=["scheme", "unparsable", "no-path", "no-key", "two-files", "file-and-database"],
)
def test_a_wrong_registry_url_stops_start_up_without_repeating_it(environment: dict[str, str], expected: str) -> None:
    """registry_url must be file:PATH or a PostgreSQL URL, agree with registry_file, and have a key for PostgreSQL."""
    with pytest.raises(ConfigError) as refused:
        load_config(environ=environment)
    assert expected in str(refused.value)
    assert DISTINCTIVE_PASSWORD not in str(refused.value)


def test_registry_url_file_names_the_same_file_as_registry_file(tmp_path: Path) -> None:
    """file:PATH and registry_file = PATH together are one registry, not a contradiction."""
    path = tmp_path / "r.json"
    config = load_config(environ={"DBGATEWAY_REGISTRY_URL": f"file:{path}", "DBGATEWAY_REGISTRY_FILE": str(path)})
    assert config.registry_path == path


async def test_a_file_registry_url_is_the_file_registry(make_gateway: GatewayFactory, tmp_path: Path) -> None:
    """registry_url = file:PATH keeps the registry in that file, not in the data folder."""
    path = tmp_path / "elsewhere" / "registry.json"
    client = await make_gateway(registry_url=f"file:{path}")
    await success_of(await client.put("/UserToken", headers=admin_headers()))
    assert len(file_state(path).minted_tokens) == 1
    assert not (tmp_path / "data" / "registry.json").exists()


async def test_the_registry_password_never_reaches_the_logs(
    make_gateway: GatewayFactory, registry_database: str
) -> None:
    """A password in registry_url is in no log line; the log names the registry by its URL without it."""
    url = postgresql_url(registry_database, password=DISTINCTIVE_PASSWORD)  # trust authentication ignores it
    client = await make_gateway(registry_url=url, secret_key=KEY)
    logged = str(await read_logs(client)) + client.log_stream.getvalue()  # type: ignore[attr-defined]
    assert DISTINCTIVE_PASSWORD not in logged
    created = [entry for entry in await read_logs(client) if entry["event"] == "gateway_created"]
    assert created[0]["registry"] == postgresql_url(registry_database)


def test_serve_without_its_registry_database_exits_1_without_the_password(tmp_path: Path) -> None:
    """An unreachable registry database stops serve with exit 1 (a restart may help) and one line, no password."""
    url = f"postgresql://postgres:{DISTINCTIVE_PASSWORD}@127.0.0.1:{free_port()}/registry"
    result = run_command(
        "serve", "--data-dir", str(tmp_path / "data"), "--port", str(free_port()),
        DBGATEWAY_REGISTRY_URL=url, DBGATEWAY_SECRET_KEY=KEY,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    (line,) = message_lines(result.stderr)
    assert line.startswith("dbgateway: ") and "cannot be reached" in line and "postgresql://postgres@127.0.0.1" in line
    assert DISTINCTIVE_PASSWORD not in result.stderr
