"""An example dbgateway driver: SQLite files, read-only, through the standard library's ``sqlite3``.

Installed beside dbgateway, it serves ``base_type=sqlite`` (the entry point in
this package's pyproject.toml). It is an example for driver authors, not a
supported backend; docs/drivers.md walks through it.

AddDatabase: ``database`` is the absolute path of the SQLite file on the
gateway's host, the one connection field this driver declares
(``connection_fields``); the gateway refuses ``ip``, ``port``, ``username`` and
``password`` for its databases. The catalog has one folder, ``main``.

The driver reads only files inside the folder its one option names::

    [drivers.sqlite]
    directory = "/srv/sqlite"

Without it, it serves no file at all: an administrator's AddDatabase could
otherwise point it at any file the gateway's user can read (issue 20 found the
development gateway serving every readable file once ``make test`` had
installed it). A path is resolved (symbolic links, ``..``) every time a file is
opened, so a link made later inside the folder cannot lead out of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import structlog

from dbgateway_sqlite.grants import FOLDER
from dbgateway_sqlite.pool import SQLitePool
from gateway.contract.driver_protocol import ConnectionData, ConnectionField, FieldKind, PoolLimits

__all__ = ["FOLDER", "SQLiteDriver", "SQLitePool", "database_file"]


class SQLiteDriver:
    """Opens an ``SQLitePool`` per registered file; built by the gateway from ``[drivers.sqlite]``."""

    base_type = "sqlite"
    # A file has no host, port or account: the gateway refuses those inputs for its databases.
    connection_fields: tuple[ConnectionField, ...] = (
        ConnectionField(
            "database", FieldKind.TEXT, description="Absolute path of the SQLite file on the gateway's host"
        ),
    )

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        # A ValueError here stops the gateway at start-up, naming [drivers.sqlite]: better than ignoring a typo.
        options = dict(options or {})
        directory = options.pop("directory", None)
        if options:
            raise ValueError(f"the sqlite driver's one option is directory; got {', '.join(sorted(options))}")
        if directory is not None and not (isinstance(directory, str) and Path(directory).is_absolute()):
            raise ValueError("directory must be the absolute path of the folder whose SQLite files may be served")
        if directory is not None and not Path(directory).is_dir():
            raise ValueError(f"directory {directory!r} is not a folder")
        self.directory = Path(directory).resolve() if directory is not None else None
        """The folder whose files this driver may open; None: it opens none."""

    def open_pool(
        self, connection: ConnectionData, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger
    ) -> SQLitePool:
        # Must not touch the file: the gateway calls check() next and answers its failure as 502.
        return SQLitePool(database_file(connection), limits, logger, self.directory)


def database_file(connection: ConnectionData) -> Path:
    """The SQLite file AddDatabase named: its ``database`` input, an absolute path (``SQLitePool`` checks that).

    The only place that reads AddDatabase's inputs; the gateway requires the
    field, so it is never None here.
    """
    return Path(str(connection.get("database", "")))
