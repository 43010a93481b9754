"""Faults a restart cannot fix say so: exit status 2 and one sentence, and a 507 names its real cause.

Issue 20: a registry URL naming a missing database or role exited 1, which
systemd's ``Restart=on-failure`` restarts in a loop (exit 2 is configuration,
``RestartPreventExitStatus=2``); and a registry write on a read-only file system
answered 507 telling the administrator to free space.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from support import (
    DISTINCTIVE_PASSWORD,
    GatewayFactory,
    admin_headers,
    database_from,
    dsn_under_test,
    error_of,
    free_port,
    message_lines,
    run_command,
)

KEY = Fernet.generate_key().decode()


def registry_url(*, user: str = "postgres", database: str) -> str:
    """A URL on the test server for ``user`` and ``database``, with a password trust authentication ignores."""
    server = dsn_under_test().split("@", 1)[1].rsplit("/", 1)[0]
    return f"postgresql://{user}:{DISTINCTIVE_PASSWORD}@{server}/{database}"


def serve(tmp_path: Path, url: str) -> subprocess.CompletedProcess[str]:
    return run_command(
        "serve", "--data-dir", str(tmp_path / "data"), "--port", str(free_port()),
        DBGATEWAY_REGISTRY_URL=url, DBGATEWAY_SECRET_KEY=KEY,
    )  # fmt: skip


def assert_refused_with_exit_2(result: subprocess.CompletedProcess[str], *named: str) -> None:
    lines = message_lines(result.stderr)
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("dbgateway: "), result.stderr
    assert "refused" in lines[0] and "registry_url" in lines[0], lines[0]
    for text in named:
        assert text in lines[0], lines[0]
    assert DISTINCTIVE_PASSWORD not in result.stderr and "Traceback" not in result.stderr


def test_a_registry_url_naming_a_missing_database_is_exit_2(tmp_path: Path) -> None:
    result = serve(tmp_path, registry_url(database="dbgateway_no_such_registry_7f1a"))
    assert_refused_with_exit_2(result, 'database "dbgateway_no_such_registry_7f1a" does not exist')


def test_a_registry_url_naming_a_missing_role_is_exit_2(tmp_path: Path) -> None:
    with database_from() as registry:
        result = serve(tmp_path, registry_url(user="dbgateway_no_such_role_7f1a", database=registry))
    assert_refused_with_exit_2(result, 'role "dbgateway_no_such_role_7f1a" does not exist')


# -- a read-only file system under the registry ---------------------------------------------------------


@contextlib.contextmanager
def small_file_system(folder: Path) -> Iterator[Path]:
    """A tmpfs of its own at ``folder`` (root and CAP_SYS_ADMIN), unmounted after the block."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def remount(folder: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(folder)], check=True, capture_output=True)


async def test_a_read_only_file_system_is_named_as_such_not_as_a_full_disk(
    make_gateway: GatewayFactory, tmp_path: Path
) -> None:
    """A registry change on a file system remounted read-only: 507 saying read-only (not free space), then back."""
    with small_file_system(tmp_path / "disk") as disk:
        client = await make_gateway(disk / "data")
        assert (await client.put("/UserToken", headers=admin_headers())).status == 200
        remount(disk, "ro")
        try:
            response = await client.put("/UserToken", headers=admin_headers())
            assert response.status == 507
            message = (await error_of(response))["message"]
            assert "read-only" in message and "remount it read-write" in message, message
            assert "free space" not in message, message
            ready = await (await client.get("/readyz")).json()
            assert ready["registry"] == "unwritable"
        finally:
            remount(disk, "rw")
        assert (await client.put("/UserToken", headers=admin_headers())).status == 200
        await client.close()  # before the file system goes away
