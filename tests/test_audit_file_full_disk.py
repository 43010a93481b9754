"""``audit_file`` on a disk that fills (issue 20, 7): a line is in the file whole or not at all.

The disk is real: a 64 KiB tmpfs mounted for the test (it needs root, and is
skipped where mounting is refused), filled with a file of its own until the
kernel answers ENOSPC. A line longer than what is left of the audit file's
last page is then written in part (tmpfs takes a page at a time): the short
write the gateway used to ignore, leaving a fragment that the next entry was
glued onto once space came back.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from support import GatewayFactory
from test_audit import ITEMS_SQL  # noqa: F401  (conftest's items_database fixture reads it here)
from test_audit import get_data, open_items, wait_for_audit

from gateway.observability.audit_file import AuditFile

SMALL_DISK = "64k"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 64 KiB of its own, mounted for the test and unmounted after it."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK},mode=0700", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"a small tmpfs cannot be mounted here (root needed): {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "--lazy", str(mount_point)], check=True)


def fill(disk: Path) -> Path:
    """Take every free page of ``disk`` with one file, until ENOSPC; delete the file to give the space back."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(descriptor, b"\0" * 4096)
    except OSError as error:
        assert error.errno == errno.ENOSPC, error
    finally:
        os.close(descriptor)
    return filler


def entry(number: int, pad: int = 0) -> str:
    return json.dumps({"event": "audit", "n": number, "pad": "x" * pad})


def reports(err: str) -> list[dict[str, object]]:
    """The AuditFile's own lines on stderr."""
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    return [line for line in lines if str(line.get("event", "")).startswith("audit_file_")]


def test_a_line_cut_by_the_full_disk_is_taken_back(small_disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The part written before ENOSPC leaves the file again; once space returns the next line starts clean."""
    path = small_disk / "audit.jsonl"
    sink = AuditFile(path, max_bytes=0)
    try:
        kept = [entry(number) for number in range(3)]
        for line in kept:
            sink.write_line(line)
        filler = fill(small_disk)
        sink.write_line(entry(3, pad=5000))  # more than the rest of the file's page: written in part, then ENOSPC
        assert path.read_text() == "".join(line + "\n" for line in kept)
        sink.write_line(entry(4, pad=5000))  # still full: cut again, taken back again
        assert path.read_text() == "".join(line + "\n" for line in kept)
        filler.unlink()
        sink.write_line(later := entry(5, pad=5000))
    finally:
        sink.close()
    assert path.read_text().splitlines() == [*kept, later]
    told = reports(capsys.readouterr().err)
    assert [(line["event"], line["error"]) for line in told] == [
        ("audit_file_write_failed", "No space left on device"),
        ("audit_file_writable_again", None),
    ]
    assert told[1]["lines_lost"] == 2  # stderr and /Logs/ still had them


def test_an_entry_never_joins_a_line_left_unfinished(tmp_path: Path) -> None:
    """A file that ends mid-line (written by something else, or before this gateway): the entry starts a new line."""
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b'{"event":"audit","n":0}\n{"event":"au')
    sink = AuditFile(path, max_bytes=0)
    try:
        sink.write_line(entry(1))
        sink.write_line(entry(2))
    finally:
        sink.close()
    assert path.read_text().split("\n") == ['{"event":"audit","n":0}', '{"event":"au', entry(1), entry(2), ""]


async def test_a_gateway_whose_audit_disk_fills_keeps_a_readable_file(
    make_gateway: GatewayFactory, items_database: str, small_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GetData answers while the disk is full; afterwards every line of the file is one whole audit entry."""
    path = small_disk / "audit.jsonl"
    client: TestClient = await open_items(await make_gateway(audit_file=str(path)), items_database)
    long_query = "select id from sales.items where note <> '" + "q" * 6000 + "'"
    filler = fill(small_disk)
    assert (await get_data(client, long_query)).status == 200
    assert len(await wait_for_audit(client, 1)) == 1  # written (to /Logs/) and tried (in the file)
    filler.unlink()
    assert (await get_data(client, "select id from sales.items where id = 1")).status == 200
    assert len(await wait_for_audit(client, 2)) == 2
    lines = [json.loads(line) for line in path.read_text().splitlines()]  # every line parses
    assert [line["action"] for line in lines] == ["database_registered", "table_access_granted", "get_data"]
    assert lines[-1]["query"].endswith("id = 1")
    assert [line["event"] for line in reports(capsys.readouterr().err)] == [
        "audit_file_write_failed",
        "audit_file_writable_again",
    ]
