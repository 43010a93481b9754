"""The walk's checks of names a column reference, a type or a function in FROM carries (mixed into the walker).

``x.name`` and ``(expr).name`` may be PostgreSQL's functional notation ``name(x)``: each is recorded as
that call too (``attribute_calls``), for ``query_checks.py`` to check unless x certainly has such a
column. Type names must be built in, with integer modifiers only. A function in FROM with a column
definition list reads text with each column type's input function: recorded for the cost checks.
Column references of four parts name a database and are refused.
"""

from __future__ import annotations

from drivers.postgres.query_sites import Scope
from drivers.postgres.sql_names import builtin_name, display_name, identifiers
from drivers.postgres.type_rules import CATALOG_LOOKUP_TYPES
from gateway.errors import QueryRejected, RefusalReason

Checked = tuple[tuple[str, ...], frozenset[str]]
"""What a node check returns: fields it handled itself, and the CTE names its children see."""


class NameChecks:
    """The name-carrying node checks of ``SelectTreeWalker`` (it sets these attributes up)."""

    attribute_names: set[str]
    attribute_calls: list[tuple[dict, Scope | None]]
    row_columns: dict[str, list[frozenset[str]]]
    column_definitions: list[tuple[dict, list[dict], Scope | None]]
    type_names: list[dict]
    table_names: set[str]
    _scope: Scope | None

    def _check_RangeFunction(self, node: dict, ctes_in_scope: frozenset[str]) -> Checked:
        # jsonb_to_record(x) AS r(q tsquery) reads x's text with each column type's input function.
        for item in node.get("functions", ()):
            parts = item.get("List", {}).get("items", ())
            if not parts:
                continue
            own = parts[1].get("List", {}).get("items", ()) if len(parts) > 1 and parts[1] else ()
            definitions = list(own) or list(node.get("coldeflist", ()))
            type_names = [d["ColumnDef"]["typeName"] for d in definitions if "typeName" in d.get("ColumnDef", {})]
            if type_names:
                self.column_definitions.append((parts[0], type_names, self._scope))
        return (), ctes_in_scope

    def _check_TypeName(self, node: dict, ctes_in_scope: frozenset[str]) -> Checked:
        names = identifiers(node.get("names", ()))
        name = builtin_name(names) if names and not node.get("pct_type") else None
        if name is None:
            raise QueryRejected(
                f"type {display_name(*names or ['?'])} is not allowed: "
                "only built-in types (schema pg_catalog) may be used",
                reason=RefusalReason.TYPE,
            )
        if name.lstrip("_") in CATALOG_LOOKUP_TYPES:
            raise QueryRejected(
                f"type {display_name(name)} is not allowed: it looks up catalog objects",
                reason=RefusalReason.TYPE,
            )
        for modifier in node.get("typmods", ()):
            if "ival" not in modifier.get("A_Const", {}):
                # bit('80000000'), numeric(a): PostgreSQL hands text to the type's modifier parser, which the
                # guard's size bounds (integers only) would not see.
                raise QueryRejected(
                    f"type modifier of {display_name(name)} is not allowed: write it as an integer, "
                    f"as in {name}(10)",
                    reason=RefusalReason.TYPE,
                )
        self.type_names.append(node)
        return ("names", "typmods"), ctes_in_scope

    def is_known_column(self, call: dict) -> bool:
        """True when the attribute call of ``q.name`` certainly reads a column: the only sub-select or CTE
        called q (and no table) has a column ``name``. Asked after the walk, when every definition is known."""
        fields = call["args"][0].get("ColumnRef", {}).get("fields", ())
        if len(fields) != 1 or "String" not in fields[0]:
            return False
        definitions = self.row_columns.get(fields[0]["String"]["sval"], ())
        name = call["funcname"][-1]["String"]["sval"]
        return len(definitions) == 1 and fields[0]["String"]["sval"] not in self.table_names and name in definitions[0]

    def _note_attribute(self, name: str, row: dict) -> None:
        """``row.name``: a column, or PostgreSQL's functional notation ``name(row)``, checked as a call too."""
        if name.lstrip("_") in CATALOG_LOOKUP_TYPES:
            raise QueryRejected(
                f"type {display_name(name)} is not allowed: it looks up catalog objects",
                reason=RefusalReason.TYPE,
            )
        self.attribute_names.add(name)
        call = {"funcname": [{"String": {"sval": name}}], "args": [row], "attribute_notation": True}
        self.attribute_calls.append((call, self._scope))

    def _check_ColumnRef(self, node: dict, ctes_in_scope: frozenset[str]) -> Checked:
        fields = node.get("fields", ())
        if len(fields) >= 4:
            # db.schema.table.column (or .*): the database's own error would compare the name with its own.
            raise QueryRejected(
                f"column reference {'.'.join(f.get('String', {}).get('sval', '*') for f in fields)} names a database: "
                "cross-database references are not allowed, write table.column or schema.table.column",
                reason=RefusalReason.CROSS_DATABASE,
            )
        if len(fields) >= 2 and "String" in fields[-1]:
            # The row is the whole row of what the qualifier names (a table, CTE, sub-select or column).
            self._note_attribute(fields[-1]["String"]["sval"], {"ColumnRef": {"fields": fields[:-1], "row": True}})
        return (), ctes_in_scope

    def _check_A_Indirection(self, node: dict, ctes_in_scope: frozenset[str]) -> Checked:
        items = node.get("indirection", ())
        for position, item in enumerate(items):
            if "String" in item:
                row = node["arg"] if position == 0 else {
                    "A_Indirection": {"arg": node["arg"], "indirection": items[:position]}}
                self._note_attribute(item["String"]["sval"], row)
        return (), ctes_in_scope
