"""Where the registry lives, as the setting ``registry_url`` says, and the store that serves it.

``file:PATH`` (or no ``registry_url`` at all) is the JSON file; a
``postgresql://`` (or ``postgres://``) URL is a database shared by replicas.
The URL may carry a password: it is never repeated in an error, a log line or
``display``.
"""

from __future__ import annotations

import enum
from pathlib import Path

import attrs
import psycopg2
import psycopg2.extensions

from gateway.registry.postgres_store import PostgresRegistryStore
from gateway.registry.protocol import Registry
from gateway.registry.store import FileRegistryStore

FILE_PREFIX = "file:"
POSTGRESQL_PREFIXES = ("postgresql://", "postgres://")


class RegistryKind(enum.StrEnum):
    """The two kinds of store."""

    FILE = "file"
    """A JSON file, shared by the gateway processes of one host."""
    POSTGRESQL = "postgresql"
    """A schema in a PostgreSQL database, shared by gateways on several hosts."""


@attrs.frozen
class RegistryLocation:
    """A parsed ``registry_url``."""

    kind: RegistryKind
    """Which store serves it."""
    path: Path | None = None
    """The file, for ``FILE``."""
    url: str | None = attrs.field(default=None, repr=False)
    """The libpq URL, for ``POSTGRESQL``; may hold a password."""

    @classmethod
    def file(cls, path: Path) -> RegistryLocation:
        return cls(RegistryKind.FILE, path=path)

    @classmethod
    def parse(cls, text: str) -> RegistryLocation:
        """Read ``file:PATH`` or ``postgresql://...``; ``ValueError`` says what is wrong without repeating ``text``."""
        text = text.strip()
        if text.startswith(FILE_PREFIX):
            path = text[len(FILE_PREFIX) :]
            if path.startswith("///"):  # file:///var/lib/... , the URL spelling of an absolute path
                path = path[2:]
            if not path or path.startswith("//"):
                raise ValueError("registry_url file:PATH needs a path, e.g. file:data/registry.json")
            return cls.file(Path(path))
        if text.startswith(POSTGRESQL_PREFIXES):
            try:
                psycopg2.extensions.parse_dsn(text)
            except psycopg2.ProgrammingError:
                raise ValueError(
                    "registry_url is not a URL libpq can read; write postgresql://user:password@host:port/dbname"
                ) from None
            return cls(RegistryKind.POSTGRESQL, url=text)
        scheme = text.split(":", 1)[0][:20] if ":" in text else ""
        raise ValueError(
            "registry_url must be file:PATH or postgresql://user:password@host:port/dbname"
            + (f", not a {scheme!r} URL" if scheme.isalnum() else "")
        )

    @property
    def display(self) -> str:
        """The location for people: ``file:PATH``, or the URL without its password."""
        if self.kind is RegistryKind.FILE:
            return f"{FILE_PREFIX}{self.path}"
        parts = psycopg2.extensions.parse_dsn(self.url or "")
        user = f"{parts['user']}@" if parts.get("user") else ""
        port = f":{parts['port']}" if parts.get("port") else ""
        return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"

    @property
    def password(self) -> str | None:
        """The URL's password, for the log redactor."""
        if self.kind is RegistryKind.FILE:
            return None
        return psycopg2.extensions.parse_dsn(self.url or "").get("password")


def open_registry(location: RegistryLocation, secret_key: str | None, *, max_staleness: float = 0.0) -> Registry:
    """The store for ``location``; nothing is read or connected until ``open`` (or a command's method).

    ``max_staleness`` (seconds, 0: none) is how long a registry in PostgreSQL may go unconfirmed before the
    store reports ``stale`` (a file is read where it lies, never stale).
    """
    if location.kind is RegistryKind.POSTGRESQL:
        assert location.url is not None
        return PostgresRegistryStore(location.url, location.display, secret_key, max_staleness=max_staleness)
    assert location.path is not None
    return FileRegistryStore(location.path, secret_key)
