"""The registry file's JSON layout, version ``FORMAT_VERSION``, and its checks on load.

The layout is lists of plain records, so it stays readable and diffable::

    {"format_version": 1, "token_salt": "...",
     "databases": [{"local_name", "host", "port", "database", "username", "password", "base_type"}],
     "tables": [{"local_name", "database", "folder", "table"}],
     "grants": [{"token_hash", "tables": [{"database", "folder", "table",
                                           ["columns", "row_filter", "expires_at"]}]}],
     "minted_tokens": ["<token hash>", ...]}

Four additions kept version 1, because a file written before them loads
unchanged and means the same:

- ``minted_tokens`` (hashes of the user tokens ``PUT /UserToken`` issued) is
  optional; absent means none. It is written only when there is one, so a file
  without minted tokens stays readable by a gateway that predates the key.
- ``password`` may be ``fernet:<token>`` (encrypted with the ``secret_key``
  setting) or ``clear:<password>``; see ``secrets_at_rest``. Loading such a
  password without the right key fails with a message naming the database;
  the file is never rewritten then. A gateway that predates encryption would
  take ``fernet:...`` for a password and fail to connect, so upgrade every
  gateway sharing a file before configuring a key.
- ``host``, ``port``, ``database``, ``username`` and ``password`` of a database
  are present only when its driver declares them (``gateway.contract.connection_fields``);
  PostgreSQL declares all five, so its databases are written as before. A
  gateway that predates the declarations refuses a file holding a database
  without one of them (a missing field), never misreads it.
- A granted table may carry ``columns`` (a list of names), ``row_filter`` (the
  filter's text) and ``expires_at`` (RFC 3339, UTC), each only when set: a grant
  without them is the whole table without end, as before (issue 22). A gateway
  that predates them refuses a file holding one (an unexpected key), so it never
  serves a narrowed grant as a whole one.
"""

from __future__ import annotations

import datetime
from typing import Any

import attrs
import cattrs
import orjson

from gateway.contract.connection_fields import SLOTS
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
_CONNECTION_SLOTS = tuple(SLOTS.values())


class RegistryFormatError(Exception):
    """The file's content is not a registry this gateway can read; the message says why."""


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
    databases: list[DatabaseRecord]
    tables: list[_TableRow]
    grants: list[_GrantRow]
    minted_tokens: list[str] = attrs.field(factory=list)


_converter = cattrs.Converter(forbid_extra_keys=True)


def dump_registry(state: RegistryState, cipher: PasswordCipher = _CLEAR_TEXT) -> bytes:
    """The file's bytes; passwords as ``cipher`` spells them (clear text when it has no key)."""
    document = _RegistryDocument(
        format_version=FORMAT_VERSION,
        token_salt=state.token_salt,
        databases=[
            attrs.evolve(record, password=None if record.password is None else cipher.seal(record.password))
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
        for slot in _CONNECTION_SLOTS:  # a field the database's driver did not declare is not stored
            if database[slot] is None:
                del database[slot]
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
    if version != FORMAT_VERSION:
        raise RegistryFormatError(
            f"format_version is {version!r}; this gateway reads version {FORMAT_VERSION}"
            + (" (the file was written by a newer gateway)" if isinstance(version, int) and version > FORMAT_VERSION else "")
        )
    try:
        document = _converter.structure(raw, _RegistryDocument)
    except cattrs.BaseValidationError as error:
        problems = "; ".join(cattrs.transform_error(error))
        raise RegistryFormatError(f"unexpected content: {problems}") from None
    try:
        databases = [
            attrs.evolve(record, password=cipher.open(record.password, record.local_name))
            if record.password is not None
            else record
            for record in document.databases
        ]
    except PasswordDecryptionError as error:
        raise RegistryFormatError(str(error)) from None
    return _check_references(attrs.evolve(document, databases=databases))


def _check_references(document: _RegistryDocument) -> RegistryState:
    databases = {d.local_name: d for d in document.databases}
    if len(databases) != len(document.databases):
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
