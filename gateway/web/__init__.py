"""The HTTP layer: the app, its middlewares, the operations declared beside their handlers, the OpenAPI document.

Owns ``create_app`` and the typed keys of everything the app holds (``app``,
``keys``), the middlewares of every request (``middlewares``) and of what aiohttp
cannot parse (``protocol_errors``), each operation declared once and served
(``operations``), its inputs read and checked (``inputs``, ``parameters``,
``named_inputs``, ``connection_inputs``, ``listing``), the OpenAPI document built
from the declarations (``openapi_schemas``, ``openapi_document``), GetData's
answer over HTTP (``getdata_answers``, ``getdata_body``), and the handlers, one
module per resource, each with its ``OPERATIONS`` (``handlers/``).

May import: every room below it (``gateway.errors``, ``gateway.contract``,
``gateway.registry``, ``gateway.settings``, ``gateway.request``,
``gateway.databases``, ``gateway.observability``, ``gateway.results``); never
``gateway.process``, ``gateway.testing`` or a driver.
"""
