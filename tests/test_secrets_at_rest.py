"""Database passwords at rest: encrypted with secret_key, refused without the right key, rotated by the CLI."""

from __future__ import annotations

import base64
import json
import secrets
import subprocess
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from cryptography.fernet import Fernet, InvalidToken

from gateway.settings.config import ConfigError, load_config
from gateway.web.keys import REGISTRY
from gateway.registry import RegistryLoadError
from support import (
    DISTINCTIVE_PASSWORD,
    admin_headers,
    GatewayFactory,
    grant,
    read_logs,
    register_database,
    registry_path,
    run_command,
    success_of,
    table_data,
)


SHOP_SQL = "CREATE TABLE public.t (id integer)"
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


def new_key() -> str:
    return Fernet.generate_key().decode()


def stored_password(path: Path) -> str:
    """The password of the only database, as the registry file spells it."""
    return json.loads(path.read_text())["databases"][0]["secrets"]["password"]


def rotate(tmp_path: Path, *arguments: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """``dbgateway rotate-key`` on the registry of ``tmp_path/data`` (the make_gateway fixture's folder)."""
    return run_command("rotate-key", "--data-dir", str(tmp_path / "data"), *arguments, **settings)


async def registered_with_key(make_gateway: GatewayFactory, shop_database: str, key: str | None) -> TestClient:
    """A gateway (with ``key`` as secret_key) where "shop" is registered with the distinctive password."""
    client = await make_gateway(**({"secret_key": key} if key else {}))
    await register_database(client, "shop", shop_database, password=DISTINCTIVE_PASSWORD)
    return client


async def serves_shop(client: TestClient) -> bool:
    """True when the gateway knows "shop" with its password and reaches it."""
    await grant(client, "reader-token-0001", "shop_public_t")
    response = await table_data(client, "reader-token-0001", local_table_name="shop_public_t")
    return response.status == 200 and client.app[REGISTRY].state.database("shop").connection["password"] == DISTINCTIVE_PASSWORD


# -- with a key -----------------------------------------------------------------------------------------


async def test_with_a_key_the_file_holds_only_the_encrypted_password(
    make_gateway: GatewayFactory, shop_database: str
) -> None:
    """The file spells the password fernet:<token> that decrypts with the key; the clear password is not in it."""
    key = new_key()
    client = await registered_with_key(make_gateway, shop_database, key)
    content = registry_path(client).read_text()
    assert DISTINCTIVE_PASSWORD not in content
    stored = stored_password(registry_path(client))
    assert stored.startswith("fernet:")
    assert Fernet(key).decrypt(stored.removeprefix("fernet:").encode()).decode() == DISTINCTIVE_PASSWORD


async def test_a_restart_with_the_key_serves(make_gateway: GatewayFactory, shop_database: str) -> None:
    """A gateway started again with the same key decrypts the password and serves the database."""
    key = new_key()
    await registered_with_key(make_gateway, shop_database, key)
    assert await serves_shop(await make_gateway(secret_key=key))


async def test_a_restart_without_the_key_refuses(make_gateway: GatewayFactory, shop_database: str) -> None:
    """Start-up without a key stops with RegistryLoadError naming the file and the setting; the file is kept."""
    client = await registered_with_key(make_gateway, shop_database, new_key())
    path = registry_path(client)
    content = path.read_bytes()
    with pytest.raises(RegistryLoadError) as refused:
        await make_gateway()
    assert str(path) in str(refused.value) and "secret_key" in str(refused.value) and "'shop'" in str(refused.value)
    assert path.read_bytes() == content


async def test_a_restart_with_another_key_refuses(make_gateway: GatewayFactory, shop_database: str) -> None:
    """Start-up with a key that did not encrypt the file stops with RegistryLoadError; the file is kept."""
    client = await registered_with_key(make_gateway, shop_database, new_key())
    path = registry_path(client)
    content = path.read_bytes()
    with pytest.raises(RegistryLoadError) as refused:
        await make_gateway(secret_key=new_key())
    assert str(path) in str(refused.value) and "does not decrypt" in str(refused.value)
    assert path.read_bytes() == content


async def test_clear_passwords_are_encrypted_by_the_next_write_once_a_key_is_set(
    make_gateway: GatewayFactory, shop_database: str
) -> None:
    """A file with clear passwords loads with a key configured, and the next change writes them encrypted."""
    client = await registered_with_key(make_gateway, shop_database, None)
    path = registry_path(client)
    assert stored_password(path) == DISTINCTIVE_PASSWORD
    key = new_key()
    keyed = await make_gateway(secret_key=key)
    assert stored_password(path) == DISTINCTIVE_PASSWORD
    assert await serves_shop(keyed)  # granting writes the file
    assert stored_password(path).startswith("fernet:")
    assert DISTINCTIVE_PASSWORD not in path.read_text()


async def test_the_key_and_passwords_never_reach_the_logs(make_gateway: GatewayFactory, shop_database: str) -> None:
    """Neither the secret key nor the password appears in the log buffer or on stderr."""
    key = new_key()
    client = await registered_with_key(make_gateway, shop_database, key)
    logged = json.dumps(await read_logs(client)) + client.log_stream.getvalue()  # type: ignore[attr-defined]
    assert key not in logged and DISTINCTIVE_PASSWORD not in logged


# -- without a key --------------------------------------------------------------------------------------


async def test_without_a_key_start_up_warns_that_passwords_are_in_clear(gateway: TestClient) -> None:
    """The warning passwords_stored_in_clear names the registry file."""
    warnings = [e for e in await read_logs(gateway, level="warning") if e["event"] == "passwords_stored_in_clear"]
    assert len(warnings) == 1
    assert warnings[0]["path"] == str(registry_path(gateway).resolve())


async def test_with_a_key_there_is_no_clear_text_warning(make_gateway: GatewayFactory) -> None:
    """A gateway with secret_key does not log passwords_stored_in_clear."""
    client = await make_gateway(secret_key=new_key())
    assert not [e for e in await read_logs(client) if e["event"] == "passwords_stored_in_clear"]


async def test_a_clear_password_that_looks_encrypted_survives_a_restart(
    make_gateway: GatewayFactory, shop_database: str
) -> None:
    """Without a key, a password beginning with "fernet:" is stored so that it is not taken for an encrypted one."""
    client = await make_gateway()
    await register_database(client, "shop", shop_database, password="fernet:not-encrypted")
    assert stored_password(registry_path(client)) == "clear:fernet:not-encrypted"
    restarted = await make_gateway()
    assert restarted.app[REGISTRY].state.database("shop").connection["password"] == "fernet:not-encrypted"


# -- the secret_key setting -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["not-a-key", "A" * 43, Fernet.generate_key().decode()[:-2]])
def test_a_malformed_key_stops_start_up_naming_the_setting(tmp_path: Path, value: str) -> None:
    """A secret_key that is not a Fernet key is a ConfigError naming secret_key and not repeating the value."""
    with pytest.raises(ConfigError) as refused:
        load_config(environ={"DBGATEWAY_SECRET_KEY": value, "DBGATEWAY_DATA_DIR": str(tmp_path)})
    assert "secret_key" in str(refused.value) and value not in str(refused.value)


def test_the_key_is_read_from_the_environment_and_never_shown(tmp_path: Path) -> None:
    """DBGATEWAY_SECRET_KEY sets secret_key, and the config's repr does not show it."""
    key = new_key()
    config = load_config(environ={"DBGATEWAY_SECRET_KEY": key})
    assert config.secret_key == key and key not in repr(config)


# -- dbgateway generate-key and rotate-key --------------------------------------------------------------


def test_generate_key_prints_a_new_fernet_key() -> None:
    """`dbgateway generate-key` prints a valid Fernet key, another one each time."""
    first, second = (run_command("generate-key") for _ in range(2))
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    keys = [first.stdout.strip(), second.stdout.strip()]
    for key in keys:
        Fernet(key)
    assert keys[0] != keys[1]


async def test_rotate_key_re_encrypts_under_the_new_key(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
) -> None:
    """After rotate-key (old key from DBGATEWAY_SECRET_KEY) the file opens with the new key only."""
    old, new = new_key(), new_key()
    client = await registered_with_key(make_gateway, shop_database, old)
    path = registry_path(client)
    before = path.read_bytes()
    result = rotate(tmp_path, f"--new-key={new}", DBGATEWAY_SECRET_KEY=old)
    assert result.returncode == 0, result.stderr
    assert "1 database password" in result.stdout
    assert path.read_bytes() != before
    stored = stored_password(path).removeprefix("fernet:").encode()
    assert Fernet(new).decrypt(stored).decode() == DISTINCTIVE_PASSWORD
    with pytest.raises(InvalidToken):
        Fernet(old).decrypt(stored)
    with pytest.raises(RegistryLoadError):
        await make_gateway(secret_key=old)
    assert await serves_shop(await make_gateway(secret_key=new))


async def test_rotate_key_takes_the_old_key_as_an_option(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
) -> None:
    """--old-key opens the file when no key is configured."""
    old, new = new_key(), new_key()
    await registered_with_key(make_gateway, shop_database, old)
    result = rotate(tmp_path, f"--old-key={old}", f"--new-key={new}")
    assert result.returncode == 0, result.stderr
    assert await serves_shop(await make_gateway(secret_key=new))


async def test_rotate_key_encrypts_a_clear_file(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
) -> None:
    """Without any old key, a file of clear passwords is simply encrypted under the new key."""
    client = await registered_with_key(make_gateway, shop_database, None)
    new = new_key()
    result = rotate(tmp_path, f"--new-key={new}")
    assert result.returncode == 0, result.stderr
    assert DISTINCTIVE_PASSWORD not in registry_path(client).read_text()
    assert await serves_shop(await make_gateway(secret_key=new))


@pytest.mark.parametrize("old_key_given", ["wrong", "none"])
async def test_rotate_key_with_a_wrong_or_missing_old_key_changes_nothing(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path, old_key_given: str
) -> None:
    """A wrong (or absent) old key exits non-zero with a clear message and leaves the file as it was."""
    client = await registered_with_key(make_gateway, shop_database, new_key())
    path = registry_path(client)
    before = path.read_bytes()
    old_key = [f"--old-key={new_key()}"] if old_key_given == "wrong" else []
    result = rotate(tmp_path, *old_key, f"--new-key={new_key()}")
    assert result.returncode != 0
    assert str(path) in result.stderr
    assert ("does not decrypt" if old_key_given == "wrong" else "--old-key") in result.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("arguments", [["--new-key=short"], [f"--new-key={new_key()}", "--old-key=x"]])
async def test_rotate_key_refuses_a_malformed_key(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path, arguments: list[str]
) -> None:
    """A new or old key that is not a Fernet key exits non-zero naming the option; the file is kept."""
    client = await registered_with_key(make_gateway, shop_database, None)
    before = registry_path(client).read_bytes()
    result = rotate(tmp_path, *arguments)
    assert result.returncode != 0
    assert ("--old-key" if "--old-key=x" in arguments else "--new-key") in result.stderr
    assert registry_path(client).read_bytes() == before


async def test_rotate_key_accepts_a_key_beginning_with_a_dash(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
) -> None:
    """A key whose base64 text begins with "-" is a valid key, given as --new-key=KEY."""
    dashed = base64.urlsafe_b64encode(b"\xf8" + secrets.token_bytes(31)).decode()
    assert dashed.startswith("-")
    await registered_with_key(make_gateway, shop_database, None)
    result = rotate(tmp_path, f"--new-key={dashed}")
    assert result.returncode == 0, result.stderr
    assert await serves_shop(await make_gateway(secret_key=dashed))


def test_rotate_key_without_a_registry_file_fails(tmp_path: Path) -> None:
    """rotate-key on a folder without registry.json exits non-zero and creates nothing."""
    result = run_command("rotate-key", "--data-dir", str(tmp_path / "empty"), f"--new-key={new_key()}")
    assert result.returncode != 0 and "no such file" in result.stderr
    assert not (tmp_path / "empty").exists()


async def test_a_served_database_survives_rotation_and_restart(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
) -> None:
    """Grants and local names are untouched by a rotation: the restarted gateway answers as before."""
    old, new = new_key(), new_key()
    client = await registered_with_key(make_gateway, shop_database, old)
    await grant(client, "reader-token-0001", "shop_public_t")
    result = rotate(tmp_path, f"--new-key={new}", DBGATEWAY_SECRET_KEY=old)
    assert result.returncode == 0, result.stderr
    restarted = await make_gateway(secret_key=new)
    assert (await table_data(restarted, "reader-token-0001", local_table_name="shop_public_t")).status == 200
    listed = await success_of(await restarted.get("/Database/list", headers=admin_headers()))
    assert listed["List"] == ["shop"]


async def test_a_running_gateway_never_overwrites_a_rotated_file(
    make_gateway: GatewayFactory, shop_database: str, tmp_path: Path
) -> None:
    """A gateway still holding the old key keeps reading, but its next change fails and the file stays rotated."""
    old, new = new_key(), new_key()
    client = await registered_with_key(make_gateway, shop_database, old)
    result = rotate(tmp_path, f"--new-key={new}", DBGATEWAY_SECRET_KEY=old)
    assert result.returncode == 0, result.stderr
    rotated = registry_path(client).read_bytes()
    listed = await success_of(await client.get("/Database/list", headers=admin_headers()))
    assert listed["List"] == ["shop"]
    response = await client.post(
        "/GrantTableAccess/",
        params={"user_token": "reader-token-0001", "local_table_name": "shop_public_t"},
        headers=admin_headers(),
    )
    assert response.status == 500
    assert registry_path(client).read_bytes() == rotated
