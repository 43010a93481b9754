"""Database backends shipped with dbgateway; each one implements `gateway.contract.driver_protocol.Driver`."""
