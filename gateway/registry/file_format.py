"""The registry file's JSON layout, version ``FORMAT_VERSION``, and its checks on load.

The layout is lists of plain records, so it stays readable and diffable::

    {"format_version": 2, "token_salt": "...",
     "databases": [{"local_name", "base_type", "connection": {"<field>": value, ...},
                    "secrets": {"<secret field>": "fernet:...", ...}}],
     "tables": [{"local_name", "database", "folder", "table"}],
     "grants": [{"token_hash", "tables": [{"database", "folder", "table",
                                           ["columns", "row_filter", "expires_at"]}]}],
     "minted_tokens": ["<token hash>", ...]}

Version 2 (issue 21) stores a database's connection as one object of the
fields its driver declares, any names, secrets apart in ``secrets`` (absent
when none): version 1 had five fixed keys (``host``, ``port``, ``database``,
``username``, ``password``). A version 1 file (or registry document in
PostgreSQL) is read by moving those keys: ``host`` becomes the field ``ip``,
``password`` a secret, the others keep their names; nothing is lost, and the
next change writes version 2. A gateway older than version 2 refuses a version 2
registry (it names the newer format) rather than misreading it.

Four additions kept version 1, because a file written before them loads
unchanged and means the same:

- ``minted_tokens`` (hashes of the user tokens ``PUT /UserToken`` issued) is
  optional; absent means none. It is written only when there is one, so a file
  without minted tokens stays readable by a gateway that predates the key.
- ``password`` (version 2: every value of ``secrets``) may be ``fernet:<token>``
  (encrypted with the ``secret_key`` setting) or ``clear:<password>``; see
  ``secrets_at_rest``. Loading such a password without the right key fails
  with a message naming the database;
  the file is never rewritten then. A gateway that predates encryption would
  take ``fernet:...`` for a password and fail to connect, so upgrade every
  gateway sharing a file before configuring a key.
- (version 1) ``host``, ``port``, ``database``, ``username`` and ``password`` of
  a database were present only when its driver declared them; a gateway that
  predates the declarations refuses a file holding a database without one of
  them (a missing field), never misreads it.
- A granted table may carry ``columns`` (a list of names), ``row_filter`` (the
  filter's text) and ``expires_at`` (RFC 3339, UTC), each only when set: a grant
  without them is the whole table without end, as before (issue 22); version 2 keeps them as they are. A gateway
  that predates them refuses a file holding one (an unexpected key), so it never
  serves a narrowed grant as a whole one.
"""

from __future__ import annotations

import datetime
from typing import Any

import attrs
import cattrs
import orjson

from gateway.contract.connection_fields import ConnectionData
from gateway.registry.models import (
    FORMAT_VERSION,
    DatabaseRecord,
    GrantLimits,
    RegistryState,
    TableAddress,
    TableRecord,
)
from gateway.registry.secrets_at_rest import PasswordCipher, PasswordDecryptionError

_CLEAR_TEXT = PasswordCipher()
_READABLE_VERSIONS = (1, FORMAT_VERSION)
_VERSION_1_FIELDS = {"host": "ip", "port": "port", "database": "database", "username": "username"}
"""Version 1's connection keys, and the connection field each held."""


class RegistryFormatError(Exception):
    """The file's content is not a registry this gateway can read; the message says why."""


@attrs.frozen
class _DatabaseRow:
    local_name: str
    base_type: str
    connection: dict[str, str | int | bool] = attrs.field(factory=dict)
    secrets: dict[str, str | int | bool] = attrs.field(factory=dict)  # text, checked on load (cattrs would str() a number)


@attrs.frozen
class _TableRow:
    local_name: str
    database: str
    folder: str
    table: str


@attrs.frozen
class _GrantedTable:
    database: str
    folder: str
    table: str
    columns: list[str] | None = None
    row_filter: str | None = None
    expires_at: str | None = None


@attrs.frozen
class _GrantRow:
    token_hash: str
    tables: list[_GrantedTable]


_LIMIT_KEYS = ("columns", "row_filter", "expires_at")


def _granted_table(address: TableAddress, limits: GrantLimits) -> _GrantedTable:
    return _GrantedTable(
        address.database,
        address.folder,
        address.table,
        columns=None if limits.columns is None else list(limits.columns),
        row_filter=limits.row_filter,
        expires_at=None if limits.expires_at is None else rfc3339(limits.expires_at),
    )


def rfc3339(moment: datetime.datetime) -> str:
    """``moment`` in UTC as RFC 3339 with a ``Z`` (how the file and the answers write an expiry)."""
    return moment.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def _limits(row: _GrantedTable) -> GrantLimits:
    try:
        expires_at = None if row.expires_at is None else datetime.datetime.fromisoformat(row.expires_at)
    except ValueError:
        raise RegistryFormatError(f"expires_at {row.expires_at!r} of a grant is not an RFC 3339 time") from None
    if expires_at is not None and expires_at.tzinfo is None:
        raise RegistryFormatError(f"expires_at {row.expires_at!r} of a grant has no time zone")
    columns = None if row.columns is None else tuple(row.columns)
    return GrantLimits(columns=columns, row_filter=row.row_filter, expires_at=expires_at)


@attrs.frozen
class _RegistryDocument:
    format_version: int
    token_salt: str
    databases: list[_DatabaseRow]
    tables: list[_TableRow]
    grants: list[_GrantRow]
    minted_tokens: list[str] = attrs.field(factory=list)


_converter = cattrs.Converter(forbid_extra_keys=True)


def _connection_value(value: Any, _: Any) -> str | int | bool:
    if isinstance(value, str | int | bool):  # bool is an int: kept as it is
        return value
    raise TypeError(f"a connection value must be text, an integer or a bool, not {type(value).__name__}")


