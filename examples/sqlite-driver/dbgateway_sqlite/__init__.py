"""An example dbgateway driver: SQLite files, read-only, through the standard library's ``sqlite3``.

Installed beside dbgateway, it serves ``base_type=sqlite`` (the entry point in
this package's pyproject.toml). It is an example for driver authors, not a
supported backend; docs/drivers.md walks through it.

AddDatabase: ``database`` is the absolute path of the SQLite file on the
gateway's host. The other inputs (``ip``, ``port``, ``username``,
``password``) are required by AddDatabase today and ignored here (see
``database_file``). The catalog has one folder, ``main``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import structlog

from dbgateway_sqlite.grants import FOLDER
from dbgateway_sqlite.pool import SQLitePool
from gateway.driver_protocol import ConnectionData, PoolLimits

__all__ = ["FOLDER", "SQLiteDriver", "SQLitePool", "database_file"]


class SQLiteDriver:
    """Opens an ``SQLitePool`` per registered file; built by the gateway from ``[drivers.sqlite]``."""

    base_type = "sqlite"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        # A ValueError here stops the gateway at start-up, naming [drivers.sqlite]: better than ignoring a typo.
        if options:
            raise ValueError(f"the sqlite driver takes no options; got {', '.join(sorted(options))}")

    def open_pool(
        self, connection: ConnectionData, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger
    ) -> SQLitePool:
        # Must not touch the file: the gateway calls check() next and answers its failure as 502.
        return SQLitePool(database_file(connection), limits, logger)


def database_file(connection: ConnectionData) -> Path:
    """The SQLite file AddDatabase named: its ``database`` input, an absolute path.

    The only place that reads AddDatabase's inputs. They are PostgreSQL's today
    (ip, port, database, username, password), all required, so an
    administrator passes placeholders for the four a file does not have; they
    are ignored. Once drivers declare their own connection fields, this becomes
    one ``path`` field.
    """
    return Path(connection.database)
