"""Names in scope while a query level is analysed (PostgreSQL's ``ParseState`` and its namespace).

Each query level has a ``ParseState`` whose namespace lists the FROM items
visible there, with PostgreSQL's visibility flags: a join without an alias
hides its inputs' columns from unqualified names but keeps their table
names; items of the FROM list being built are visible only to LATERAL
items; a JOIN's ON clause sees only that join's inputs. ``column`` and
``item_named`` search the levels from the innermost outwards, as
``colNameToVar`` and ``refnameNamespaceItem`` do, and raise PostgreSQL's
errors for ambiguous names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from drivers.postgres.guard.errors import AnalysisError
from drivers.postgres.guard.model.ir import ColumnSlot, RangeEntry, Var, Window
from drivers.postgres.guard.model.types import SYSTEM_COLUMNS


class NamespaceItem:
    """One FROM item as visible in a namespace (``ParseNamespaceItem``)."""

    __slots__ = ("entry", "rel_visible", "cols_visible", "lateral_only", "lateral_ok", "name", "columns")

    def __init__(self, entry: RangeEntry, name: str | None = None, columns: list[ColumnSlot] | None = None) -> None:
        self.entry = entry
        self.name = entry.name if name is None else name
        self.columns = entry.columns if columns is None else columns
        self.rel_visible = True
        self.cols_visible = True
        self.lateral_only = False
        self.lateral_ok = True


class CommonTable:
    """A CTE visible by name: its entry (kind ``cte``) and whether it is still being defined."""

    __slots__ = ("entry", "recursive_reference_allowed")

    def __init__(self, entry: RangeEntry) -> None:
        self.entry = entry
        self.recursive_reference_allowed = False


class ParseState:
    """The names visible at one query level, and the level around it."""

    def __init__(self, parent: ParseState | None = None) -> None:
        self.parent = parent
        self.namespace: list[NamespaceItem] = []
        self.ctes: dict[str, CommonTable] = {}
        self.lateral_active = False
        self.expr_kind = ""
        self.windows: dict[str, Window | dict[str, Any]] = {}
        self.query_has_aggregates = False
        self.query_has_windows = False

    def levels(self) -> Iterator[tuple[int, ParseState]]:
        """This level and the enclosing ones, with how far up each is."""
        state: ParseState | None = self
        up = 0
        while state is not None:
            yield up, state
            state = state.parent
            up += 1

    def cte(self, name: str) -> tuple[CommonTable, int] | None:
        """The CTE called ``name`` visible here, and how many levels up its WITH is."""
        for up, state in self.levels():
            found = state.ctes.get(name)
            if found is not None:
                return found, up
        return None

    def column(self, name: str, location: int = -1, *, local_only: bool = False) -> Var | None:
        """``colNameToVar``: the column ``name`` of the innermost level that has one."""
        for up, state in self.levels():
            result: Var | None = None
            for item in state.namespace:
                if not item.cols_visible or (item.lateral_only and not state.lateral_active):
                    continue
                found = column_of(item, name, up, location)
                if found is not None:
                    if result is not None:
                        raise AnalysisError(f'column reference "{name}" is ambiguous')
                    _check_lateral(item, name)
                    result = found
            if result is not None:
                return result
            if local_only:
                return None
        return None

    def item_named(self, name: str, schema: str | None = None,
                   relation_oid: int = 0) -> tuple[NamespaceItem, int] | None:
        """``refnameNamespaceItem``: the FROM item called ``name`` (for ``schema.name``: the relation itself)."""
        for up, state in self.levels():
            result: NamespaceItem | None = None
            for item in state.namespace:
                if not item.rel_visible or (item.lateral_only and not state.lateral_active):
                    continue
                if schema is not None:
                    entry = item.entry
                    matches = (entry.kind == "relation" and entry.relation is not None
                               and entry.relation.oid == relation_oid and not entry.has_alias)
                else:
                    matches = item.name == name
                if matches:
                    if result is not None:
                        shown = name if schema is None else str(relation_oid)
                        raise AnalysisError(f'table reference "{shown}" is ambiguous')
                    _check_lateral(item, name)
                    result = item
            if result is not None:
                return result, up
        return None


def column_of(item: NamespaceItem, name: str, levels_up: int, location: int = -1) -> Var | None:
    """``scanNSItemForColumn``: the column ``name`` of one FROM item (system columns of tables too)."""
    found = -1
    for index, slot in enumerate(item.columns):
        if slot.name == name:
            if found >= 0:
                raise AnalysisError(f'column reference "{name}" is ambiguous')
            found = index
    entry = item.entry
    if found >= 0:
        slot = item.columns[found]
        return Var(slot.type, slot.typmod, entry, found + 1, levels_up, name, location)
    relation = entry.relation
    if entry.kind == "relation" and relation is not None and relation.has_system_columns:
        for number, system in enumerate(SYSTEM_COLUMNS, start=1):
            if system.name == name:
                return Var(system.type, system.typmod, entry, -number, levels_up, name, location)
    return None


def _check_lateral(item: NamespaceItem, name: str) -> None:
    if item.lateral_only and not item.lateral_ok:
        raise AnalysisError(f'invalid reference to FROM-clause entry for table "{item.name}"',
                            hint="The combining JOIN type must be INNER or LEFT for a LATERAL reference.")


def check_name_conflicts(existing: list[NamespaceItem], added: list[NamespaceItem]) -> None:
    """``checkNameSpaceConflicts``: two FROM items of one level may not share a name."""
    for new in added:
        if not new.rel_visible:
            continue
        for old in existing:
            if not old.rel_visible:
                continue
            if old.name != new.name:
                continue
            # Two unaliased references to different relations with the same name are allowed.
            if (old.entry.kind == "relation" and new.entry.kind == "relation" and not old.entry.has_alias
                    and not new.entry.has_alias and old.entry.relation is not new.entry.relation):
                continue
            raise AnalysisError(f'table name "{new.name}" specified more than once')
