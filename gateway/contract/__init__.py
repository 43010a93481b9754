"""The driver contract: what the gateway and every driver share, and nothing else.

Owns the protocols a driver implements (``driver_protocol``: Driver, DatabasePool,
QueryResult, PoolLimits, PoolStats, the catalog types), the connection fields it
declares (``connection_fields``), and the few helpers a driver may use like the
gateway does (``waiting``: a timed wait that never cancels; ``background``: tasks
kept until they end; ``row_slices``: rows per turn of the event loop), and
``threaded_pool``: a base for the pool of a blocking client library.

May import: ``gateway.errors`` only. Everything else in ``gateway`` may import it,
and a driver package imports from ``gateway`` only this room, ``gateway.errors``
and, in its tests, ``gateway.testing`` (docs/architecture.md, "Layers").
"""
