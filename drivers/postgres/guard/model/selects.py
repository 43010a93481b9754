"""One SELECT statement, VALUES list or set operation (``transformStmt`` of PostgreSQL's ``analyze.c``).

A SELECT level is analysed in PostgreSQL's order: WITH, FROM, the select
list, WHERE, HAVING, ORDER BY, GROUP BY, DISTINCT, LIMIT and OFFSET, the
windows; untyped literals left in the select list become text. UNION,
INTERSECT and EXCEPT unify each column pair to its common type, leaf by leaf
from the left; VALUES unifies each column over its rows. A CTE's columns
come from its query; a recursive one's from its non-recursive term.
"""

from __future__ import annotations

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.base import AnalyzerBase, Raw
from drivers.postgres.guard.model.clauses import grouping_set_count
from drivers.postgres.guard.model.expressions import unwrap
from drivers.postgres.guard.model.ir import ColumnSlot, Const, Expr, Query, RangeEntry, SetOpColumn, Target, Var, Window
from drivers.postgres.guard.model.scope import CommonTable, NamespaceItem, ParseState
from drivers.postgres.guard.model.types import BOOL, RECORD, RECORD_ARRAY, UNKNOWN

_SET_OPERATIONS = {"SETOP_UNION": "UNION", "SETOP_INTERSECT": "INTERSECT", "SETOP_EXCEPT": "EXCEPT"}
_LOCKING = {"LCS_FORKEYSHARE": "FOR KEY SHARE", "LCS_FORSHARE": "FOR SHARE",
            "LCS_FORNOKEYUPDATE": "FOR NO KEY UPDATE", "LCS_FORUPDATE": "FOR UPDATE"}


def _select_body(node: Raw) -> Raw:
    kind, body = unwrap(node)
    if kind != "SelectStmt":
        raise Unsupported(f"{kind} is not allowed in a GetData query")
    return body


