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


def start_local_clusters() -> list[str]:
    """Start every stopped Debian-packaged cluster; return what was tried."""
    if shutil.which("pg_ctlcluster") is None or not Path("/etc/postgresql").is_dir():
        return []
    tried = []
    for version in sorted(os.listdir("/etc/postgresql")):
        for cluster in sorted(os.listdir(f"/etc/postgresql/{version}")):
            command = ["pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, "start"]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            outcome = "started" if result.returncode == 0 else (result.stderr.strip() or f"exit {result.returncode}")
            tried.append(f"{version}/{cluster}: {outcome}")
    return tried


def main() -> int:
    dsn = os.environ.get("DBGATEWAY_TEST_DSN", DEFAULT_DSN)
    reason = try_connect(dsn)
    if reason is None:
        return 0
    host = psycopg2.extensions.parse_dsn(dsn).get("host", "")
    tried: list[str] = []
    if host in LOCAL_HOSTS or host.startswith("/"):
        print(f"PostgreSQL does not answer at {dsn}: {reason}\nTrying to start the local cluster...", file=sys.stderr)
        tried = start_local_clusters()
        for _ in range(30):
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
