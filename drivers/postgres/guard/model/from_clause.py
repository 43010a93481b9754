"""FROM items (``transformFromClause`` and ``transformFromClauseItem`` of ``parse_clause.c``).

Relations, CTE references, sub-selects, functions (with ``ROWS FROM``,
``WITH ORDINALITY`` and column definition lists), and joins (``USING`` and
``NATURAL`` merge columns to their common type; an unaliased join hides its
inputs' columns from unqualified names). Items being added are visible only
to LATERAL items and functions; a JOIN's ON clause sees only its two inputs.
"""

from __future__ import annotations

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.base import AnalyzerBase, Raw
from drivers.postgres.guard.model.expressions import string_value, unwrap
from drivers.postgres.guard.model.ir import BoolOp, Call, Coalesce, ColumnSlot, Expr, FieldSelect, RangeEntry, Var
from drivers.postgres.guard.model.scope import NamespaceItem, ParseState, check_name_conflicts
from drivers.postgres.guard.model.typenames import resolve_type_name
from drivers.postgres.guard.model.types import INT8, RECORD

_JOIN_KINDS = {"JOIN_INNER": "inner", "JOIN_LEFT": "left", "JOIN_RIGHT": "right", "JOIN_FULL": "full"}


def alias_of(body: Raw) -> tuple[str | None, list[str]]:
    """An ``Alias``: its name and column names."""
    alias = body.get("alias")
    if not alias:
        return None, []
    return alias.get("aliasname"), [string_value(n) for n in alias.get("colnames", ())]


def rename(columns: list[ColumnSlot], names: list[str], what: str) -> list[ColumnSlot]:
    """The columns with the alias's column names in front (``table "x" has 2 columns available but 3 ...``)."""
    if len(names) > len(columns):
        raise AnalysisError(f'table "{what}" has {len(columns)} columns available but {len(names)} columns '
                            "specified")
    return [ColumnSlot(names[i], c.type, c.typmod, c.expr) if i < len(names) else c for i, c in enumerate(columns)]


