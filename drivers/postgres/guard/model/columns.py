"""Column references (``transformColumnRef``) and whole-row references (``transformWholeRowRef``).

``a`` is a column of the innermost level that has one, else the whole row of
a FROM item called ``a``; ``t.a`` and ``s.t.a`` are a column of that FROM
item, else the call ``a(t)`` on its whole row; ``t.*`` as a value is the
whole row. A name that is nothing of these gets PostgreSQL's own error.
"""

from __future__ import annotations

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.base import AnalyzerBase, Raw
from drivers.postgres.guard.model.ir import Expr, Var
from drivers.postgres.guard.model.scope import NamespaceItem, ParseState, column_of
from drivers.postgres.guard.model.types import RECORD


def field_names(body: Raw) -> list[str | None]:
    """A ColumnRef's fields: names, with None for ``*``."""
    return [item["String"].get("sval", "") if "String" in item else None for item in body.get("fields", ())]


class Columns(AnalyzerBase):
    """Column and whole-row references, a part of the analyser."""

    def column_ref(self, body: Raw, state: ParseState) -> Expr:
        fields = field_names(body)
        location = body.get("location", -1)
        if len(fields) == 1:
            name = fields[0]
            if name is None:
                raise AnalysisError("* is not allowed here")
            found = state.column(name, location)
            if found is not None:
                return found
            named = state.item_named(name)
            if named is not None:
                return self.whole_row(*named, location)
            raise AnalysisError(f'column "{name}" does not exist')
        if len(fields) > 4:
            raise AnalysisError(f"improper qualified name (too many dotted names): "
                                f"{'.'.join(f or '*' for f in fields)}")
        if len(fields) == 4:
            raise Unsupported("a column reference that names a database is not allowed: write schema.table.column")
        *qualifier, name = fields
        if any(part is None for part in qualifier):
            raise AnalysisError("improper use of \"*\"")
        schema, relation = (qualifier[0], qualifier[1]) if len(qualifier) == 2 else (None, qualifier[0])
        found_item = self.item_for(state, schema, str(relation))
        if found_item is None:
            shown = f"{schema}.{relation}" if schema else str(relation)
            raise AnalysisError(f'missing FROM-clause entry for table "{shown}"')
        item, levels_up = found_item
        if name is None:
            return self.whole_row(item, levels_up, location)
        column = column_of(item, name, levels_up, location)
        if column is not None:
            return column
        projected = self.function_or_column(name, self.whole_row(item, levels_up, location), state)
        if projected is None:
            raise AnalysisError(f"column {relation}.{name} does not exist")
        return projected

    def item_for(self, state: ParseState, schema: str | None, name: str) -> tuple[NamespaceItem, int] | None:
        """``refnameNamespaceItem``: ``schema.name`` is the relation itself, ``name`` a FROM item's name."""
        if schema is None:
            return state.item_named(name)
        relation = self.catalog.relations.get((schema, name))
        if relation is None or relation.narrowed:  # read as a sub-select named ``name``: no schema prefix
            return None
        return state.item_named(name, schema, relation.oid)

    def whole_row(self, item: NamespaceItem, levels_up: int, location: int = -1) -> Var:
        """``transformWholeRowRef``: the whole row of a FROM item as one value."""
        entry = item.entry
        if entry.kind == "function" and len(entry.functions) == 1 and not entry.ordinality \
                and not self.catalog.is_complex(entry.functions[0].type) and entry.functions[0].type != RECORD:
            # makeWholeRowVar: a function returning a scalar is its one column
            slot = entry.columns[0]
            return Var(slot.type, slot.typmod, entry, 1, levels_up, item.name, location)
        row_type = entry.row_type or RECORD
        return Var(row_type, -1, entry, 0, levels_up, item.name, location)
