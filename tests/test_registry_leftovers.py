"""A registry write killed before its rename leaves a temporary file; the next start or write removes it, and only it.

Issue 20: SIGKILL mid-write left ``.registry.json.*.tmp`` files (6 in 10
rounds, up to 171 KB, each a copy of the registry) that nothing removed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from support import GatewayFactory, admin_headers, read_logs

# Runs in a process of its own: opens the registry as the gateway does, then writes it, and is killed by
# SIGKILL at the instant between the temporary file's fsync and its rename.
KILLED_MID_WRITE = """
import os, signal, sys
from pathlib import Path
from gateway.registry.store import FileRegistryStore

store = FileRegistryStore(Path(sys.argv[1]))
store.open()
os.replace = lambda source, target: os.kill(os.getpid(), signal.SIGKILL)
store._update_under_file_lock(lambda state: (state.with_minted_token("0" * 64), None))
"""


def kill_a_writer_mid_write(registry: Path) -> list[Path]:
    """A real process writing ``registry`` killed by SIGKILL before its rename; the temporary files it left."""
    result = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(registry)], capture_output=True, timeout=60)
    assert result.returncode == -9, result.stderr.decode()
    return sorted(registry.parent.glob(f".{registry.name}.*.tmp"))


def look_alikes(folder: Path, outside: Path) -> list[Path]:
    """Names near the pattern that are not a write's temporary file, or are but no regular file of ours."""
    made = [
        folder / ".registry.json.keepme.tmp",  # not 8 random characters
        folder / ".registry.json.abcdefgh.tmp.bak",
        folder / "registry.json.abcdefgh.tmp",  # no leading dot
        folder / ".other.json.abcdefgh.tmp",  # another file's
        folder / "notes.tmp",
    ]
    for path in made:
        path.write_text("keep")
    directory = folder / ".registry.json.dir12345.tmp"
    directory.mkdir()
    link = folder / ".registry.json.link1234.tmp"
    link.symlink_to(outside)
    return [*made, directory, link]


async def test_a_start_removes_what_a_writer_killed_mid_write_left_and_nothing_else(
    make_gateway: GatewayFactory, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    registry = data / "registry.json"
    leftovers = kill_a_writer_mid_write(registry)
    assert len(leftovers) == 1 and leftovers[0].stat().st_size > 0
    outside = tmp_path / "outside.txt"
    outside.write_text("not the gateway's")
    kept = look_alikes(data, outside)

    client = await make_gateway(data)
    assert not leftovers[0].exists()
    assert all(path.is_symlink() or path.exists() for path in kept)
    assert outside.read_text() == "not the gateway's"
    (entry,) = await read_logs(client, event="registry_leftovers_removed")
    assert entry["files"] == [leftovers[0].name]


async def test_a_write_removes_what_another_process_left_while_this_one_runs(
    make_gateway: GatewayFactory, tmp_path: Path
) -> None:
    """Two gateways share a file; one is killed mid-write: the other's next change removes the leftover."""
    client = await make_gateway(tmp_path / "data")
    registry = tmp_path / "data" / "registry.json"
    (leftover,) = kill_a_writer_mid_write(registry)
    response = await client.put("/UserToken", headers=admin_headers())
    assert response.status == 200, await response.text()
    assert not leftover.exists()
    assert json.loads(registry.read_text())["minted_tokens"]
    (entry,) = await read_logs(client, event="registry_leftovers_removed")
    assert entry["files"] == [leftover.name]


def test_the_cleaner_knows_the_writers_names(tmp_path: Path) -> None:
    """The pattern is exactly what a write creates, so the cleaner and the writer agree on names."""
    from gateway.registry.leftovers import TEMPORARY_SUFFIX, leftover_pattern, temporary_prefix

    registry = tmp_path / "registry.json"
    descriptor, name = tempfile.mkstemp(dir=tmp_path, prefix=temporary_prefix(registry), suffix=TEMPORARY_SUFFIX)
    os.close(descriptor)
    assert leftover_pattern(registry).fullmatch(Path(name).name)