_converter.register_structure_hook(str | int | bool, _connection_value)


def dump_registry(state: RegistryState, cipher: PasswordCipher = _CLEAR_TEXT) -> bytes:
    """The file's bytes; passwords as ``cipher`` spells them (clear text when it has no key)."""
    document = _RegistryDocument(
        format_version=FORMAT_VERSION,
        token_salt=state.token_salt,
        databases=[
            _DatabaseRow(
                record.local_name,
                record.base_type,
                dict(record.connection.values),
                {name: cipher.seal(value) for name, value in record.connection.secrets.items()},
            )
            for record in sorted(state.databases.values(), key=lambda d: d.local_name)
        ],
        tables=[
            _TableRow(r.local_name, r.address.database, r.address.folder, r.address.table)
            for r in sorted(state.tables.values(), key=lambda r: r.local_name)
        ],
        grants=[
            _GrantRow(token_hash, [_granted_table(a, state.limits(token_hash, a))
                                   for a in sorted(addresses, key=attrs.astuple)])
            for token_hash, addresses in sorted(state.grants.items())
            if addresses
        ],
        minted_tokens=sorted(state.minted_tokens),
    )
    raw = _converter.unstructure(document)
    for database in raw["databases"]:
        if not database["secrets"]:
            del database["secrets"]
    if not raw["minted_tokens"]:
        del raw["minted_tokens"]
    for grant in raw["grants"]:
        for table in grant["tables"]:
            for key in _LIMIT_KEYS:  # a whole-table grant is written as before the limits existed
                if table[key] is None:
                    del table[key]
    return orjson.dumps(raw, option=orjson.OPT_INDENT_2) + b"\n"


def load_registry(content: bytes, cipher: PasswordCipher = _CLEAR_TEXT) -> RegistryState:
    """Parse and check a registry file; raise ``RegistryFormatError`` saying what is wrong.

    Encrypted passwords are decrypted with ``cipher``; one that cannot be is an
    error, never a database left without its password.
    """
    try:
        raw: Any = orjson.loads(content)
    except orjson.JSONDecodeError as error:
        raise RegistryFormatError(f"not valid JSON ({error})") from None
    if not isinstance(raw, dict):
        raise RegistryFormatError("the top level is not a JSON object")
    version = raw.get("format_version")
    if version not in _READABLE_VERSIONS or isinstance(version, bool):
        raise RegistryFormatError(
            f"format_version is {version!r}; this gateway reads versions {' and '.join(map(str, _READABLE_VERSIONS))}"
            + (" (the file was written by a newer gateway)" if isinstance(version, int) and version > FORMAT_VERSION else "")
        )
    if version == 1:
        raw = _from_version_1(raw)
    try:
        document = _converter.structure(raw, _RegistryDocument)
    except cattrs.BaseValidationError as error:
        problems = "; ".join(cattrs.transform_error(error))
        raise RegistryFormatError(f"unexpected content: {problems}") from None
    for row in document.databases:
        if not all(isinstance(value, str) for value in row.secrets.values()):
            raise RegistryFormatError(f"a secret of database {row.local_name!r} is not text")
    try:
        records = [
            DatabaseRecord(
                row.local_name,
                row.base_type,
                ConnectionData(
                    row.connection, {name: cipher.open(str(value), row.local_name) for name, value in row.secrets.items()}
                ),
            )
            for row in document.databases
        ]
    except PasswordDecryptionError as error:
        raise RegistryFormatError(str(error)) from None
    return _check_references(document, records)


def _from_version_1(raw: dict[str, Any]) -> dict[str, Any]:
    """A version 1 document in version 2's layout: the five connection keys moved into ``connection`` and ``secrets``."""
    databases = raw.get("databases")
    if not isinstance(databases, list):
        return raw  # structuring says what is wrong
    moved = []
    for database in databases:
        if not isinstance(database, dict):
            moved.append(database)
            continue
        row = {key: value for key, value in database.items() if key not in (*_VERSION_1_FIELDS, "password")}
        row["connection"] = {
            field: database[key] for key, field in _VERSION_1_FIELDS.items() if database.get(key) is not None
        }
        if database.get("password") is not None:
            row["secrets"] = {"password": database["password"]}
        moved.append(row)
    return {**raw, "format_version": FORMAT_VERSION, "databases": moved}


def _check_references(document: _RegistryDocument, records: list[DatabaseRecord]) -> RegistryState:
    databases = {d.local_name: d for d in records}
    if len(databases) != len(records):
        raise RegistryFormatError("a database local name appears twice")
    tables: dict[str, TableRecord] = {}
    for row in document.tables:
        if row.database not in databases:
            raise RegistryFormatError(f"table {row.local_name!r} refers to unknown database {row.database!r}")
        if row.local_name in tables:
            raise RegistryFormatError(f"the local table name {row.local_name!r} appears twice")
        tables[row.local_name] = TableRecord(row.local_name, TableAddress(row.database, row.folder, row.table))
    grants = {g.token_hash: frozenset(TableAddress(t.database, t.folder, t.table) for t in g.tables)
              for g in document.grants}
    grant_limits = {}
    for grant in document.grants:
        for granted in grant.tables:
            limits = _limits(granted)
            if not limits.whole:
                grant_limits[(grant.token_hash, TableAddress(granted.database, granted.folder, granted.table))] = limits
    return RegistryState(
        grant_limits=grant_limits,
        token_salt=document.token_salt,
        databases=databases,
        tables=tables,
        grants=grants,
        minted_tokens=frozenset(document.minted_tokens),
    )
