"""The registry's content: databases, local table names and grants, as immutable values.

Every change is a method returning a new ``RegistryState`` (paired with a
report of what changed, where the caller answers one) or raising a
``gateway.errors`` exception, so a failed operation cannot leave a half-made
change behind: the store only writes a state that was built completely.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

import attrs

from gateway.contract.driver_protocol import CatalogTable, ConnectionData
from gateway.errors import BadRequest, DatabaseExists, DatabaseNotFound, TableExists, TableNotFound

FORMAT_VERSION = 2
"""Version of the registry file layout this code writes (it reads version 1 too, ``file_format``)."""


@attrs.frozen
class TableAddress:
    """A table's full path: the specification's (database, folder, table)."""

    database: str
    """Local name of the registered database."""
    folder: str
    """Schema, as the database spells it."""
    table: str
    """Relation name in the folder, as the database spells it."""


@attrs.frozen
class DatabaseRecord:
    """A registered database.

    Its connection holds the fields its driver declared (``gateway.contract.connection_fields``),
    by name, secrets apart; nothing else is stored or answered.
    """

    local_name: str
    """The name the gateway knows it by (``local_database_name``)."""
    base_type: str
    """Driver name, e.g. ``postgres``."""
    connection: ConnectionData = attrs.field(factory=ConnectionData)
    """Where it is and how to log in: the declared fields' values; its secrets are never answered or logged."""

    @classmethod
    def of(cls, local_name: str, base_type: str, connection: ConnectionData) -> DatabaseRecord:
        """A record holding ``connection``'s fields."""
        return cls(local_name, base_type, connection)

    def with_connection(self, connection: ConnectionData) -> DatabaseRecord:
        """The same database reached through ``connection``."""
        return attrs.evolve(self, connection=connection)


@attrs.frozen
class GrantLimits:
    """What narrows one token's grant of one table (issue 22); the default is the whole table, for ever."""

    columns: tuple[str, ...] | None = None
    """The granted columns, in the order the administrator gave them (None: every column)."""
    row_filter: str | None = None
    """A boolean SQL expression over the table's own columns, as the driver normalised it (None: every row)."""
    expires_at: datetime.datetime | None = None
    """When the grant stops counting, timezone-aware (None: never)."""

    @property
    def whole(self) -> bool:
        """True for the default: every column and row, no end (such grants keep no limits record)."""
        return self == GrantLimits()

    @property
    def narrows(self) -> bool:
        """True when the grant hides columns or rows (an expiry alone narrows nothing)."""
        return self.columns is not None or self.row_filter is not None

    def expired(self, now: datetime.datetime) -> bool:
        """True once ``now`` is at or past ``expires_at``: the grant is then as if it were not there."""
        return self.expires_at is not None and now >= self.expires_at


NO_LIMITS = GrantLimits()
"""A whole-table grant without end: what a grant without a limits record is."""


def utc_now() -> datetime.datetime:
    """The clock grants expire by, read at each request (replicas agree without any timer)."""
    return datetime.datetime.now(datetime.timezone.utc)


@attrs.frozen
class TableRecord:
    """A table known under a local name."""

    local_name: str
    """Unique across the gateway."""
    address: TableAddress
    """Where the table is."""


@attrs.frozen
class DatabaseRemoval:
    """What unregistering a database took away with it."""

    tables: int
    """Local table names removed."""
    grants: int
    """Grants removed, counting each (token, table) pair once."""


@attrs.frozen
class CatalogChanges:
    """What refreshing a database's catalog changed."""

    added: tuple[str, ...]
    """Local names given to tables new in the database, sorted."""
    removed: tuple[str, ...]
    """Local names of tables gone from the database, sorted; their grants went with them."""
    unchanged: int
    """Tables still there, under the local name they had."""


