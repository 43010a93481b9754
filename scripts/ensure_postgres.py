"""Make sure the test suite's PostgreSQL answers; start the local cluster if it is installed but stopped.

Exit 0 when the server at DBGATEWAY_TEST_DSN (default: the local one) accepts
a connection; otherwise print exactly why and exit 3.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psycopg2
import psycopg2.extensions

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
LOCAL_HOSTS = {"", "localhost", "127.0.0.1", "::1"}


def try_connect(dsn: str) -> str | None:
    """None when a connection succeeds, else the reason in one line."""
    try:
        psycopg2.connect(dsn, connect_timeout=3).close()
    except psycopg2.OperationalError as error:
        return " ".join(str(error).split())
    return None


def start_local_clusters(port: int) -> tuple[list[str], bool]:
    """Start the stopped Debian-packaged clusters that listen on ``port``.

    Returns what was found or tried, and whether any cluster was started.
    """
    if shutil.which("pg_lsclusters") is None or shutil.which("pg_ctlcluster") is None:
        return [], False
    listing = subprocess.run(["pg_lsclusters", "--no-header"], capture_output=True, text=True, check=False)
    found, started = [], False
    for line in listing.stdout.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        version, cluster, cluster_port, status = fields[:4]
        if cluster_port != str(port):
            found.append(f"{version}/{cluster} listens on port {cluster_port}, not {port}")
            continue
        if status == "online":
            found.append(f"{version}/{cluster} on port {port} is already running")
            continue
        command = ["pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, "start"]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode == 0:
            found.append(f"{version}/{cluster} on port {port}: started")
            started = True
        else:
            found.append(f"{version}/{cluster} on port {port}: {result.stderr.strip() or f'exit {result.returncode}'}")
    return found, started


def main() -> int:
    dsn = os.environ.get("DBGATEWAY_TEST_DSN", DEFAULT_DSN)
    reason = try_connect(dsn)
    if reason is None:
        return 0
    parameters = psycopg2.extensions.parse_dsn(dsn)
    host = parameters.get("host", "")
    tried: list[str] = []
    if host in LOCAL_HOSTS or host.startswith("/"):
        print(f"PostgreSQL does not answer at {dsn}: {reason}\nLooking for a local cluster to start...", file=sys.stderr)
        tried, started = start_local_clusters(int(parameters.get("port", 5432)))
        for _ in range(30 if started else 0):
            reason = try_connect(dsn)
            if reason is None:
                print("PostgreSQL is up.", file=sys.stderr)
                return 0
            time.sleep(1)
    print(
        f"The tests need PostgreSQL and nothing usable answers at {dsn}.\n"
        f"  reason: {reason}\n"
        + (f"  local clusters: {'; '.join(tried)}\n" if tried else "  no local cluster was found to start\n")
        + "Start PostgreSQL, or set DBGATEWAY_TEST_DSN to a server where this account may create databases.",
        file=sys.stderr,
    )
    return 3


if __name__ == "__main__":
    sys.exit(main())
