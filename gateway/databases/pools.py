"""One connection pool per registered database, opened on first use, closed on shutdown."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog

from gateway.contract.background import keep_running
from gateway.contract.driver_protocol import DatabasePool, PoolLimits, PoolStats
from gateway.databases.driver_loader import DriverCatalog
from gateway.errors import DatabaseUnavailable, UpstreamRefused
from gateway.registry import DatabaseRecord


class DatabasePools:
    """Pools by local database name; a pool is rebuilt when its database's connection data changes."""

    def __init__(self, drivers: DriverCatalog, limits: PoolLimits, logger: structlog.typing.FilteringBoundLogger) -> None:
        self._drivers = drivers
        self._limits = limits
        self._logger = logger
        self._pools: dict[str, tuple[DatabaseRecord, DatabasePool]] = {}

    def get(self, record: DatabaseRecord) -> DatabasePool:
        current = self._pools.get(record.local_name)
        if current is not None and current[0] == record:
            return current[1]
        if current is not None:
            # Connection data changed (e.g. by another gateway process): old connections must not serve.
            keep_running(current[1].close())
        pool = self.open_unregistered(record)
        self._pools[record.local_name] = (record, pool)
        return pool

    def open_unregistered(self, record: DatabaseRecord) -> DatabasePool:
        """A pool for a database not (yet) in the registry; the caller closes it."""
        driver = self._drivers.get(record.base_type)
        return driver.open_pool(record.connection, self._limits, self._logger.bind(database=record.local_name))

    @contextlib.asynccontextmanager
    async def on_trial(self, record: DatabaseRecord) -> AsyncIterator[DatabasePool]:
        """A pool for ``record`` that serves the database only if the ``with`` block succeeds.

        The block talks to the database and saves the registry change; if it
        raises, the pool is closed and the pool serving now (if any) stays. A
        database that cannot be reached inside the block is a 502: the upstream
        refused what the administrator asked for.
        """
        pool = self.open_unregistered(record)
        try:
            try:
                yield pool
            except DatabaseUnavailable as error:
                raise UpstreamRefused(error.message) from None
        except BaseException:
            await pool.close()
            raise
        await self.replace(record, pool)

    async def replace(self, record: DatabaseRecord, pool: DatabasePool) -> None:
        """Serve ``record`` from ``pool`` from now on, then close the pool it replaces."""
        # Swapped before awaiting, so no request in between can open (and leak) a third pool.
        previous = self._pools.get(record.local_name)
        self._pools[record.local_name] = (record, pool)
        if previous is not None and previous[1] is not pool:
            await previous[1].close()

    def stats(self) -> dict[str, PoolStats]:
        """Each registered database's pool statistics (as far as opened), by local name; no I/O."""
        return {name: pool.stats() for name, (_, pool) in self._pools.items()}

    async def discard(self, local_name: str) -> None:
        entry = self._pools.pop(local_name, None)
        if entry is not None:
            await entry[1].close()

    async def close_all(self) -> None:
        entries, self._pools = list(self._pools.values()), {}
        await asyncio.gather(*(pool.close() for _, pool in entries), return_exceptions=True)