class FromClause(AnalyzerBase):
    """FROM items, a part of the analyser."""

    def from_clause(self, items: list[Raw], state: ParseState, query_entries: list[RangeEntry]) -> list[RangeEntry]:
        """``transformFromClause``: add each item to the level's namespace; answer the top-level entries."""
        top = []
        for raw in items:
            entry, visible = self.from_item(raw, state, query_entries)
            check_name_conflicts(state.namespace, visible)
            for item in visible:
                item.lateral_only, item.lateral_ok = True, True
            state.namespace.extend(visible)
            top.append(entry)
        for item in state.namespace:
            item.lateral_only, item.lateral_ok = False, True
        return top

    def from_item(self, raw: Raw, state: ParseState,
                  entries: list[RangeEntry]) -> tuple[RangeEntry, list[NamespaceItem]]:
        kind, body = unwrap(raw)
        if kind == "RangeVar":
            entry = self._range_var(body, state)
        elif kind == "RangeSubselect":
            entry = self._range_subselect(body, state)
        elif kind == "RangeFunction":
            entry = self._range_function(body, state)
        elif kind == "JoinExpr":
            return self._join(body, state, entries)
        elif kind == "RangeTableSample":
            raise Unsupported("TABLESAMPLE is not allowed in a GetData query")
        elif kind == "RangeTableFunc":
            raise Unsupported("XMLTABLE is not allowed in a GetData query")
        else:
            raise Unsupported(f"{kind} is not supported in FROM")
        entries.append(entry)
        return entry, [NamespaceItem(entry)]

    def _range_var(self, body: Raw, state: ParseState) -> RangeEntry:
        schema, name = body.get("schemaname"), str(body.get("relname", ""))
        if body.get("catalogname"):
            raise Unsupported("a table that names a database is not allowed: write schema.table")
        alias, colnames = alias_of(body)
        if schema is None:
            found = state.cte(name)
            if found is not None:
                cte, levels_up = found
                source = cte.entry
                entry = RangeEntry("cte", alias or name,
                                   rename([ColumnSlot(c.name, c.type, c.typmod, c.expr) for c in source.columns],
                                          colnames, alias or name))
                entry.query, entry.has_alias, entry.row_type = source.query, alias is not None, RECORD
                entry.location = body.get("location", -1)
                return entry
            raise AnalysisError(f'relation "{name}" does not exist')
        relation = self.catalog.relations.get((schema, name))
        if relation is None or relation.kind == "c":
            raise AnalysisError(f'relation "{schema}.{name}" does not exist')
        columns = [ColumnSlot(c.name, c.type, c.typmod) for c in relation.columns]
        entry = RangeEntry("relation", alias or name, rename(columns, colnames, alias or name))
        entry.relation, entry.has_alias = relation, alias is not None
        entry.inherited, entry.location, entry.row_type = bool(body.get("inh")), body.get("location", -1), \
            RECORD if relation.narrowed else relation.row_type
        return entry

    def _range_subselect(self, body: Raw, state: ParseState) -> RangeEntry:
        alias, colnames = alias_of(body)
        if alias is None:
            raise AnalysisError("subquery in FROM must have an alias",
                                hint='For example, FROM (SELECT ...) [AS] foo.')
        lateral = bool(body.get("lateral"))
        saved = state.lateral_active
        state.lateral_active = lateral
        try:
            query = self.sub_select(body["subquery"], state)
        finally:
            state.lateral_active = saved
        columns = [ColumnSlot(t.name, t.expr.type, t.expr.typmod, t.expr) for t in query.targets if not t.junk]
        entry = RangeEntry("subquery", alias, rename(columns, colnames, alias))
        entry.query, entry.has_alias, entry.lateral, entry.row_type = query, True, lateral, RECORD
        return entry

    def _range_function(self, body: Raw, state: ParseState) -> RangeEntry:
        alias, colnames = alias_of(body)
        pairs = [item["List"]["items"] for item in body.get("functions", ())]
        column_definitions = body.get("coldeflist") or []
        is_rows_from = bool(body.get("is_rowsfrom"))
        if len(pairs) == 1 and not is_rows_from and not column_definitions:
            call = pairs[0][0]
            if "FuncCall" in call and len(call["FuncCall"].get("args", ())) > 1 and not call["FuncCall"].get(
                    "agg_star") and [string_value(p) for p in call["FuncCall"]["funcname"]][-1] == "unnest" \
                    and len(call["FuncCall"]["funcname"]) <= 2:
                unnest = call["FuncCall"]
                pairs = [[{"FuncCall": dict(unnest, args=[argument])}, {}] for argument in unnest["args"]]
                is_rows_from = True
        saved, saved_kind = state.lateral_active, state.expr_kind
        state.lateral_active, state.expr_kind = True, "FROM"
        try:
            functions = [self.expr(pair[0], state) for pair in pairs]
        finally:
            state.lateral_active, state.expr_kind = saved, saved_kind
        if len(functions) > 1 or is_rows_from:
            if column_definitions:
                raise AnalysisError("ROWS FROM() with multiple functions cannot have a column definition list",
                                    hint="Put a separate column definition list for each function inside "
                                         "ROWS FROM().")
        columns: list[ColumnSlot] = []
        for position, (pair, function) in enumerate(zip(pairs, functions)):
            definitions = column_definitions if not is_rows_from else (
                pair[1].get("List", {}).get("items", []) if len(pair) > 1 and pair[1] else [])
            scalar_name = self._scalar_name(pair[0], function, alias, colnames, len(functions), is_rows_from)
            columns.extend(self._function_columns(function, definitions, scalar_name))
        if body.get("ordinality"):
            columns.append(ColumnSlot("ordinality", INT8))
        name = alias or self._function_entry_name(pairs[0][0])
        entry = RangeEntry("function", name, rename(columns, colnames, name))
        entry.functions, entry.ordinality, entry.has_alias = functions, bool(body.get("ordinality")), alias is not None
        entry.lateral = bool(body.get("lateral"))
        single_composite = len(functions) == 1 and self.catalog.is_complex(functions[0].type) and not body.get(
            "ordinality")
        entry.row_type = functions[0].type if single_composite else RECORD
        return entry

    def _function_entry_name(self, raw: Raw) -> str:
        kind, body = unwrap(raw)
        if kind == "FuncCall":
            return string_value(body["funcname"][-1])
        return self.figure_name(raw)

    def _scalar_name(self, raw: Raw, function: Expr, alias: str | None, colnames: list[str], count: int,
                     rows_from: bool) -> str:
        """``chooseScalarFunctionAlias``: the column name of a function returning one scalar."""
        if isinstance(function, Call):  # get_func_result_name: a function's one named OUT argument
            info = function.function
            outputs = [i for i, mode in enumerate(info.argument_modes) if mode in ("o", "b", "t")]
            if len(outputs) == 1 and outputs[0] < len(info.argument_names) and info.argument_names[outputs[0]]:
                return info.argument_names[outputs[0]]
        if count == 1 and not rows_from and alias is not None and not colnames:
            return alias
        return self._function_entry_name(raw)

    def _function_columns(self, function: Expr, definitions: list[Raw], scalar_name: str) -> list[ColumnSlot]:
        catalog = self.catalog
        result_type = function.type
        base = catalog.base_type(result_type)
        if definitions:
            if result_type != RECORD:
                raise AnalysisError('a column definition list is only allowed for functions returning "record"')
            columns = []
            for definition in definitions:
                column = definition["ColumnDef"]
                type_oid, typmod = resolve_type_name(catalog, column["typeName"])
                columns.append(ColumnSlot(str(column["colname"]), type_oid, typmod,
                                          FieldSelect(type_oid, typmod, function, str(column["colname"]))))
            return columns
        relation = catalog.relation_of_type(base)
        if relation is not None:
            return [ColumnSlot(c.name, c.type, c.typmod, FieldSelect(c.type, c.typmod, function, c.name))
                    for c in relation.columns]
        if result_type == RECORD:
            outputs = function.function.output_columns() if isinstance(function, Call) else ()
            if not outputs:
                raise AnalysisError('a column definition list is required for functions returning "record"')
            return [ColumnSlot(n, t, -1, FieldSelect(t, -1, function, n)) for n, t in outputs]
        info = catalog.type(base)
        if info is not None and info.kind == "p" and result_type != RECORD:
            raise AnalysisError(f'function "{scalar_name}" in FROM has unsupported return type '
                                f"{catalog.type_display(result_type)}")
        return [ColumnSlot(scalar_name, result_type, function.typmod, function)]

    def _join(self, body: Raw, state: ParseState,
              entries: list[RangeEntry]) -> tuple[RangeEntry, list[NamespaceItem]]:
        join_kind = _JOIN_KINDS.get(body.get("jointype", "JOIN_INNER"))
        if join_kind is None:
            raise Unsupported(f"join type {body.get('jointype')} is not supported")
        left, left_items = self.from_item(body["larg"], state, entries)
        for item in left_items:
            item.lateral_only, item.lateral_ok = True, join_kind in ("inner", "left")
        saved_length = len(state.namespace)
        state.namespace.extend(left_items)
        try:
            right, right_items = self.from_item(body["rarg"], state, entries)
        finally:
            del state.namespace[saved_length:]
        check_name_conflicts(left_items, right_items)
        my_items = left_items + right_items
        left_names = [c.name for c in left.columns]
        right_names = [c.name for c in right.columns]
        using = [string_value(n) for n in body.get("usingClause", ())]
        if body.get("isNatural"):
            using = [name for name in left_names if name in right_names]
        merged: list[ColumnSlot] = []
        left_used: set[int] = set()
        right_used: set[int] = set()
        condition: Expr | None = None
        if using:
            pairs = []
            for name in using:
                if name in (c.name for c in merged):
                    raise AnalysisError(f'column name "{name}" appears more than once in USING clause')
                left_index = self._using_column(left_names, name, "left")
                right_index = self._using_column(right_names, name, "right")
                left_used.add(left_index)
                right_used.add(right_index)
                left_var = self._input_var(left, left_index)
                right_var = self._input_var(right, right_index)
                merged.append(self._merged_column(name, join_kind, left_var, right_var))
                pairs.append((left_var, right_var))
            comparisons = [self.coerce_to_boolean(self.binary_operator("=", a, b), "JOIN/USING") for a, b in pairs]
            condition = comparisons[0] if len(comparisons) == 1 else BoolOp("AND", comparisons)
        elif body.get("quals") is not None:
            for item in my_items:
                item.lateral_only, item.lateral_ok = False, True
            saved_namespace, saved_kind = state.namespace, state.expr_kind
            state.namespace, state.expr_kind = my_items, "JOIN/ON"
            try:
                condition = self.coerce_to_boolean(self.expr(body["quals"], state), "JOIN/ON")
            finally:
                state.namespace, state.expr_kind = saved_namespace, saved_kind
        columns = merged + [
            ColumnSlot(c.name, c.type, c.typmod, self._input_var(left, i))
            for i, c in enumerate(left.columns) if i not in left_used
        ] + [
            ColumnSlot(c.name, c.type, c.typmod, self._input_var(right, i))
            for i, c in enumerate(right.columns) if i not in right_used
        ]
        alias, colnames = alias_of(body)
        entry = RangeEntry("join", alias or "unnamed_join", rename(columns, colnames, alias or "unnamed_join"))
        entry.join_kind, entry.join_sides, entry.join_condition = join_kind, (left, right), condition
        entry.has_alias, entry.row_type = alias is not None, RECORD
        entries.append(entry)
        using_alias = body.get("join_using_alias")
        if using_alias:
            using_item = NamespaceItem(entry, str(using_alias.get("aliasname")), entry.columns[: len(merged)])
            check_name_conflicts(my_items, [using_item])
            my_items.append(using_item)
        if alias is not None:
            my_items = []
        else:
            for item in my_items:
                item.cols_visible = False
        join_item = NamespaceItem(entry)
        join_item.rel_visible = alias is not None
        return entry, [*my_items, join_item]

    @staticmethod
    def _using_column(names: list[str], name: str, side: str) -> int:
        found = [i for i, n in enumerate(names) if n == name]
        if not found:
            raise AnalysisError(f'column "{name}" specified in USING clause does not exist in {side} table')
        if len(found) > 1:
            raise AnalysisError(f'common column name "{name}" appears more than once in {side} table')
        return found[0]

    @staticmethod
    def _input_var(entry: RangeEntry, index: int) -> Var:
        slot = entry.columns[index]
        return Var(slot.type, slot.typmod, entry, index + 1, 0, slot.name)

    def _merged_column(self, name: str, join_kind: str, left: Var, right: Var) -> ColumnSlot:
        """``buildMergedJoinVar``."""
        common = self.coercions.common_type([left.type, right.type], "JOIN/USING")
        typmod = self.common_typmod([left, right], common)
        left_expr: Expr = self.coerce(left, common, typmod) if left.type != common else left
        right_expr: Expr = self.coerce(right, common, typmod) if right.type != common else right
        if join_kind == "inner":
            merged = left_expr if isinstance(left_expr, Var) else right_expr if isinstance(right_expr, Var) \
                else left_expr
        elif join_kind == "left":
            merged = left_expr
        elif join_kind == "right":
            merged = right_expr
        else:
            merged = Coalesce(common, [left_expr, right_expr], typmod)
        return ColumnSlot(name, common, typmod, merged)
