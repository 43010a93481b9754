"""The ``dbgateway`` command run as a real process: version, help, the admin token file, SIGTERM, start-up failures."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway import __version__
from support import (
    ADMIN_TOKEN,
    free_port,
    message_lines,
    run_command,
    start_gateway_process,
    stop_process,
    wait_until_listening,
)
from test_workers import STOP_DEADLINE_SECONDS



def list_databases(port: int, admin_token: str) -> tuple[int, object]:
    """GET /Database/list on a gateway process; (status, parsed body)."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/Database/list", headers={"admin_token": admin_token})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_version_prints_the_package_version() -> None:
    """`dbgateway --version` prints "dbgateway <version>" and exits 0."""
    result = run_command("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"dbgateway {__version__}"


def test_serve_help_mentions_every_option() -> None:
    """`dbgateway serve --help` documents --config, --host, --port and --data-dir."""
    result = run_command("serve", "--help")
    assert result.returncode == 0, result.stderr
    for option in ("--config", "--host", "--port", "--data-dir"):
        assert option in result.stdout


def test_no_command_is_a_usage_error() -> None:
    """`dbgateway` without a command exits non-zero with a usage message."""
    result = run_command()
    assert result.returncode != 0
    assert "usage" in result.stderr.lower()


def test_admin_token_is_generated_once_and_reused(tmp_path: Path, processes: list[subprocess.Popen[str]]) -> None:
    """Without a configured token, the first start writes <data>/admin_token (0600) and a second start reuses it."""
    data_dir = tmp_path / "data"
    token_file = data_dir / "admin_token"
    port = free_port()
    first = start_gateway_process(data_dir, port)
    processes.append(first)
    wait_until_listening(first, port)
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text().strip()
    assert len(token) >= 16
    assert list_databases(port, token) == (200, {"status": "success", "List": []})
    code, stderr = stop_process(first)
    assert code == 0, stderr
    assert token not in stderr
    assert "admin_token_generated" in stderr and str(token_file.resolve()) in stderr

    port = free_port()
    second = start_gateway_process(data_dir, port)
    processes.append(second)
    wait_until_listening(second, port)
    assert token_file.read_text().strip() == token
    assert list_databases(port, token)[0] == 200
    assert list_databases(port, token + "x")[0] == 403
    code, stderr = stop_process(second)
    assert code == 0, stderr
    assert "admin_token_generated" not in stderr


def test_configured_admin_token_is_used_and_no_file_is_written(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    """DBGATEWAY_ADMIN_TOKEN is the admin token; no admin_token file appears."""
    data_dir = tmp_path / "data"
    port = free_port()
    token = "configured-admin-token-4711"
    process = start_gateway_process(data_dir, port, DBGATEWAY_ADMIN_TOKEN=token)
    processes.append(process)
    wait_until_listening(process, port)
    assert list_databases(port, token)[0] == 200
    assert not (data_dir / "admin_token").exists()
    code, stderr = stop_process(process)
    assert code == 0, stderr
    assert token not in stderr


def test_sigterm_stops_the_gateway_promptly_with_exit_code_0(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    """SIGTERM makes `dbgateway serve` exit 0 within what its settings allow (shutdown_timeout and kill margin)."""
    port = free_port()
    process = start_gateway_process(tmp_path / "data", port)
    processes.append(process)
    wait_until_listening(process, port)
    code, stderr = stop_process(process, timeout=STOP_DEADLINE_SECONDS)
    assert code == 0, stderr


def test_corrupt_registry_stops_serve_and_is_left_unchanged(tmp_path: Path) -> None:
    """A registry file that does not parse stops serve in one line naming the file (exit 2); it stays byte-for-byte."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    registry = data_dir / "registry.json"
    content = b'{"format_version": 1, "token_salt": "ab", "databa'
    registry.write_bytes(content)
    result = run_command("serve", "--data-dir", str(data_dir), "--port", str(free_port()), cwd=tmp_path)
    assert_one_line_and_exit_2(result, str(registry))
    assert registry.read_bytes() == content


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("DBGATEWAY_LISTEN_PORT", "abc", "listen_port"),
        ("DBGATEWAY_LISTEN_PORT", "70000", "listen_port"),
        ("DBGATEWAY_ROW_LIMIT", "-5", "row_limit"),
    ],
)
def test_invalid_setting_stops_serve_naming_it(tmp_path: Path, variable: str, value: str, named: str) -> None:
    """A setting that does not parse makes serve exit non-zero naming it, before listening (unknown variables:
    test_console.py)."""
    result = run_command("serve", "--data-dir", str(tmp_path / "data"), cwd=tmp_path, **{variable: value})
    assert result.returncode != 0
    assert named in result.stderr
    assert "Traceback" not in result.stderr


# -- start-up failures: one sentence on stderr, exit status 2, nothing claims to listen ---------------------------


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """``folder``, created and made unwritable for this process (root: the immutable attribute, else mode 0555)."""
    folder.mkdir(parents=True)
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.skip("running as root without chattr +i: cannot make a folder read-only for this process")
        undo = ["chattr", "-i", str(folder)]
    else:
        folder.chmod(0o555)
        undo = ["chmod", "0755", str(folder)]
    try:
        yield folder
    finally:
        subprocess.run(undo, check=True)


def assert_one_line_and_exit_2(result: subprocess.CompletedProcess[str], *named: str) -> None:
    """Exit status 2 and exactly one stderr line (besides log entries), "dbgateway: ..." naming each of ``named``;
    no traceback."""
    lines = message_lines(result.stderr)
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("dbgateway: "), result.stderr
    for text in named:
        assert text in lines[0]
    assert "gateway_listening" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_taken_port_is_one_line_and_exit_2(tmp_path: Path, workers: str) -> None:
    """Port already in use (one process or several workers): one sentence naming the address, exit 2."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = str(squatter.getsockname()[1])
        result = run_command(
            "serve", "--data-dir", str(tmp_path / "data"), "--port", port, cwd=tmp_path,
            DBGATEWAY_WORKERS=workers, DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN,
        )  # fmt: skip
    assert_one_line_and_exit_2(result, f"127.0.0.1:{port}", "already in use")


def test_an_address_that_does_not_resolve_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A listen_host that does not resolve: one sentence naming it, exit 2."""
    result = run_command(
        "serve", "--data-dir", str(tmp_path / "data"), "--host", "no-such-host.invalid", "--port", str(free_port()),
        cwd=tmp_path, DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN,
    )  # fmt: skip
    assert_one_line_and_exit_2(result, "no-such-host.invalid", "does not resolve")


def test_a_data_folder_that_cannot_be_created_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A data folder under a regular file: one sentence naming the folder, exit 2."""
    (tmp_path / "a-file").write_text("not a folder")
    data_dir = tmp_path / "a-file" / "data"
    result = run_command("serve", "--data-dir", str(data_dir), "--port", str(free_port()), cwd=tmp_path)
    assert_one_line_and_exit_2(result, str(data_dir), "cannot be created")


def test_a_read_only_data_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A data folder this process cannot write in: one sentence naming the folder, exit 2, nothing written."""
    with read_only_folder(tmp_path / "data") as data_dir:
        result = run_command("serve", "--data-dir", str(data_dir), "--port", str(free_port()), cwd=tmp_path)
        assert list(data_dir.iterdir()) == []
    assert_one_line_and_exit_2(result, str(data_dir), "not writable")


def test_an_audit_file_that_cannot_be_opened_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """audit_file in a folder that does not exist: one sentence naming the setting and the file, exit 2."""
    audit_file = tmp_path / "no-such-folder" / "audit.jsonl"
    result = run_command(
        "serve", "--data-dir", str(tmp_path / "data"), "--port", str(free_port()), cwd=tmp_path,
        DBGATEWAY_AUDIT_FILE=str(audit_file), DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN,
    )  # fmt: skip
    assert_one_line_and_exit_2(result, "audit_file", str(audit_file))