class Selects(AnalyzerBase):
    """SELECT levels, VALUES lists, set operations and WITH, a part of the analyser."""

    def sub_select(self, node: Raw, state: ParseState) -> Query:
        """``parse_sub_analyze``: a sub-select, with ``state`` as its enclosing level."""
        return self.statement(_select_body(node), ParseState(state))

    def statement(self, body: Raw, state: ParseState, *, resolve_unknowns: bool = True,
                  recursive_cte: RangeEntry | None = None) -> Query:
        """``transformStmt`` for a SelectStmt's body."""
        if body.get("intoClause"):
            raise Unsupported("SELECT ... INTO is not allowed: it creates a table")
        for clause in body.get("lockingClause", ()):
            strength = _LOCKING.get(clause["LockingClause"].get("strength", ""), "FOR UPDATE")
            raise Unsupported(f"locking clause {strength} is not allowed")
        if body.get("valuesLists"):
            return self._values(body, state)
        if body.get("op", "SETOP_NONE") != "SETOP_NONE":
            return self._set_operation(body, state, recursive_cte)
        return self._select(body, state, resolve_unknowns)

    def _select(self, body: Raw, state: ParseState, resolve_unknowns: bool) -> Query:
        query = Query()
        if body.get("withClause"):
            query.ctes = self.with_clause(body["withClause"], state)
            query.recursive = bool(body["withClause"].get("recursive"))
        query.from_items = self.from_clause(body.get("fromClause", []), state, query.entries)
        for definition in body.get("windowClause", ()):
            window = definition["WindowDef"]
            name = window.get("name")
            if name in state.windows:
                raise AnalysisError(f'window "{name}" is already defined')
            state.windows[name] = window
        state.expr_kind = "SELECT"
        query.targets = self.target_list(body.get("targetList"), state)
        query.where = self.where_clause(body.get("whereClause"), state, "WHERE")
        query.where_raw = body.get("whereClause")
        query.having = self.where_clause(body.get("havingClause"), state, "HAVING")
        query.sort = self.sort_clause(body.get("sortClause"), query.targets, state)
        query.group = self.group_clause(body.get("groupClause"), query.targets, state)
        query.grouping_sets = grouping_set_count(body.get("groupClause") or [])
        distinct = body.get("distinctClause")
        if distinct is not None:
            query.distinct = True
            if distinct and distinct != [{}]:
                query.distinct_on = [self.target_entry(node, query.targets, state, "DISTINCT ON")
                                     for node in distinct]
        self._limits(body, query, state)
        for name, window in list(state.windows.items()):
            if not isinstance(window, Window):  # defined in WINDOW but used by no function: analysed now
                window = state.windows[name] = self.window_definition(window, state)
            query.windows.append(window)
        if resolve_unknowns:
            self.resolve_unknown_targets(query.targets)
        query.has_aggregates = state.query_has_aggregates
        query.has_window_functions = state.query_has_windows
        return query

    def _limits(self, body: Raw, query: Query, state: ParseState) -> None:
        query.offset = self.limit_clause(body.get("limitOffset"), state, "OFFSET")
        query.limit = self.limit_clause(body.get("limitCount"), state, "LIMIT")
        if body.get("limitOption") == "LIMIT_OPTION_WITH_TIES" and not query.sort:
            raise AnalysisError("WITH TIES cannot be specified without ORDER BY clause")

    def _values(self, body: Raw, state: ParseState) -> Query:
        """``transformValuesClause``."""
        query = Query()
        if body.get("withClause"):
            query.ctes = self.with_clause(body["withClause"], state)
        state.expr_kind = "VALUES"
        rows = [self.target_expressions(item["List"].get("items", ()), state) for item in body["valuesLists"]]
        width = len(rows[0])
        if any(len(row) != width for row in rows):
            raise AnalysisError("VALUES lists must all be the same length")
        columns: list[ColumnSlot] = []
        for index in range(width):
            column = [row[index] for row in rows]
            common = self.coercions.common_type([e.type for e in column], "VALUES")
            for row in rows:
                row[index] = self.coerce_to_common(row[index], common, "VALUES")
            typmod = self.common_typmod([row[index] for row in rows], common)
            columns.append(ColumnSlot(f"column{index + 1}", common, typmod))
        entry = RangeEntry("values", "*VALUES*", columns)
        entry.row_type = RECORD
        query.values = rows
        query.entries.append(entry)
        query.from_items.append(entry)
        item = NamespaceItem(entry)
        state.namespace.append(item)
        query.targets = [Target(c.name, Var(c.type, c.typmod, entry, i + 1, 0, c.name)) for i, c in enumerate(columns)]
        query.sort = self.sort_clause(body.get("sortClause"), query.targets, state)
        self._limits(body, query, state)
        return query

    def _set_operation(self, body: Raw, state: ParseState, recursive_cte: RangeEntry | None) -> Query:
        """``transformSetOperationStmt``: the tree of UNION/INTERSECT/EXCEPT, then its ORDER BY and LIMIT."""
        query = Query()
        if body.get("withClause"):
            query.ctes = self.with_clause(body["withClause"], state)
        top = self._set_tree(body, state, recursive_cte, top=True, leaf_ok=False)
        query.setop = top.setop
        query.targets = top.targets
        leftmost = top
        while leftmost.setop is not None:
            leftmost = leftmost.setop[2]
        names = [t.name for t in leftmost.targets if not t.junk]
        query.targets = [Target(name, t.expr) for name, t in zip(names, query.targets)]
        entry = RangeEntry("join", "", [ColumnSlot(t.name, t.expr.type, t.expr.typmod, t.expr)
                                        for t in query.targets])
        sort_state = ParseState(state.parent)
        sort_state.ctes = state.ctes
        item = NamespaceItem(entry)
        item.rel_visible = False
        sort_state.namespace = [item]
        targets = [Target(t.name, Var(t.expr.type, t.expr.typmod, entry, i + 1, 0, t.name))
                   for i, t in enumerate(query.targets)]
        query.sort = self.sort_clause(body.get("sortClause"), targets, sort_state)
        if any(t.junk for t in targets):
            raise AnalysisError("invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                                hint="Only result column names can be used, not expressions or functions.")
        self._limits(body, query, sort_state)
        return query

    def _set_tree(self, body: Raw, state: ParseState, recursive_cte: RangeEntry | None, *, top: bool,
                  leaf_ok: bool = True) -> Query:
        """``transformSetOperationTree``."""
        is_leaf = body.get("op", "SETOP_NONE") == "SETOP_NONE" or (leaf_ok and (
            body.get("sortClause") or body.get("limitOffset") or body.get("limitCount") or body.get("withClause")))
        if is_leaf:
            if body.get("intoClause"):
                raise AnalysisError("INTO is only allowed on first SELECT of UNION/INTERSECT/EXCEPT")
            return self.statement(body, ParseState(state), resolve_unknowns=False)
        context = _SET_OPERATIONS[body["op"]]
        left = self._set_tree(body["larg"], state, None, top=False)
        if top and recursive_cte is not None:
            self._recursive_columns(recursive_cte, left)
        right = self._set_tree(body["rarg"], state, None, top=False)
        left_targets = [t for t in left.targets if not t.junk]
        right_targets = [t for t in right.targets if not t.junk]
        if len(left_targets) != len(right_targets):
            raise AnalysisError(f"each {context} query must have the same number of columns")
        result = Query()
        result.setop = (context, bool(body.get("all")), left, right)
        for left_target, right_target in zip(left_targets, right_targets):
            pair = [left_target.expr, right_target.expr]
            common = self.coercions.common_type([e.type for e in pair], context)
            sources = []
            for target in (left_target, right_target):
                expr = target.expr
                if expr.type != UNKNOWN:
                    expr = self.coerce_to_common(expr, common, context)
                elif isinstance(expr, Const):
                    expr = target.expr = self.coerce_to_common(expr, common, context)
                sources.append(expr)
            typmod = self.common_typmod(sources, common)
            result.targets.append(Target(left_target.name, SetOpColumn(common, typmod, sources)))
        return result

    def _recursive_columns(self, entry: RangeEntry, non_recursive: Query) -> None:
        """``determineRecursiveColTypes``: a recursive CTE's columns come from its non-recursive term."""
        targets = [t for t in non_recursive.targets if not t.junk]
        names = [c.name for c in entry.columns] if entry.columns else []
        if names and len(names) > len(targets):
            raise AnalysisError(f'WITH query "{entry.name}" has {len(targets)} columns available but {len(names)} '
                                "columns specified")
        slots = []
        for index, target in enumerate(targets):
            type_oid = target.expr.type if target.expr.type != UNKNOWN else self.catalog.types_by_name["text"].oid
            name = names[index] if index < len(names) else target.name
            slots.append(ColumnSlot(name, type_oid, target.expr.typmod, target.expr))
        entry.columns[:] = slots

    def with_clause(self, body: Raw, state: ParseState) -> list[RangeEntry]:
        """``transformWithClause``: each CTE analysed where its siblings are visible as PostgreSQL allows."""
        recursive = bool(body.get("recursive"))
        definitions = [item["CommonTableExpr"] for item in body.get("ctes", ())]
        names = [str(cte["ctename"]) for cte in definitions]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise AnalysisError(f'WITH query name "{name}" specified more than once')
        entries = []
        for cte in definitions:
            kind, query_body = unwrap(cte["ctequery"])
            if kind != "SelectStmt":
                raise Unsupported("data-modifying statement in WITH is not allowed")
            entry = RangeEntry("cte", str(cte["ctename"]), [
                ColumnSlot(n["String"]["sval"], UNKNOWN) for n in cte.get("aliascolnames", ()) if "String" in n])
            entry.row_type = RECORD
            entries.append((entry, query_body, cte))
        if not recursive:
            for entry, query_body, cte in entries:
                self._analyse_cte(entry, query_body, cte, state, recursive=False)
                state.ctes[entry.name] = CommonTable(entry)
            return [entry for entry, _, _ in entries]
        order = self._dependency_order(entries)
        for entry, _, _ in entries:
            state.ctes[entry.name] = CommonTable(entry)
        for index in order:
            entry, query_body, cte = entries[index]
            self_referencing = entry.name in self._references(query_body)
            self._analyse_cte(entry, query_body, cte, state, recursive=self_referencing)
        return [entry for entry, _, _ in entries]

    def _analyse_cte(self, entry: RangeEntry, body: Raw, cte: Raw, state: ParseState, *, recursive: bool) -> None:
        aliases = [c.name for c in entry.columns]
        child = ParseState(state)
        if recursive:
            if body.get("op") != "SETOP_UNION":
                raise AnalysisError(f'recursive query "{entry.name}" does not have the form non-recursive-term '
                                    "UNION [ALL] recursive-term")
            query = self.statement(body, child, recursive_cte=entry)
        else:
            query = self.statement(body, child)
        targets = [t for t in query.targets if not t.junk]
        if len(aliases) > len(targets):
            raise AnalysisError(f'WITH query "{entry.name}" has {len(targets)} columns available but '
                                f"{len(aliases)} columns specified")
        if recursive:
            for index, (slot, target) in enumerate(zip(entry.columns, targets)):
                if slot.type != target.expr.type:
                    raise AnalysisError(
                        f'recursive query "{entry.name}" column {index + 1} has type '
                        f"{self.catalog.type_display(slot.type)} in non-recursive term but type "
                        f"{self.catalog.type_display(target.expr.type)} overall",
                        hint="Cast the output of the non-recursive term to the correct type.")
        entry.columns[:] = [ColumnSlot(aliases[i] if i < len(aliases) else t.name, t.expr.type, t.expr.typmod,
                                       t.expr) for i, t in enumerate(targets)]
        entry.columns.extend(self._search_and_cycle_columns(cte, entry, state))
        entry.query = query
        query.recursive_cte = recursive
        mode = cte.get("ctematerialized")
        query.materialized = "always" if recursive or mode == "CTEMaterializeAlways" else (
            "never" if mode == "CTEMaterializeNever" else "")

    def _search_and_cycle_columns(self, cte: Raw, entry: RangeEntry, state: ParseState) -> list[ColumnSlot]:
        """The columns SEARCH and CYCLE add to a recursive CTE (``analyzeCTE``)."""
        added: list[ColumnSlot] = []
        names = {c.name for c in entry.columns}
        search = cte.get("search_clause")
        if search:
            for column in search.get("search_col_list", ()):
                if column["String"]["sval"] not in names:
                    raise AnalysisError(f'search column "{column["String"]["sval"]}" not in WITH query column list')
            added.append(ColumnSlot(str(search["search_seq_column"]),
                                    RECORD if search.get("search_breadth_first") else RECORD_ARRAY))
        cycle = cte.get("cycle_clause")
        if cycle:
            for column in cycle.get("cycle_col_list", ()):
                if column["String"]["sval"] not in names:
                    raise AnalysisError(f'cycle column "{column["String"]["sval"]}" not in WITH query column list')
            mark_type = BOOL
            if cycle.get("cycle_mark_value") is not None:
                value = self.expr(cycle["cycle_mark_value"], state)
                default = self.expr(cycle["cycle_mark_default"], state)
                mark_type = self.coercions.common_type([value.type, default.type], "CYCLE")
            added.append(ColumnSlot(str(cycle["cycle_mark_column"]), mark_type))
            added.append(ColumnSlot(str(cycle["cycle_path_column"]), RECORD_ARRAY))
        return added

    def _references(self, body: Raw) -> set[str]:
        """The unqualified relation names a statement mentions anywhere (for WITH RECURSIVE's order)."""
        found: set[str] = set()
        stack: list[object] = [body]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                range_var = item.get("RangeVar")
                if isinstance(range_var, dict) and "schemaname" not in range_var:
                    found.add(str(range_var.get("relname")))
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return found

    def _dependency_order(self, entries: list[tuple[RangeEntry, Raw, Raw]]) -> list[int]:
        """The CTEs of WITH RECURSIVE in an order where each comes after those it reads (self-reference aside)."""
        names = {entry.name: index for index, (entry, _, _) in enumerate(entries)}
        needs = {index: {names[n] for n in self._references(body) if n in names and names[n] != index}
                 for index, (_, body, _) in enumerate(entries)}
        order: list[int] = []
        while len(order) < len(entries):
            ready = [i for i in range(len(entries)) if i not in order and needs[i] <= set(order)]
            if not ready:
                raise AnalysisError("mutual recursion between WITH items is not implemented")
            order.append(ready[0])
        return order


__all__ = ["Selects", "Expr"]
