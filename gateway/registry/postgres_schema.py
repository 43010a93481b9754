"""The registry's tables in PostgreSQL, its connections, and the blocking operations (start-up and commands).

Everything lives in the schema ``dbgateway_registry``::

    schema_migrations (version integer PRIMARY KEY, applied_at timestamptz)
        one row per migration applied; the highest is the layout in use
    registry (singleton boolean PRIMARY KEY, version bigint, document jsonb, changed_at timestamptz)
        one row: the whole registry as the file format's JSON (passwords sealed
        with secret_key exactly as in the file) and a version counted up by every change

One row holding the document, rather than a table per record kind, keeps
``models.RegistryState`` and ``file_format`` the only description of the
content and its checks, and makes every change one row lock and one update.
A change rewrites the whole document (about 150 bytes per grant or table): far
below what a registry database notices at the rate administrators change
things. ``SELECT jsonb_pretty(document) FROM dbgateway_registry.registry``
shows it. A grant's ``columns``, ``row_filter`` and ``expires_at`` (issue 22)
are keys of the document's granted tables, as in the file: they needed no
migration, and a document without them loads as before.

Every change is followed, in its transaction, by ``NOTIFY dbgateway_registry``
with the new version, so the other gateways reload at once.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg2
import psycopg2.extensions

from gateway.registry.file_format import RegistryFormatError, dump_registry, load_registry
from gateway.registry.models import RegistryState
from gateway.registry.protocol import (
    RegistryLoadError,
    RegistryNotEmpty,
    RegistryRefused,
    RegistryUnreachable,
    is_empty,
)
from gateway.registry.secrets_at_rest import PasswordCipher

SCHEMA = "dbgateway_registry"
CHANNEL = "dbgateway_registry"
"""The LISTEN/NOTIFY channel; the payload is the registry's new version."""
SCHEMA_VERSION = 1
"""The highest migration this code knows."""

CONNECT_TIMEOUT_SECONDS = 3.0
"""How long connecting to the registry database may take."""

# Session settings of every registry connection: a gateway that dies (or hangs) inside a change
# must not hold the registry row for long, and a change waits for another's row lock 5 s at most.
SESSION_OPTIONS = "-c lock_timeout=5000 -c idle_in_transaction_session_timeout=10000 -c statement_timeout=10000"
CONNECTION_PARAMETERS: dict[str, Any] = {
    "application_name": "dbgateway registry",
    "options": SESSION_OPTIONS,
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}

_MIGRATION_LOCK = 0x6462677752656769  # pg_advisory_xact_lock key: start-ups of several gateways migrate one at a time

MIGRATIONS = {
    1: f"""
        CREATE TABLE {SCHEMA}.schema_migrations (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE {SCHEMA}.registry (
            singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            version bigint NOT NULL,
            document jsonb NOT NULL,
            changed_at timestamptz NOT NULL DEFAULT now()
        );
        COMMENT ON TABLE {SCHEMA}.registry IS
            'dbgateway registry: one row, the whole registry as JSON; change it only through dbgateway';
    """,
}

SELECT_FOR_UPDATE = f"SELECT version, document::text FROM {SCHEMA}.registry FOR UPDATE"
SELECT_VERSION_FOR_UPDATE = f"SELECT version FROM {SCHEMA}.registry FOR UPDATE"
SELECT_CHANGED = f"SELECT version, CASE WHEN version = %s THEN NULL ELSE document::text END FROM {SCHEMA}.registry"
# One message: the change, its notification and the commit (a single round trip).
SAVE_AND_COMMIT = f"""
    UPDATE {SCHEMA}.registry SET version = %(version)s, document = %(document)s::jsonb, changed_at = now();
    SELECT pg_notify('{CHANNEL}', %(version)s::text);
    COMMIT
"""


