"""The connection fields a driver declares: what AddDatabase / PATCH /Database may take for its databases.

A driver names the AddDatabase parameters its databases need
(``Driver.connection_fields``); ``gateway.web.connection_inputs`` reads the inputs
against that declaration, stores only what was declared, answers only that
(never a secret) and documents the fields of the installed drivers
(``gateway.databases.driver_loader.connection_parameters``) as the operations' parameters.
This module holds the declaration's pieces, which the driver protocol names;
reading a driver's declaration (``declared_fields``) is ``gateway.databases.driver_loader``'s.

The registry keeps a database's connection in five slots (``ConnectionData``),
so a driver declares a subset of them: ``ip`` (kind ``HOST``), ``port``
(``PORT``), ``database``, ``username`` (``TEXT``) and ``password`` (``TEXT``,
``secret``: encrypted at rest, never answered, never logged). A driver that
declares nothing gets ``DEFAULT_CONNECTION_FIELDS``, the five as PostgreSQL
declares them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

import attrs


class FieldKind(enum.Enum):
    """How a connection field's text is checked."""

    TEXT = "text"
    """Any text a driver can pass on (no NUL character)."""
    HOST = "host"
    """A host name or address, without port, spaces or slashes."""
    PORT = "port"
    """A TCP port, an integer from 1 to 65535 (stored as an integer)."""


@attrs.frozen
class ConnectionData:
    """Where a registered database lives and how to log in: the fields its driver declared, None for the others."""

    host: str | None = None
    """Address without the port (the parameter ``ip``)."""
    port: int | None = None
    """TCP port, 1-65535."""
    database: str | None = None
    """The database's name on its server (or whatever the driver declared ``database`` to be, e.g. a file)."""
    username: str | None = None
    """The account the gateway reads through; its privileges always apply."""
    password: str | None = attrs.field(default=None, repr=False)
    """That account's password; never logged, never answered."""


@attrs.frozen
class ConnectionField:
    """One AddDatabase parameter a driver needs to reach its database."""

    name: str
    """The AddDatabase / PATCH /Database parameter: one of ``SLOTS``."""
    kind: FieldKind
    """How its value is checked."""
    required: bool = True
    """AddDatabase refuses to go on without it (400 naming it); an optional text field left out is empty."""
    secret: bool = False
    """A password: encrypted at rest, never answered, never logged. Only ``password`` is, and it must be."""
    description: str = ""
    """For people (the API description)."""


SLOTS: Mapping[str, str] = {"ip": "host", "port": "port", "database": "database", "username": "username", "password": "password"}
"""Each connection parameter a driver may declare, and the ``ConnectionData`` attribute that holds it."""

DEFAULT_CONNECTION_FIELDS: tuple[ConnectionField, ...] = (
    ConnectionField("ip", FieldKind.HOST, description="Host name or address of the database server, without port"),
    ConnectionField("port", FieldKind.PORT, description="TCP port of the database server"),
    ConnectionField("database", FieldKind.TEXT, description="The database's name on its server"),
    ConnectionField("username", FieldKind.TEXT, description="The account the gateway reads through"),
    ConnectionField(
        "password", FieldKind.TEXT, required=False, secret=True, description="That account's password; never answered"
    ),
)
"""What PostgreSQL declares, and what a driver that declares nothing is taken to need."""


def declaration_problem(fields: Iterable[ConnectionField]) -> str | None:
    """Why a driver's declaration cannot be served (the registry has five slots), or None."""
    seen: set[str] = set()
    for field in fields:
        if field.name not in SLOTS:
            return f"connection field {field.name!r} is not one of {', '.join(SLOTS)}"
        if field.name in seen:
            return f"connection field {field.name!r} is declared twice"
        seen.add(field.name)
        if (field.kind is FieldKind.PORT) != (field.name == "port"):
            return "only the connection field 'port' is of kind port, and it must be"
        if field.secret != (field.name == "password"):
            return "only the connection field 'password' is secret (encrypted at rest), and it must be"
    return None


SECRET_PARAMETERS = ("password",)
"""The parameters a driver may declare secret: the handlers hand their values to the log redactor first."""
