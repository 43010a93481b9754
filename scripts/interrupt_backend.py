"""How long a PostgreSQL backend stays busy with a statement, and how much memory it takes meanwhile.

Time: a backend is *busy* from the moment the statement is sent until
``pg_stat_activity`` shows it no longer ``active`` (idle, or gone because it
was terminated or its client left). That is read from a connection of its own
every ``POLL_SECONDS``, so it holds whether the statement's client waited for
the answer (a direct run), gave up on it (an abandoned run), or is a gateway
that answered 504 and discarded the connection while the backend ran on.

Memory: the server runs on this machine, so the backend's ``/proc/<pid>/status``
is read directly. Before the statement, its peak resident set size is reset
by writing ``5`` to ``/proc/<pid>/clear_refs`` (Linux; needs root or the
server's user); ``VmHWM`` then is the peak since that reset, which the kernel
keeps exactly, however short the spike. It is read every ``POLL_SECONDS`` while
the backend is busy; the last reading before the backend exits counts (a
terminated backend takes its counter with it, so a peak in its last 20 ms may
be missed). Where the reset is refused the peak is the largest ``VmRSS``
sampled, and ``MemoryMethod`` says so. Both count the shared buffers the backend
touched (``RssShmem``, a few MiB here) beside its private memory; ``RssAnon`` is
sampled too (private memory only).

What counts is the growth: peak minus the backend's resident size at the
reset (its *start*; a backend first seen during the statement starts at 0,
which overstates it by its own 15-20 MB at most). Only a new backend gives a
true figure: one that ran earlier statements keeps much of what they took
resident (the C library does not give it all back), and a statement then
reuses that memory without growing. So every measured statement runs on a new
backend: a direct run on a connection of its own, a gateway run on a freshly
restarted gateway (``interrupt_gateway.Gateway.restart``).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Iterable
from pathlib import Path

import attrs
import psycopg2

POLL_SECONDS = 0.02
"""How often pg_stat_activity and /proc are read while a statement runs."""
GATEWAY_WATCHER = "dbgateway-watcher"
"""The gateway's own watcher connection (drivers/postgres/connections/runaways.py): never a probe's backend."""


class MemoryMethod(enum.Enum):
    """How a peak was measured."""

    HWM = "VmHWM after clear_refs"
    """The kernel's peak resident set size, reset before the statement."""
    SAMPLED_RSS = "VmRSS sampled"
    """The largest resident set size seen at the polls (the reset was refused)."""


def _status_kib(pid: int) -> dict[str, int] | None:
    """VmHWM, VmRSS, RssAnon of ``pid`` in KiB (None once the process is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name in ("VmHWM", "VmRSS", "RssAnon"):
            fields[name] = int(value.split()[0])
    return fields


def reset_peak(pid: int) -> bool:
    """Reset the peak resident set size of ``pid``; whether the kernel let us."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@attrs.define
class MemoryPeak:
    """The largest memory readings of some backends over one statement."""

    method: MemoryMethod = MemoryMethod.HWM
    rss_kib: int = 0
    """Peak resident set size: VmHWM after the reset, else the largest VmRSS sampled."""
    anon_kib: int = 0
    """The largest RssAnon sampled (private memory)."""
    grown_kib: int = 0
    """The largest growth of one backend: its peak minus its resident size when the peak was reset."""
    start_kib: dict[int, int] = attrs.field(factory=dict)
    """Each backend's resident size at the reset."""

    def sample(self, pid: int) -> bool:
        """Read ``pid`` once; False when it is gone."""
        fields = _status_kib(pid)
        if fields is None:
            return False
        peak = max(fields.get("VmHWM", 0) if self.method is MemoryMethod.HWM else 0, fields.get("VmRSS", 0))
        self.rss_kib = max(self.rss_kib, peak)
        self.anon_kib = max(self.anon_kib, fields.get("RssAnon", 0))
        self.grown_kib = max(self.grown_kib, peak - self.start_kib.get(pid, 0))
        return True

    def reset(self, pids: Iterable[int]) -> None:
        for pid in pids:
            if not reset_peak(pid):
                self.method = MemoryMethod.SAMPLED_RSS
            fields = _status_kib(pid)
            if fields is not None:
                self.start_kib[pid] = fields.get("VmRSS", 0)

    @property
    def rss_mb(self) -> float:
        return round(self.rss_kib / 1024, 1)

    @property
    def anon_mb(self) -> float:
        return round(self.anon_kib / 1024, 1)

    @property
    def grown_mb(self) -> float:
        return round(self.grown_kib / 1024, 1)


class ActivityMonitor:
    """A connection of its own that reads pg_stat_activity (to a database other than the one watched)."""

    def __init__(self, dsn: str, application_name: str) -> None:
        self.connection = psycopg2.connect(dsn, application_name=application_name)
        self.connection.autocommit = True

    def close(self) -> None:
        self.connection.close()

    def state(self, pid: int) -> str | None:
        """The backend's state ('active', 'idle', ...), None once it has ended."""
        with self.connection.cursor() as cursor:
            cursor.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", (pid,))
            row = cursor.fetchone()
        return row[0] if row else None

    def client_backends(self, database: str, *, exclude_application: str = GATEWAY_WATCHER) -> dict[int, str]:
        """pid → state of every client backend connected to ``database`` (but the excluded application's)."""
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid, coalesce(state, '') FROM pg_stat_activity WHERE datname = %s "
                "AND backend_type = 'client backend' AND application_name <> %s AND pid <> pg_backend_pid()",
                (database, exclude_application),
            )
            return dict(cursor.fetchall())

    def wait_until_not_active(self, pid: int, deadline: float, peak: MemoryPeak) -> float | None:
        """Poll until ``pid`` is no longer active (sampling its memory); the moment it was seen so, None at deadline."""
        while time.monotonic() < deadline:
            peak.sample(pid)
            if self.state(pid) != "active":
                return time.monotonic()
            time.sleep(POLL_SECONDS)
        return None
