"""``dbgateway config`` as a configuration check and in a pipe (issue 20).

It refuses what ``serve`` refuses (a misspelt driver option is exit 2 for both:
test_console.py's table of wrong values), prints the warnings ``serve`` would
log while starting, and ends quietly when its reader leaves early.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from support import gateway_command, process_environment, run_command


def test_config_prints_the_warnings_serve_would_log(tmp_path: Path) -> None:
    """Options for a driver that is not installed, an allowed function a built-in rule refuses: warnings, exit 0."""
    settings_file = tmp_path / "gateway.toml"
    settings_file.write_text('[drivers.postgres]\nallow_functions = ["pg_sleep"]\n[drivers.nosuch]\nx = 1\n')
    result = run_command("config", "--config", str(settings_file), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    warnings = result.stderr.strip().splitlines()
    assert any(line.startswith("dbgateway: warning: allow_functions_overrides_denial") and "pg_sleep" in line
               for line in warnings), warnings
    assert any(line.startswith("dbgateway: warning: driver_options_unused") and "nosuch" in line
               for line in warnings), warnings


def test_config_into_a_pipe_its_reader_closed_ends_quietly(tmp_path: Path) -> None:
    """`dbgateway config | head`: the reader leaves first; no BrokenPipeError traceback, SIGPIPE as for any tool."""
    process = subprocess.Popen(
        [gateway_command(), "config"], cwd=tmp_path, env=process_environment(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before it writes anything: its first write finds no reader
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=30) == -13, stderr  # killed by SIGPIPE, as cat or ls would be
    assert stderr == ""
