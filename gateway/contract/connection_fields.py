"""The connection fields a driver declares: what AddDatabase / PATCH /Database may take for its databases.

A driver names the AddDatabase parameters its databases need
(``Driver.connection_fields``), with any names, each of a ``FieldKind`` and
perhaps ``secret``; ``gateway.web.connection_inputs`` reads the inputs against
that declaration, stores only what was declared, answers only that (never a
secret) and documents the fields of the installed drivers
(``gateway.databases.driver_loader.connection_parameters``) as the operations'
parameters. This module holds the declaration's pieces, which the driver
protocol names; reading a driver's declaration (``declared_fields``) is
``gateway.databases.driver_loader``'s.

The registry keeps a database's connection as one object of the declared
fields (``ConnectionData``): their values by name, secrets apart (encrypted at
rest, never answered, never logged). A driver that declares nothing takes no
connection field.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Union

import attrs

ConnectionValue = Union[str, int, bool]
"""A field's value once checked: text (``TEXT``, ``HOST``, ``CHOICE``), an integer (``PORT``, ``INTEGER``), a bool."""


class FieldKind(enum.Enum):
    """How a connection field's text is checked, and what it becomes."""

    TEXT = "text"
    """Any text a driver can pass on (no NUL character). The only kind a secret may be."""
    HOST = "host"
    """A host name or address, without port, spaces or slashes."""
    PORT = "port"
    """A TCP port, an integer from 1 to 65535 (stored as an integer)."""
    INTEGER = "integer"
    """An integer (stored as one), e.g. a timeout."""
    BOOLEAN = "boolean"
    """``true`` or ``false`` (stored as a bool), e.g. DuckDB's ``read_only``."""
    CHOICE = "choice"
    """One of the field's ``choices``, e.g. MySQL's ``ssl_mode``."""


def _copied(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return dict(mapping)


@attrs.frozen
class ConnectionData:
    """Where a registered database lives and how to log in: its declared fields' values, by name.

    ``connection["ip"]`` reads a field (a secret too); a field the driver declared
    optional and the request left out is absent (``get`` answers None).
    """

    values: Mapping[str, ConnectionValue] = attrs.field(factory=dict, converter=_copied, hash=False)
    """The fields that are not secret, by name, in the driver's declaration order."""
    secrets: Mapping[str, str] = attrs.field(factory=dict, converter=_copied, repr=False, hash=False)
    """The secret fields (a password), by name: encrypted at rest, never answered, never logged."""

    def __getitem__(self, name: str) -> ConnectionValue:
        if name in self.secrets:
            return self.secrets[name]
        return self.values[name]

    def get(self, name: str, default: ConnectionValue | None = None) -> ConnectionValue | None:
        return self[name] if name in self else default

    def __contains__(self, name: object) -> bool:
        return name in self.values or name in self.secrets

    def names(self) -> Iterator[str]:
        """Every field held, secrets last."""
        yield from self.values
        yield from self.secrets


@attrs.frozen
class ConnectionField:
    """One AddDatabase parameter a driver needs to reach its database."""

    name: str
    """The AddDatabase / PATCH /Database parameter: lower-case letters, digits and ``_``."""
    kind: FieldKind
    """How its value is checked."""
    required: bool = True
    """AddDatabase refuses to go on without it (400 naming it); an optional text field left out is empty, another
    kind left out is absent."""
    secret: bool = False
    """A password or key: encrypted at rest, handed to the log redactor, never answered. Only a ``TEXT`` field."""
    description: str = ""
    """For people (the API description)."""
    choices: tuple[str, ...] = ()
    """The values a ``CHOICE`` field takes; empty for other kinds."""


_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")
RESERVED_NAMES = frozenset({"local_database_name", "base_type", "admin_token", "user_token", "format"})
"""Parameters of AddDatabase and PATCH /Database (or of every request) that no connection field may be named."""


def declaration_problem(fields: Iterable[ConnectionField]) -> str | None:
    """Why a driver's declaration cannot be served, or None."""
    seen: set[str] = set()
    for field in fields:
        if not _NAME.fullmatch(field.name):
            return f"connection field {field.name!r} must be lower-case letters, digits and _, starting with a letter"
        if field.name in RESERVED_NAMES:
            return f"connection field {field.name!r} is a parameter of the operations themselves"
        if field.name in seen:
            return f"connection field {field.name!r} is declared twice"
        seen.add(field.name)
        if field.secret and field.kind is not FieldKind.TEXT:
            return f"connection field {field.name!r} is secret, so it must be of kind text"
        if (field.kind is FieldKind.CHOICE) != bool(field.choices):
            return f"connection field {field.name!r}: choices are for (and required by) kind choice"
    return None


def secret_names(declarations: Iterable[Iterable[ConnectionField]]) -> tuple[str, ...]:
    """Every field name some declaration makes secret: the handlers hand their values to the log redactor first."""
    return tuple(sorted({field.name for fields in declarations for field in fields if field.secret}))


def as_connection(fields: Iterable[ConnectionField], given: Mapping[str, ConnectionValue]) -> ConnectionData:
    """``given`` values split into ``ConnectionData``'s plain and secret parts, in the declaration's order."""
    values: dict[str, ConnectionValue] = {}
    secrets: dict[str, str] = {}
    for field in fields:
        if field.name in given:
            if field.secret:
                secrets[field.name] = str(given[field.name])
            else:
                values[field.name] = given[field.name]
    return ConnectionData(values, secrets)
