"""What a person at the console sees: the banner, readable logs, ``dbgateway config``, unknown variables.

Every test runs ``dbgateway`` as a real process (the banner on a pseudo-terminal), as ``make run`` does.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

from gateway import __version__
from support import (
    ADMIN_TOKEN,
    call_process,
    free_port,
    gateway_command,
    process_environment,
    run_command,
    start_gateway_process,
    stop_process,
    wait_until_listening,
)

COLOURS = re.compile(r"\x1b\[[0-9;]*m")
"""Terminal colour codes, which the console renderer uses on a terminal."""


def settings_shown(output: str) -> dict[str, tuple[str, str]]:
    """``dbgateway config``'s table: setting name to (value, source)."""
    rows: dict[str, tuple[str, str]] = {}
    for line in output.splitlines()[1:]:
        name, rest = line.split(maxsplit=1)
        value, source = rest.split("  ", 1) if "  " in rest else (rest, "")
        rows[name] = (value.strip(), source.strip())
    return rows


# -- dbgateway config -------------------------------------------------------------------------------------


def test_config_shows_each_setting_with_its_source(tmp_path: Path) -> None:
    """Default, file, environment and option each named; secrets shown as [set], never their value."""
    secret = "file-admin-token-0123456789"
    settings_file = tmp_path / "gateway.toml"
    settings_file.write_text(f'row_limit = 500\nadmin_token = "{secret}"\nlog_level = "WARNING"\n', encoding="utf-8")
    result = run_command(
        "config", "--config", str(settings_file), "--port", "9100", "--workers", "3",
        cwd=tmp_path, DBGATEWAY_STATEMENT_TIMEOUT="7.5", DBGATEWAY_LOG_LEVEL="Debug",
    )
    assert result.returncode == 0, result.stderr
    shown = settings_shown(result.stdout)
    assert shown["row_limit"] == ("500", f"file {settings_file}")
    assert shown["statement_timeout"] == ("7.5", "environment DBGATEWAY_STATEMENT_TIMEOUT")
    assert shown["log_level"] == ('"debug"', "environment DBGATEWAY_LOG_LEVEL")  # any case; the variable wins
    assert shown["listen_port"] == ("9100", "option --port")
    assert shown["workers"] == ("3", "option --workers")
    assert shown["acquire_timeout"] == ("5.0", "default")
    assert shown["admin_token"] == ("[set]", f"file {settings_file}")
    assert shown["secret_key"] == ("(unset)", "default")
    assert secret not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ("statement_timeout = true", "statement_timeout"),
        ('row_limit = "100"', "row_limit"),
        ("audit_query_text = 1", "audit_query_text"),
        ('log_level = "verbose"', "log_level"),
        ("no_such_setting = 1", "no_such_setting"),
        ('[drivers.postgres]\nallow_function = ["lower"]', "allow_function"),  # a misspelt driver option
    ],
)
def test_config_refuses_a_wrong_value_with_one_sentence_and_exit_2(tmp_path: Path, content: str, named: str) -> None:
    """A value of the wrong type is refused, not coerced; the message is one plain sentence naming the setting."""
    settings_file = tmp_path / "gateway.toml"
    settings_file.write_text(content + "\n", encoding="utf-8")
    for command in ("config", "serve"):
        result = run_command(command, "--config", str(settings_file), "--port", str(free_port()), cwd=tmp_path)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, result.stderr
        assert len(lines) == 1 and lines[0].startswith("dbgateway: ") and named in lines[0], result.stderr
        assert "Attribute(" not in lines[0] and "Traceback" not in result.stderr  # no attrs internals