class RegistryDatabase:
    """Blocking access to the registry tables through psycopg2, one short connection per call."""

    def __init__(self, url: str, display: str) -> None:
        self._url = url
        self.location = f"registry database {display}"
        """Where the registry is, for messages: the URL without its password."""

    @contextmanager
    def transaction(self) -> Iterator[psycopg2.extensions.cursor]:
        """A cursor in a transaction, committed when the block ends, rolled back if it raises."""
        try:
            connection = psycopg2.connect(
                self._url, connect_timeout=int(CONNECT_TIMEOUT_SECONDS), **CONNECTION_PARAMETERS
            )
        except psycopg2.OperationalError as error:
            if refuses_the_account(error):
                raise RegistryRefused(
                    f"{self.location} refused this gateway ({first_line(error)}); fix registry_url, restarting will"
                    " not help"
                ) from None
            raise RegistryUnreachable(f"{self.location} cannot be reached: {first_line(error)}") from None
        try:
            with connection, connection.cursor() as cursor:
                yield cursor
        except psycopg2.OperationalError as error:
            raise RegistryUnreachable(f"{self.location} failed: {first_line(error)}") from None
        except psycopg2.Error as error:
            raise RegistryLoadError(self.location, first_line(error)) from None
        finally:
            connection.close()

    def open(self, cipher: PasswordCipher) -> tuple[int, RegistryState]:
        """Migrate the tables, create an empty registry if there is none, and load it."""
        with self.transaction() as cursor:
            self._migrate(cursor)
            empty = RegistryState(token_salt=secrets.token_hex(32))
            cursor.execute(
                f"INSERT INTO {SCHEMA}.registry (version, document) VALUES (1, %s::jsonb) ON CONFLICT DO NOTHING",
                (dump_registry(empty, cipher).decode(),),
            )
            cursor.execute(f"SELECT version, document::text FROM {SCHEMA}.registry")
            version, document = cursor.fetchone()
        return version, self.parse(document, cipher)

    def read_existing(self, cipher: PasswordCipher) -> RegistryState:
        with self.transaction() as cursor:
            row = self._locked_row(cursor)
        if row is None:
            raise RegistryLoadError(self.location, "it holds no dbgateway registry")
        return self.parse(row[1], cipher)

    def rotate_key(self, old: PasswordCipher, new: PasswordCipher) -> int:
        """Re-seal every password under ``new`` in one transaction; how many there are."""
        with self.transaction() as cursor:
            row = self._locked_row(cursor)
            if row is None:
                raise RegistryLoadError(self.location, "it holds no dbgateway registry")
            state = self.parse(row[1], old)
            self._save(cursor, row[0] + 1, dump_registry(state, new))
        return len(state.databases)

    def replace(self, state: RegistryState, cipher: PasswordCipher, *, force: bool) -> None:
        """Store ``state`` as the registry (creating the tables if needed); refuse a non-empty one unless ``force``."""
        with self.transaction() as cursor:
            self._migrate(cursor)
            row = self._locked_row(cursor)
            if row is not None and not force and not is_empty(self.parse(row[1], cipher)):
                raise RegistryNotEmpty(f"{self.location} already holds a registry")
            self._save(cursor, (row[0] if row else 0) + 1, dump_registry(state, cipher))

    def parse(self, document: str, cipher: PasswordCipher) -> RegistryState:
        try:
            return load_registry(document.encode(), cipher)
        except RegistryFormatError as error:
            raise RegistryLoadError(self.location, str(error)) from None

    def _locked_row(self, cursor: psycopg2.extensions.cursor) -> tuple[int, str] | None:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{SCHEMA}.registry",))
        if not cursor.fetchone()[0]:
            return None
        self._check_schema_version(cursor)
        cursor.execute(SELECT_FOR_UPDATE)
        row: tuple[int, str] | None = cursor.fetchone()
        return row

    @staticmethod
    def _save(cursor: psycopg2.extensions.cursor, version: int, document: bytes) -> None:
        cursor.execute(
            f"INSERT INTO {SCHEMA}.registry (version, document) VALUES (%s, %s::jsonb) ON CONFLICT (singleton)"
            " DO UPDATE SET version = excluded.version, document = excluded.document, changed_at = now()",
            (version, document.decode()),
        )
        cursor.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(version)))

    def _migrate(self, cursor: psycopg2.extensions.cursor) -> None:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        # Only when missing: CREATE SCHEMA IF NOT EXISTS would need the CREATE privilege on the database
        # even when an administrator made the schema for the registry's account beforehand.
        cursor.execute("SELECT to_regnamespace(%s) IS NULL", (SCHEMA,))
        if cursor.fetchone()[0]:
            cursor.execute(f"CREATE SCHEMA {SCHEMA}")
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{SCHEMA}.schema_migrations",))
        current = self._check_schema_version(cursor) if cursor.fetchone()[0] else 0
        for version in range(current + 1, SCHEMA_VERSION + 1):
            cursor.execute(MIGRATIONS[version])
            cursor.execute(f"INSERT INTO {SCHEMA}.schema_migrations (version) VALUES (%s)", (version,))

    def _check_schema_version(self, cursor: psycopg2.extensions.cursor) -> int:
        cursor.execute(f"SELECT coalesce(max(version), 0) FROM {SCHEMA}.schema_migrations")
        version: int = cursor.fetchone()[0]
        if version > SCHEMA_VERSION:
            raise RegistryLoadError(
                self.location,
                f"its tables are at version {version}, written by a newer gateway; this one knows {SCHEMA_VERSION}",
            )
        return version


def is_connection_lost(error: BaseException) -> bool:
    """The connection is gone (or the server is going away), as opposed to the server refusing a statement."""
    if isinstance(error, OSError | TimeoutError | psycopg2.InterfaceError):
        return True
    if isinstance(error, psycopg2.OperationalError):
        # No code: libpq lost the connection. 08: connection exceptions. 57P: the server shuts down,
        # the session was terminated (pg_terminate_backend), or it cannot accept connections yet.
        code = error.pgcode or ""
        return not code or code.startswith(("08", "57P"))
    return False


_REFUSALS = re.compile(
    r'FATAL: +(?:database ".*" does not exist|role ".*" does not exist|role ".*" is not permitted to log in'
    r'|.*authentication failed for user|no pg_hba\.conf entry|permission denied for database)'
    r"|fe_sendauth: no password supplied"
)
"""Connection failures that name the URL's account or database as the reason: the server answered and refused.
libpq reports them without a SQLSTATE, so they are told apart by the server's words, which are English unless
the server's lc_messages says otherwise (then they count as a server that does not answer: exit 1)."""


def refuses_the_account(error: psycopg2.OperationalError) -> bool:
    """Whether a failed connection was refused for what registry_url names, rather than for want of an answer."""
    return _REFUSALS.search(str(error)) is not None


def first_line(error: BaseException) -> str:
    """psycopg2's message without its DETAIL/HINT lines (libpq never puts the password in it)."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
