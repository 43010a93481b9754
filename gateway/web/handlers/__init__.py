"""Thin request handlers, one module per resource; they raise ``gateway.errors`` and never catch them.

Each module declares its operations in ``OPERATIONS`` (``gateway.web.operations``
collects every module here). Part of the HTTP layer: a handler may import what
``gateway.web`` may, and the rest of ``gateway.web``. In the gateway nothing
imports a handler module but the operations' collection and another handler
(``data_formats`` serves ``data``'s GetData with the format fixed).
"""