def test_log_level_option_is_read_in_any_case(tmp_path: Path) -> None:
    """--log-level WARNING is warning; --log-level loud is one sentence listing the levels."""
    assert settings_shown(run_command("config", "--log-level", "WARNING", cwd=tmp_path).stdout)["log_level"] == (
        '"warning"', "option --log-level"
    )
    wrong = run_command("config", "--log-level", "loud", cwd=tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == (
        "dbgateway: invalid configuration: log_level must be one of debug, info, warning, error, not 'loud'"
    )


# -- variables the gateway does not own ------------------------------------------------------------------


def test_variables_the_gateway_does_not_own_do_not_stop_it(tmp_path: Path) -> None:
    """DBGATEWAY_BENCH_DSN (the benchmark's) passes silently; a misspelt setting is a warning, not a refusal."""
    port = free_port()
    process = start_gateway_process(
        tmp_path / "data", port,
        DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN,
        DBGATEWAY_BENCH_DSN="postgresql://postgres@127.0.0.1:5432/bench",
        DBGATEWAY_LISTEN_PROT="9000",
    )
    try:
        wait_until_listening(process, port)
        assert call_process(port, "GET", "/healthz")[0] == 200
    finally:
        code, stderr = stop_process(process)
    assert code == 0, stderr
    entries = [json.loads(line) for line in stderr.splitlines()]
    warnings = [entry for entry in entries if entry["event"] == "config_warning"]
    assert [entry["message"] for entry in warnings] == [
        "environment variable DBGATEWAY_LISTEN_PROT is no setting and is ignored"
        " (did you mean DBGATEWAY_LISTEN_PORT?)"
    ]
    assert "BENCH_DSN" not in stderr
    listening = next(entry for entry in entries if entry["event"] == "gateway_listening")
    assert "config_warning" in listening["warnings"]


# -- the banner and the log format -----------------------------------------------------------------------


def read_terminal_until(descriptor: int, wanted: str, seconds: float = 20.0) -> str:
    """What the process wrote to the pseudo-terminal, up to and including ``wanted`` (or the deadline)."""
    seen = ""
    deadline = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([descriptor], [], [], 0.2)
        if ready:
            try:
                seen += os.read(descriptor, 65536).decode(errors="replace")
            except OSError:
                break  # the process closed the terminal
    return seen


AARDVARK_DRIVER = """
from drivers.postgres import CONNECTION_FIELDS
from gateway.errors import DatabaseUnavailable


class AardvarkDriver:
    base_type = "aardvark"
    connection_fields = CONNECTION_FIELDS

    def __init__(self, options=None):
        pass

    def open_pool(self, connection, limits, logger):
        raise DatabaseUnavailable("the aardvark driver serves no database")
"""


def with_a_driver_named_aardvark(tmp_path: Path) -> dict[str, str]:
    """PYTHONPATH for a process that finds one more driver, ``aardvark``, which sorts before postgres.

    The banner must not be read as if postgres were the first (or only) driver: a test that expected
    ``drivers        postgres`` failed once such a driver was installed (issue 20).
    """
    folder = tmp_path / "aardvark"
    metadata = folder / "aardvark_driver-0.1.dist-info"
    metadata.mkdir(parents=True)
    (folder / "aardvark_driver.py").write_text(AARDVARK_DRIVER)
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: aardvark-driver\nVersion: 0.1\n")
    (metadata / "entry_points.txt").write_text("[dbgateway.drivers]\naardvark = aardvark_driver:AardvarkDriver\n")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}


def banner_drivers(banner: str) -> list[str]:
    """The names on the banner's drivers line, in its order."""
    line = next(line for line in banner.splitlines() if line.strip().startswith("drivers "))
    return line.split(None, 1)[1].strip().split(", ")


