"""The settings: what the operator configured, read strictly, and the admin token.

Owns ``GatewayConfig`` and where each value came from (``config``: defaults, the
TOML file, ``DBGATEWAY_*`` variables, options), reading a value as its type
(``config_types``), the checks of single values and their bounds
(``config_checks``), and the admin token, configured or generated once
(``admin_token``). ``ConfigError`` is the one sentence a bad setting stops the
gateway with.

May import: ``gateway.errors``, ``gateway.contract``, ``gateway.registry`` (a
registry URL is checked as the registry reads it). Nothing here serves a request
or reaches a database.
"""