@attrs.frozen
class RegistryState:
    """Everything the registry file holds."""

    token_salt: str
    """Key of the HMAC that turns user tokens into the hashes kept here."""
    databases: Mapping[str, DatabaseRecord] = attrs.field(factory=dict)
    """Registered databases by local name."""
    tables: Mapping[str, TableRecord] = attrs.field(factory=dict)
    """Tables by local table name."""
    grants: Mapping[str, frozenset[TableAddress]] = attrs.field(factory=dict)
    """Token hash to the tables it may read."""
    minted_tokens: frozenset[str] = attrs.field(factory=frozenset)
    """Hashes of the user tokens the gateway issued (``PUT /UserToken``)."""
    grant_limits: Mapping[tuple[str, TableAddress], GrantLimits] = attrs.field(factory=dict)
    """(token hash, table) to what narrows that grant; a grant absent here is the whole table without end."""
    _local_name_by_address: dict[TableAddress, str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        index = {record.address: name for name, record in self.tables.items()}
        object.__setattr__(self, "_local_name_by_address", index)

    # -- reading ---------------------------------------------------------

    def database(self, local_name: str) -> DatabaseRecord:
        record = self.databases.get(local_name)
        if record is None:
            raise DatabaseNotFound(f"no database is registered as {local_name!r}")
        return record

    def table_by_local_name(self, local_name: str) -> TableRecord:
        record = self.tables.get(local_name)
        if record is None:
            raise TableNotFound(f"no table has the local name {local_name!r}")
        return record

    def table_by_address(self, address: TableAddress) -> TableRecord:
        name = self._local_name_by_address.get(address)
        if name is None:
            raise TableNotFound(
                f"no table {address.table!r} in folder {address.folder!r} of database {address.database!r}"
                " is registered"
            )
        return self.tables[name]

    def limits(self, token_hash: str, address: TableAddress) -> GrantLimits:
        """What narrows the token's grant of ``address`` (``NO_LIMITS`` for a whole grant)."""
        return self.grant_limits.get((token_hash, address), NO_LIMITS)

    def live_grants(self, token_hash: str, now: datetime.datetime | None = None) -> frozenset[TableAddress]:
        """The tables granted to the token that have not expired at ``now`` (default: the clock now)."""
        addresses = self.grants.get(token_hash, frozenset())
        if not self.grant_limits:
            return addresses
        moment = now or utc_now()
        return frozenset(a for a in addresses if not self.limits(token_hash, a).expired(moment))

    def granted_tables(
        self, token_hash: str, database: str | None = None, *, expired_too: bool = False
    ) -> list[TableRecord]:
        """Tables the token may read (optionally in one database), by local name; expired grants only if asked."""
        addresses = self.grants.get(token_hash, frozenset()) if expired_too else self.live_grants(token_hash)
        records = [self.tables[self._local_name_by_address[a]] for a in addresses if a in self._local_name_by_address]
        return [r for r in records if database is None or r.address.database == database]

    def granted_refs(
        self, token_hash: str, database: str, now: datetime.datetime | None = None
    ) -> frozenset[tuple[str, str]]:
        """``(folder, table)`` pairs the token may read in one database (expired grants left out)."""
        return frozenset((a.folder, a.table) for a in self.live_grants(token_hash, now) if a.database == database)

    def expired_refs(
        self, token_hash: str, database: str, now: datetime.datetime | None = None
    ) -> frozenset[tuple[str, str]]:
        """``(folder, table)`` pairs whose grant to the token expired (for the operator's audit only)."""
        granted = {a for a in self.grants.get(token_hash, frozenset()) if a.database == database}
        live = self.live_grants(token_hash, now)
        return frozenset((a.folder, a.table) for a in granted - live)

    def narrowing(
        self, token_hash: str, database: str, now: datetime.datetime | None = None
    ) -> dict[tuple[str, str], GrantLimits]:
        """The token's live grants in ``database`` that are narrower than the table, by ``(folder, table)``."""
        found: dict[tuple[str, str], GrantLimits] = {}
        if not self.grant_limits:
            return found
        moment = now or utc_now()
        for address in self.grants.get(token_hash, frozenset()):  # the token's grants, not every token's limits
            limits = self.limits(token_hash, address)
            if address.database == database and limits.narrows and not limits.expired(moment):
                found[(address.folder, address.table)] = limits
        return found

    # -- changing --------------------------------------------------------

    def with_database(self, record: DatabaseRecord, catalog: Iterable[CatalogTable]) -> RegistryState:
        """Register a database and give each of its tables the default local name."""
        if record.local_name in self.databases:
            raise DatabaseExists(f"a database is already registered as {record.local_name!r}")
        tables = dict(self.tables)
        for entry in sorted(catalog, key=lambda t: (t.folder, t.table)):
            address = TableAddress(record.local_name, entry.folder, entry.table)
            name = _free_name(f"{record.local_name}_{entry.folder}_{entry.table}", tables)
            tables[name] = TableRecord(name, address)
        return attrs.evolve(self, databases={**self.databases, record.local_name: record}, tables=tables)

    def with_table_renamed(self, table: TableRecord, new_local_name: str) -> RegistryState:
        """Give a table a new local name; its grants follow it because they hold its address."""
        holder = self.tables.get(new_local_name)
        if holder is not None and holder.address != table.address:
            raise TableExists(f"the local table name {new_local_name!r} is already used by another table")
        tables = {name: record for name, record in self.tables.items() if record.address != table.address}
        tables[new_local_name] = TableRecord(new_local_name, table.address)
        return attrs.evolve(self, tables=tables)

    def with_grant(self, token_hash: str, table: TableRecord, limits: GrantLimits = NO_LIMITS) -> RegistryState:
        """Let the token read a table as ``limits`` says; granting again replaces the limits."""
        granted = self.grants.get(token_hash, frozenset())
        key = (token_hash, table.address)
        if table.address in granted and self.limits(token_hash, table.address) == limits:
            return self
        kept = {k: v for k, v in self.grant_limits.items() if k != key}
        if not limits.whole:
            kept[key] = limits
        return attrs.evolve(self, grants={**self.grants, token_hash: granted | {table.address}}, grant_limits=kept)

    def without_grant(self, token_hash: str, table: TableRecord) -> RegistryState:
        """Take one table from a token; the same state when it was not granted."""
        granted = self.grants.get(token_hash, frozenset())
        if table.address not in granted:
            return self
        grants = _without_empty({**self.grants, token_hash: granted - {table.address}})
        return attrs.evolve(self, grants=grants, grant_limits=_limits_of(grants, self.grant_limits))

    def with_minted_token(self, token_hash: str) -> RegistryState:
        """Remember that the gateway issued the token with this hash."""
        return attrs.evolve(self, minted_tokens=self.minted_tokens | {token_hash})

    def with_connection(self, record: DatabaseRecord) -> RegistryState:
        """Replace a registered database's connection data; tables and grants stay."""
        current = self.database(record.local_name)
        if record.base_type != current.base_type:
            raise BadRequest(
                f"parameter 'base_type' cannot change from {current.base_type!r};"
                " unregister the database and add it again"
            )
        if record == current:
            return self
        return attrs.evolve(self, databases={**self.databases, record.local_name: record})

    def without_database(self, local_name: str) -> tuple[RegistryState, DatabaseRemoval]:
        """Unregister a database with its tables and every grant on them."""
        self.database(local_name)
        tables = {name: record for name, record in self.tables.items() if record.address.database != local_name}
        grants = {
            token_hash: frozenset(a for a in addresses if a.database != local_name)
            for token_hash, addresses in self.grants.items()
        }
        removed_grants = sum(len(self.grants[h]) - len(kept) for h, kept in grants.items())
        databases = {name: record for name, record in self.databases.items() if name != local_name}
        kept = _without_empty(grants)
        state = attrs.evolve(self, databases=databases, tables=tables, grants=kept,
                             grant_limits=_limits_of(kept, self.grant_limits))
        return state, DatabaseRemoval(tables=len(self.tables) - len(tables), grants=removed_grants)

    def with_catalog_refreshed(
        self, local_name: str, catalog: Iterable[CatalogTable]
    ) -> tuple[RegistryState, CatalogChanges]:
        """Match a database's tables to its catalog as read now.

        Tables still there keep their local names (renamed or not) and grants;
        tables gone lose both; new tables get default names, as AddDatabase gives.
        """
        self.database(local_name)
        present = {TableAddress(local_name, entry.folder, entry.table) for entry in catalog}
        registered = {r.address: r for r in self.tables.values() if r.address.database == local_name}
        removed = sorted(r.local_name for address, r in registered.items() if address not in present)
        tables = {
            name: record
            for name, record in self.tables.items()
            if record.address.database != local_name or record.address in present
        }
        added: list[str] = []
        for address in sorted(present - registered.keys(), key=lambda a: (a.folder, a.table)):
            name = _free_name(f"{local_name}_{address.folder}_{address.table}", tables)
            tables[name] = TableRecord(name, address)
            added.append(name)
        changes = CatalogChanges(
            added=tuple(sorted(added)), removed=tuple(removed), unchanged=len(registered) - len(removed)
        )
        if not added and not removed:
            return self, changes
        grants = {
            token_hash: frozenset(a for a in addresses if a.database != local_name or a in present)
            for token_hash, addresses in self.grants.items()
        }
        kept = _without_empty(grants)
        return attrs.evolve(self, tables=tables, grants=kept, grant_limits=_limits_of(kept, self.grant_limits)), changes


def _without_empty(grants: Mapping[str, frozenset[TableAddress]]) -> dict[str, frozenset[TableAddress]]:
    return {token_hash: addresses for token_hash, addresses in grants.items() if addresses}


def _limits_of(
    grants: Mapping[str, frozenset[TableAddress]], limits: Mapping[tuple[str, TableAddress], GrantLimits]
) -> dict[tuple[str, TableAddress], GrantLimits]:
    """The limits of the grants still there (a revoked or removed grant takes its limits with it)."""
    return {(h, a): v for (h, a), v in limits.items() if a in grants.get(h, frozenset())}


def _free_name(wanted: str, taken: Mapping[str, object]) -> str:
    if wanted not in taken:
        return wanted
    suffix = 2
    while f"{wanted}_{suffix}" in taken:
        suffix += 1
    return f"{wanted}_{suffix}"
