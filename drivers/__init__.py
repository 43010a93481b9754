"""Database backends shipped with dbgateway; each one implements `gateway.driver_protocol.Driver`."""
