"""What a driver package tells the contract kit about its database: ``DriverUnderTest`` and its parts.

The kit knows nothing of any database. A driver package subclasses
``DriverUnderTest`` once: how to make a scratch database holding the kit's
tables, the AddDatabase inputs that register it, the types it claims with a
few values of each, the few queries the kit cannot write in standard SQL, the
queries that would read its catalog (each must be refused or show only granted
names), a probe that tells whether one of the gateway's queries still runs in
the database, and the kit's needs its database cannot meet (``Capability``,
each with the reason: those tests are skipped saying it).
"""

from __future__ import annotations

import abc
import enum
import re
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar

import attrs

_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")


def _identifier(instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    # The kit builds table names from it: it must need no quoting in any dialect.
    if not _IDENTIFIER.fullmatch(value):
        raise ValueError(
            f"{attribute.name} must be lower-case letters, digits and _ (starting with a letter), got {value!r}"
        )


class Capability(enum.Enum):
    """Something a few kit tests need from the database beyond the driver protocol; a driver may lack it."""

    WATCH_RUNNING_QUERY = "watch_running_query"
    """``query_running`` can tell from outside the gateway whether a query runs in the scratch database.

    Needed to see a timed-out or abandoned query stop. A database with no view of
    its running queries from another connection (DuckDB) lacks it; the 504 itself
    and the freed slot are still tested."""


@attrs.frozen
class ValueSample:
    """One value of a type, as the driver stores it and as GetData's JSON must carry it back."""

    stored: Any
    """The value handed to the database's own client library when the scratch database is filled."""
    json: Any
    """What the value is in GetData's JSON answer (``json.loads`` of it): ``1``, ``"2024-01-02"``, ``[1, 2]``."""

    @classmethod
    def unchanged(cls, value: Any) -> ValueSample:
        """A value that JSON carries back as it was stored (a number, a string)."""
        return cls(value, value)


CATALOG_PROBES: tuple[str, ...] = (
    "SELECT table_schema, table_name FROM information_schema.tables",
    "SELECT table_name, column_name FROM information_schema.columns",
    "SELECT table_name FROM information_schema.views",
)
"""The standard SQL catalog reads the kit sends to every driver, besides the driver's own ``catalog_probes``."""


@attrs.frozen
class ValueType:
    """A column type the driver claims to serve, with the values that prove it."""

    name: str = attrs.field(validator=_identifier)
    """A short lower-case label, used in table names and test ids (``integer``, ``text``, ``blob``)."""
    declared: str
    """The type as written in ``CREATE TABLE`` (``INTEGER``, ``timestamp with time zone``)."""
    described: str
    """The type name GetTableData answers for such a column (the driver's ``describe_table``)."""
    samples: tuple[ValueSample, ...]
    """Values of the type, edge cases included; the kit adds a NULL of its own."""
    result_type: str | None = None
    """``columns[].type`` GetData answers for such a column read as is (the first row holding a sample).

    ``None``: not checked."""


@attrs.frozen
class ScratchColumn:
    """A column of a table the kit asks for."""

    name: str
    """Its name: lower-case, no quoting needed."""
    type: ValueType
    """Its type: one of the driver's ``ValueType`` s."""


@attrs.frozen
class ScratchTable:
    """A table the scratch database must hold, in the driver's ``folder``, with these rows."""

    name: str = attrs.field(validator=_identifier)
    """The table's name: lower-case, no quoting needed."""
    columns: tuple[ScratchColumn, ...]
    """Its columns, in order."""
    rows: tuple[tuple[Any, ...], ...]
    """Its rows, each value as ``ValueSample.stored`` (or ``None`` for NULL), in column order."""


@attrs.frozen
class ScratchDatabase:
    """A database the driver made for one test."""

    parameters: Mapping[str, str]
    """The AddDatabase inputs that register it: the driver's declared connection fields, nothing else."""
    handle: Any = None
    """Whatever the driver's own methods (``query_running``) need to find it again: a path, a name."""


class DriverUnderTest(abc.ABC):
    """A driver package's description of its database for the contract kit (subclass it once).

    Queries the kit writes itself are standard SQL (``SELECT id, label FROM
    <qualified_name> ORDER BY id``); override ``qualified_name`` where your
    dialect quotes names differently.
    """

    base_type: ClassVar[str]
    """The driver's ``base_type`` (its entry point's name in ``dbgateway.drivers``)."""
    folder: ClassVar[str]
    """The folder (schema) scratch tables are made in, as the driver's catalog spells it."""
    id_type: ClassVar[ValueType]
    """An integer type for the kit's ``id`` columns; its samples are not used."""
    text_type: ClassVar[ValueType]
    """A text type for the kit's ``label`` columns; its samples are not used."""
    value_types: ClassVar[tuple[ValueType, ...]]
    """Every type the driver claims to serve; each gets a table and a round-trip test."""
    driver_options: ClassVar[Mapping[str, Any]] = {}
    """The ``[drivers.<base_type>]`` options the gateway under test builds the driver with."""
    catalog_probes: ClassVar[tuple[str, ...]]
    """Queries that read the database's catalog or metadata in your dialect (system tables, views, table functions,
    pragmas): every way you know a token holder could list tables. The kit sends each, and the standard
    ``CATALOG_PROBES``, with a token granted one table: each must be refused, or answer no other table's name."""
    lacks: ClassVar[Mapping[Capability, str]] = {}
    """The capabilities your database cannot offer, each with the reason the kit prints when it skips their tests."""

    def driver_options_in(self, workdir: Path) -> Mapping[str, Any]:
        """The options for a gateway whose scratch databases ``scratch_database`` makes in ``workdir``.

        ``driver_options`` unless overridden: a driver of file databases confined to a configured folder
        names ``workdir`` here (the example SQLite driver does).
        """
        return self.driver_options

    @abc.abstractmethod
    def scratch_database(
        self, tables: Sequence[ScratchTable], workdir: Path
    ) -> AbstractContextManager[ScratchDatabase]:
        """Make a new database holding ``tables`` (in ``folder``) for the ``with`` block; remove it after.

        ``workdir`` is the test's own empty directory, for databases that are files.
        """

    @abc.abstractmethod
    def slow_query(self, table: str) -> str:
        """A read of the scratch ``table`` that runs far longer than a minute and returns nothing before it ends."""

    @abc.abstractmethod
    def many_rows_query(self, table: str, count: int) -> str:
        """A query answering exactly ``count`` rows, numbered 1 to ``count`` in a column ``n``, in that order.

        ``table`` (a scratch table with rows) is there for dialects that need one to select from.
        """

    def query_running(self, database: ScratchDatabase) -> bool:
        """Whether a query of the gateway is running in ``database`` right now (the kit polls it, with a deadline).

        Called in a thread, outside the gateway; it must not disturb the query. A server database may
        ask its activity view; a file database may try to take a lock readers hold. Without a way to
        watch, leave it out and name ``Capability.WATCH_RUNNING_QUERY`` in ``lacks``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no query_running: implement it, or declare"
            " Capability.WATCH_RUNNING_QUERY in lacks with the reason"
        )

    def qualified_name(self, table: str) -> str:
        """``table`` of ``folder`` as a query writes it."""
        return f'"{self.folder}"."{table}"'

    def read_table_query(self, table: str, columns: Sequence[str]) -> str:
        """A query reading ``columns`` of ``table``, ordered by its ``id`` column."""
        return f"SELECT {', '.join(columns)} FROM {self.qualified_name(table)} ORDER BY id"