def test_serve_on_a_terminal_prints_one_banner_and_readable_logs(tmp_path: Path) -> None:
    """stderr a terminal (as under `make run`): a banner with version, URL, registry, drivers, where the admin
    token is (not the token) and the warnings; log lines as level, event, key=value rather than JSON. Another
    driver is installed, whose name sorts before postgres: the banner names every driver."""
    port = free_port()
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [gateway_command(), "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port), "--log-level", "INFO"],
        env=process_environment(DBGATEWAY_REGISTRY_FILE_TYPO="x", **with_a_driver_named_aardvark(tmp_path)),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=secondary,
        text=True,
    )
    os.close(secondary)
    try:
        shown = COLOURS.sub("", read_terminal_until(primary, "gateway_listening"))
        wait_until_listening(process, port)
    finally:
        process.terminate()
        # Keep reading while it stops: a full terminal buffer would block its last log lines, and so its exit.
        read_terminal_until(primary, "\0never\0", seconds=15 if process.poll() is None else 0)
        if process.poll() is None:
            process.kill()
        process.wait(timeout=15)
        os.close(primary)
    token = (tmp_path / "data" / "admin_token").read_text(encoding="utf-8").strip()
    assert token not in shown
    assert shown.count(f"dbgateway {__version__}") == 1
    banner = shown.split(f"dbgateway {__version__}", 1)[1]
    assert f"http://127.0.0.1:{port}" in banner
    assert "registry       file:" in banner
    drivers = banner_drivers(banner)
    assert drivers == sorted(drivers) and {"aardvark", "postgres"} <= set(drivers), drivers
    assert f"admin token    in the file {(tmp_path / 'data' / 'admin_token').resolve()}" in banner
    assert "! admin_token_generated" in banner and "! config_warning" in banner  # repeated after the banner
    assert "DBGATEWAY_REGISTRY_FILE_TYPO" in banner
    assert not any(line.lstrip().startswith("{") for line in shown.splitlines())  # no JSON on a terminal
    assert "[info     ] gateway_created" in shown


@pytest.mark.parametrize(("log_format", "json_lines"), [("auto", True), ("json", True), ("console", False)])
def test_log_format_decides_what_a_pipe_gets(tmp_path: Path, log_format: str, json_lines: bool) -> None:
    """stderr not a terminal: JSON lines unless log_format = console; the banner's facts are gateway_listening's."""
    port = free_port()
    process = start_gateway_process(
        tmp_path / "data", port, DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN, DBGATEWAY_LOG_FORMAT=log_format
    )
    try:
        wait_until_listening(process, port)
        status, body = call_process(port, "GET", "/Logs", params={"event": "gateway_created"},
                                    headers={"admin_token": ADMIN_TOKEN})
    finally:
        code, stderr = stop_process(process)
    assert code == 0, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert all(line.startswith("{") for line in lines) is json_lines, stderr
    # The Logs endpoint keeps JSON lines whatever the console shows.
    assert status == 200 and [json.loads(line)["event"] for line in body[0]["logs"].splitlines()] == ["gateway_created"]
    if json_lines:
        listening = next(json.loads(line) for line in lines if '"gateway_listening"' in line)
        assert listening["version"] == __version__ and listening["url"] == f"http://127.0.0.1:{port}"
        # postgres, and whatever else is installed (`make test` installs the example sqlite driver beside it).
        assert "postgres" in listening["drivers"] and listening["workers"] == 1
        assert listening["admin_access"] == "the admin_token setting (environment DBGATEWAY_ADMIN_TOKEN)"
        assert ADMIN_TOKEN not in stderr
    else:
        assert f"dbgateway {__version__}" in stderr and "[info     ] gateway_listening" in stderr


def test_workers_option_starts_that_many_workers(tmp_path: Path) -> None:
    """serve --workers 2 runs two serving processes (gateway_listening says so; both answer)."""
    port = free_port()
    process = subprocess.Popen(
        [gateway_command(), "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port), "--workers", "2"],
        env=process_environment(DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN, DBGATEWAY_LOG_FORMAT="json"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_listening(process, port)
        assert call_process(port, "GET", "/healthz")[0] == 200
    finally:
        code, stderr = stop_process(process)
    assert code == 0, stderr
    listening = next(json.loads(line) for line in stderr.splitlines() if '"gateway_listening"' in line)
    assert listening["workers"] == 2
    started = next(json.loads(line) for line in stderr.splitlines() if '"workers_started"' in line)
    assert len(started["workers"]) == 2
