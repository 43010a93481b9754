"""The PostgreSQL driver's connections: taking them, the server's backends behind them, and stopping statements.

Owns taking a connection from aiopg's pool within the time limit, passing over
dead ones (``acquire``), the ``pool_max_size`` slots shared by lent connections
and runaway backends (``backend_slots``), the backends that ignored a cancel,
watched until gone (``runaways``), cancelling a statement without blocking the
process (``cancel``), and one statement's round trip on aiopg's connection
(``statements``). ``acquire`` and ``statements`` are the two that use aiopg's
undocumented names.

May import: ``gateway.errors`` and ``gateway.contract``; nothing else of the
driver (the query runner, ``drivers.postgres.results``, builds on it).
"""
