"""A throwaway PostgreSQL cluster for tests that must stop or restart the server.

The shared server the suite uses must never be restarted, so such a test
makes its own: ``initdb`` (trust authentication, no fsync) in a temporary
folder owned by the ``postgres`` account, started with ``pg_ctl`` on a free
port of 127.0.0.1. The server refuses to run as root, so when the tests run as
root every command runs as ``postgres`` through ``runuser``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import attrs
import psycopg2

SERVER_ACCOUNT = "postgres"
"""The operating-system account the throwaway server runs as when the tests run as root."""


def server_binaries() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding initdb and pg_ctl, or one on PATH."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda path: int(Path(path).parent.name))
    for folder in reversed(candidates):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def cluster_tools_missing() -> str | None:
    """Why a throwaway cluster cannot be made here, or None when it can."""
    if server_binaries() is None:
        return "initdb and pg_ctl are not installed (Debian: postgresql)"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing, so the server cannot run as another account"
        try:
            pwd.getpwnam(SERVER_ACCOUNT)
        except KeyError:
            return f"running as root and there is no {SERVER_ACCOUNT!r} account to run the server as"
    return None


@attrs.frozen
class ThrowawayCluster:
    """A running cluster of a test's own; ``destroy`` stops it and removes its files."""

    folder: Path
    """Temporary folder holding the data directory, the socket and the server log."""
    port: int
    """TCP port on 127.0.0.1."""
    binaries: Path
    """Where initdb and pg_ctl are."""

    @classmethod
    def create(cls, port: int) -> ThrowawayCluster:
        binaries = server_binaries()
        assert binaries is not None, cluster_tools_missing()
        folder = Path(tempfile.mkdtemp(prefix="dbgw_cluster_"))
        if os.geteuid() == 0:
            account = pwd.getpwnam(SERVER_ACCOUNT)
            os.chown(folder, account.pw_uid, account.pw_gid)
        cluster = cls(folder=folder, port=port, binaries=binaries)
        try:
            cluster._run("initdb", "--pgdata", str(cluster.data_dir), "--auth", "trust", "--username", "postgres",
                         "--no-sync", "--encoding", "UTF8", "--locale", "C")  # fmt: skip
            cluster._pg_ctl("start")
        except BaseException:
            cluster.destroy()
            raise
        return cluster

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    def _run(self, program: str, *arguments: str) -> None:
        command = [str(self.binaries / program), *arguments]
        if os.geteuid() == 0:
            command = ["runuser", "-u", SERVER_ACCOUNT, "--", *command]
        finished = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        if finished.returncode != 0:
            raise RuntimeError(f"{program} failed ({finished.returncode}): {finished.stderr.strip()}")

    def _pg_ctl(self, action: str, *extra: str) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off "
            "-c shared_buffers=16MB -c max_connections=30"
        )
        self._run("pg_ctl", action, "--pgdata", str(self.data_dir), "--wait", "--timeout", "30",
                  "--log", str(self.folder / "server.log"), "-o", options, *extra)  # fmt: skip

    def restart(self) -> None:
        """Stop the server the fast way (every session is ended) and start it again; returns once it accepts."""
        self._pg_ctl("restart", "--mode", "fast")

    def stop(self) -> None:
        """Stop the server the fast way (every session is ended); ``start`` brings it back on the same port."""
        self._pg_ctl("stop", "--mode", "fast")

    def start(self) -> None:
        """Start a stopped server; returns once it accepts connections."""
        self._pg_ctl("start")

    def run_sql(self, sql: str) -> list[tuple[Any, ...]]:
        """Run ``sql`` on the cluster's ``postgres`` database, autocommit."""
        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres")
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchall() if cursor.description else []
        finally:
            connection.close()

    def destroy(self) -> None:
        if (self.data_dir / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "stop", "--pgdata", str(self.data_dir), "--mode", "immediate", "--wait")
            except RuntimeError:
                pass  # already stopped; the files go anyway
        shutil.rmtree(self.folder, ignore_errors=True)
