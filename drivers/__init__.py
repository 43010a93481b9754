"""Database backends shipped with dbgateway; each one implements ``gateway.contract.driver_protocol.Driver``.

A driver may import ``gateway.errors`` and ``gateway.contract`` only, and the
gateway never imports a driver: it finds them through the ``dbgateway.drivers``
entry points (docs/architecture.md, "Layers").
"""
