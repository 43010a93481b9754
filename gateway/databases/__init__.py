"""The registered databases as the gateway reaches them: through the drivers installed, one pool each.

Owns finding the drivers by ``base_type`` and reading the connection fields they
declare (``driver_loader``: ``DriverCatalog``), one driver pool per registered
database, opened lazily and closed on change (``pools``), each token's turns of
GetData on a database (``token_queries``), and logging what a driver says an
operator should know about a grant (``grant_notes``).

May import: ``gateway.errors``, ``gateway.contract``, ``gateway.registry``,
``gateway.settings``. It never imports a driver: drivers are found through their
entry points.
"""
