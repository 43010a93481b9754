"""The clauses of one SELECT level: its select list, ORDER BY, GROUP BY, DISTINCT, LIMIT and windows.

``target_list`` expands ``*``, ``t.*`` and ``(x).*`` and names each column as
PostgreSQL's ``FigureColname`` does (the names a sub-select's columns are
known by outside). ORDER BY, GROUP BY and DISTINCT ON items follow
``findTargetlistEntrySQL92``: a bare name is an output column (for GROUP BY,
a FROM column first), a number is a position in the select list, anything
else an expression.
"""

from __future__ import annotations

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.base import AnalyzerBase, Raw
from drivers.postgres.guard.model.expressions import string_value, type_cast_name, unwrap
from drivers.postgres.guard.model.ir import Const, Expr, FieldSelect, Query, SortItem, SubLink, Target, Var, Window
from drivers.postgres.guard.model.scope import NamespaceItem, ParseState
from drivers.postgres.guard.model.types import DATE, INT8, INTERVAL, TEXT, TIME, TIMESTAMP, TIMESTAMPTZ, TIMETZ, UNKNOWN

_FRAME_RANGE, _FRAME_ROWS, _FRAME_GROUPS = 0x2, 0x4, 0x8
_MINMAX_NAMES = {"IS_GREATEST": "greatest", "IS_LEAST": "least"}
_VALUE_NAMES = {
    "SVFOP_CURRENT_DATE": "current_date", "SVFOP_CURRENT_TIME": "current_time", "SVFOP_CURRENT_TIME_N":
    "current_time", "SVFOP_CURRENT_TIMESTAMP": "current_timestamp", "SVFOP_CURRENT_TIMESTAMP_N": "current_timestamp",
    "SVFOP_LOCALTIME": "localtime", "SVFOP_LOCALTIME_N": "localtime", "SVFOP_LOCALTIMESTAMP": "localtimestamp",
    "SVFOP_LOCALTIMESTAMP_N": "localtimestamp", "SVFOP_CURRENT_ROLE": "current_role",
    "SVFOP_CURRENT_USER": "current_user", "SVFOP_USER": "user", "SVFOP_SESSION_USER": "session_user",
    "SVFOP_CURRENT_CATALOG": "current_catalog", "SVFOP_CURRENT_SCHEMA": "current_schema",
}


def _star_target(node: Raw) -> bool:
    kind, body = unwrap(node)
    if kind == "ColumnRef":
        return "A_Star" in body.get("fields", [{}])[-1]
    if kind == "A_Indirection":
        return "A_Star" in body.get("indirection", [{}])[-1]
    return False


def _same(a: Expr, b: Expr) -> bool:
    """Whether two analysed expressions are equal in the sense ORDER BY's ambiguity check needs."""
    if a is b:
        return True
    if isinstance(a, Var) and isinstance(b, Var):
        return a.entry is b.entry and a.column == b.column and a.levels_up == b.levels_up
    if isinstance(a, Const) and isinstance(b, Const):
        return a.type == b.type and a.text == b.text
    return False


class Clauses(AnalyzerBase):
    """The clauses of a SELECT level, a part of the analyser."""

    def figure_name(self, node: Raw | None) -> str:
        """``FigureColname``: the name PostgreSQL gives an unnamed select-list column."""
        name, _ = self._figure(node)
        return name or "?column?"

    def _figure(self, node: Raw | None) -> tuple[str | None, int]:
        if node is None:
            return None, 0
        kind, body = unwrap(node)
        if kind == "ColumnRef":
            names = [f["String"]["sval"] for f in body.get("fields", ()) if "String" in f]
            return (names[-1], 2) if names else (None, 0)
        if kind == "A_Indirection":
            names = [string_value(i) for i in body.get("indirection", ()) if "String" in i]
            return (names[-1], 2) if names else self._figure(body.get("arg"))
        if kind == "FuncCall":
            return string_value(body["funcname"][-1]), 2
        if kind == "A_Expr" and body.get("kind") == "AEXPR_NULLIF":
            return "nullif", 2
        if kind == "TypeCast":
            name, strength = self._figure(body.get("arg"))
            if strength <= 1:
                return type_cast_name(body), 1
            return name, strength
        if kind == "CollateClause":
            return self._figure(body.get("arg"))
        if kind == "GroupingFunc":
            return "grouping", 2
        if kind == "SubLink":
            link = body.get("subLinkType", "EXPR_SUBLINK")
            if link == "EXISTS_SUBLINK":
                return "exists", 2
            if link == "ARRAY_SUBLINK":
                return "array", 2
            if link == "EXPR_SUBLINK":
                analysed = body.get("_analysed")
                if isinstance(analysed, Query) and analysed.targets:
                    return analysed.targets[0].name, 2
            return None, 0
        if kind == "CaseExpr":
            name, strength = self._figure(body.get("defresult"))
            return (name, strength) if strength > 1 else ("case", 1)
        if kind == "A_ArrayExpr":
            return "array", 2
        if kind == "RowExpr":
            return "row", 2
        if kind == "CoalesceExpr":
            return "coalesce", 2
        if kind == "MinMaxExpr":
            return _MINMAX_NAMES.get(body.get("op", ""), None), 2
        if kind == "SQLValueFunction":
            return _VALUE_NAMES.get(body.get("op", ""), None), 2
        if kind == "XmlExpr":
            op = body.get("op", "")
            return (None, 0) if op == "IS_DOCUMENT" else (op.removeprefix("IS_").lower(), 2)
        if kind == "XmlSerialize":
            return "xmlserialize", 2
        return None, 0

    def target_list(self, nodes: list[Raw] | None, state: ParseState) -> list[Target]:
        """``transformTargetList``."""
        targets: list[Target] = []
        for node in nodes or ():
            target = node["ResTarget"]
            value = target.get("val")
            if value is not None and _star_target(value):
                targets.extend(Target(name, expr) for name, expr in self._expand_star(value, state, top=True))
                continue
            expr = self.expr(value, state)
            if "SubLink" in value:
                value["SubLink"]["_analysed"] = getattr(expr, "query", None)
            name = target.get("name") or self.figure_name(value)
            targets.append(Target(name, expr))
        if len(targets) > 1664:
            raise AnalysisError("target lists can have at most 1664 entries")
        return targets

    def target_expressions(self, nodes: list[Raw] | None, state: ParseState) -> list[Expr]:
        """``transformExpressionList``: ``t.*`` inside ROW(...) or VALUES expands to the columns."""
        found: list[Expr] = []
        for node in nodes or ():
            if _star_target(node):
                found.extend(expr for _, expr in self._expand_star(node, state, top=False))
            else:
                found.append(self.expr(node, state))
        return found

    def _expand_star(self, node: Raw, state: ParseState, *, top: bool) -> list[tuple[str, Expr]]:
        kind, body = unwrap(node)
        if kind == "A_Indirection":
            base = dict(body, indirection=body["indirection"][:-1])
            value = self.expr({"A_Indirection": base} if base["indirection"] else base["arg"], state)
            fields = self.row_fields(value)
            if fields is None:
                raise AnalysisError(f"type {self.catalog.type_display(value.type)} is not composite")
            return [(name, FieldSelect(t, m, value, name)) for name, t, m in fields]
        names = [f["String"]["sval"] if "String" in f else None for f in body.get("fields", ())]
        if len(names) == 1:
            if not top:
                raise AnalysisError("* is not allowed here")  # not reachable through the grammar
            items = [i for i in state.namespace if i.cols_visible]
            if not items:
                raise AnalysisError("SELECT * with no tables specified is not valid")
            return [(slot.name, self._column(item, index)) for item in items for index, slot in enumerate(item.columns)]
        qualifier = [f for f in names[:-1] if f is not None]
        if len(qualifier) > 2:
            raise Unsupported("a column reference that names a database is not allowed")
        schema, relation = (qualifier[0], qualifier[1]) if len(qualifier) == 2 else (None, qualifier[0])
        found = self.item_for(state, schema, relation)
        if found is None:
            raise AnalysisError(f'missing FROM-clause entry for table "{relation}"')
        item, levels_up = found
        return [(slot.name, self._column(item, index, levels_up)) for index, slot in enumerate(item.columns)]

    @staticmethod
    def _column(item: NamespaceItem, index: int, levels_up: int = 0) -> Expr:
        """Column ``index`` of a FROM item, by position (names may repeat)."""
        slot = item.columns[index]
        return Var(slot.type, slot.typmod, item.entry, index + 1, levels_up, slot.name)

    def resolve_unknown_targets(self, targets: list[Target]) -> None:
        """``resolveTargetListUnknowns``: an untyped literal in the select list is text."""
        for target in targets:
            if target.expr.type == UNKNOWN:
                target.expr = self.coerce(target.expr, TEXT)

    def where_clause(self, node: Raw | None, state: ParseState, construct: str) -> Expr | None:
        """``transformWhereClause``."""
        if node is None:
            return None
        saved, state.expr_kind = state.expr_kind, construct
        try:
            return self.coerce_to_boolean(self.expr(node, state), construct)
        finally:
            state.expr_kind = saved

    def target_entry(self, node: Raw, targets: list[Target], state: ParseState, construct: str,
                     *, sql99: bool = False) -> Expr:
        """``findTargetlistEntrySQL92`` (ORDER BY, GROUP BY, DISTINCT ON): the item as an expression."""
        kind, body = unwrap(node)
        if not sql99 and kind == "ColumnRef" and len(body.get("fields", ())) == 1 and "String" in body["fields"][0]:
            name: str | None = body["fields"][0]["String"]["sval"]
            if construct == "GROUP BY" and name is not None and state.column(name, local_only=True) is not None:
                name = None
            if name is not None:
                found: Target | None = None
                for target in targets:
                    if not target.junk and target.name == name:
                        if found is not None and not _same(found.expr, target.expr):
                            raise AnalysisError(f'{construct} "{name}" is ambiguous')
                        found = found or target
                if found is not None:
                    return found.expr
        if not sql99 and kind == "A_Const":
            if "ival" not in body:
                raise AnalysisError(f"non-integer constant in {construct}")
            position = int(body["ival"].get("ival", 0))
            self.value_locations.add(body.get("location", -1))
            visible = [t for t in targets if not t.junk]
            if not 1 <= position <= len(visible):
                raise AnalysisError(f"{construct} position {position} is not in select list")
            return visible[position - 1].expr
        saved, state.expr_kind = state.expr_kind, construct
        try:
            expr = self.expr(node, state)
        finally:
            state.expr_kind = saved
        for target in targets:
            if _same(target.expr, expr):
                return target.expr
        targets.append(Target("?column?", expr, junk=True))
        return expr

    def sort_clause(self, items: list[Raw] | None, targets: list[Target], state: ParseState,
                    *, sql99: bool = False) -> list[SortItem]:
        """``transformSortClause``."""
        result = []
        for raw in items or ():
            sort = raw["SortBy"]
            expr = self.target_entry(sort["node"], targets, state, "ORDER BY", sql99=sql99)
            if expr.type == UNKNOWN:
                expr = self.coerce(expr, TEXT)
            item = SortItem(expr)
            if sort.get("useOp"):
                from drivers.postgres.guard.model.operators import operator_name
                name = operator_name(sort["useOp"])
                operator, _ = self.resolver.operator(name, expr.type, expr.type)
                if operator is None:
                    raise AnalysisError(f"operator does not exist: {self.catalog.type_display(expr.type)} {name} "
                                        f"{self.catalog.type_display(expr.type)}")
                item.operator, item.function = operator, self.catalog.functions.get(operator.function)
            result.append(item)
        return result

    def group_clause(self, items: list[Raw] | None, targets: list[Target], state: ParseState) -> list[Expr]:
        """``transformGroupClause``, grouping sets flattened."""
        found: list[Expr] = []
        for raw in items or ():
            kind, body = unwrap(raw)
            if kind == "GroupingSet":
                found.extend(self._grouping_set(body, targets, state))
            else:
                found.append(self.target_entry(raw, targets, state, "GROUP BY"))
        return found

    def _grouping_set(self, body: Raw, targets: list[Target], state: ParseState) -> list[Expr]:
        found: list[Expr] = []
        for raw in body.get("content", ()):
            kind, inner = unwrap(raw)
            if kind == "GroupingSet":
                found.extend(self._grouping_set(inner, targets, state))
            elif kind == "RowExpr" and inner.get("row_format") == "COERCE_IMPLICIT_CAST":
                found.extend(self.target_entry(arg, targets, state, "GROUP BY") for arg in inner.get("args", ()))
            else:
                found.append(self.target_entry(raw, targets, state, "GROUP BY"))
        return found

    def limit_clause(self, node: Raw | None, state: ParseState, construct: str) -> Expr | None:
        """``transformLimitClause``: a bigint that reads no column of this level."""
        if node is None:
            return None
        saved, state.expr_kind = state.expr_kind, construct
        try:
            expr = self.coerce_to_specific(self.expr(node, state), INT8, construct)
        finally:
            state.expr_kind = saved
        from drivers.postgres.guard.model.ir import walk
        if any(isinstance(e, Var) and e.levels_up == 0 for e in walk(expr)):
            raise AnalysisError(f"argument of {construct} must not contain variables")
        return expr

    def window_reference(self, over: Raw, state: ParseState) -> Window:
        """The window a function's OVER names or defines (its expressions analysed where it is used)."""
        name = over.get("name")
        if name and not (over.get("refname") or over.get("partitionClause") or over.get("orderClause")
                         or over.get("frameOptions", 0) & 1):
            defined = state.windows.get(name)
            if defined is None:
                raise AnalysisError(f'window "{name}" does not exist')
            if isinstance(defined, Window):
                return defined
            window = self.window_definition(defined, state)
            state.windows[name] = window
            return window
        return self.window_definition(over, state)

    def window_definition(self, definition: Raw, state: ParseState) -> Window:
        """One window's PARTITION BY, ORDER BY and frame offsets."""
        window = Window(str(definition.get("name") or ""))
        saved, state.expr_kind = state.expr_kind, "window"
        try:
            reference = definition.get("refname")
            if reference:
                base = state.windows.get(reference)
                if base is None:
                    raise AnalysisError(f'window "{reference}" does not exist')
                if not isinstance(base, Window):
                    base = self.window_definition(base, state)
                    state.windows[reference] = base
                window.partition, window.order = list(base.partition), list(base.order)
            window.partition += [self.expr(node, state) for node in definition.get("partitionClause", ())]
            for raw in definition.get("orderClause", ()):
                expr = self.expr(raw["SortBy"]["node"], state)
                window.order.append(SortItem(expr))
            options = int(definition.get("frameOptions", 0))
            for key, slot in (("startOffset", "start_offset"), ("endOffset", "end_offset")):
                node = definition.get(key)
                if node is None:
                    continue
                state.expr_kind = "window frame"
                offset = self.expr(node, state)
                state.expr_kind = "window"
                if options & (_FRAME_ROWS | _FRAME_GROUPS):
                    offset = self.coerce_to_specific(offset, INT8, "ROWS" if options & _FRAME_ROWS else "GROUPS")
                elif options & _FRAME_RANGE:
                    offset = self._range_offset(offset, window)
                setattr(window, slot, offset)
        finally:
            state.expr_kind = saved
        return window

    def _range_offset(self, offset: Expr, window: Window) -> Expr:
        if len(window.order) != 1:
            raise AnalysisError("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
        if offset.type != UNKNOWN:
            return offset
        sort_type = self.catalog.base_type(window.order[0].expr.type)
        target = INTERVAL if sort_type in (DATE, TIME, TIMETZ, TIMESTAMP, TIMESTAMPTZ, INTERVAL) else sort_type
        return self.coerce(offset, target)


__all__ = ["Clauses", "SubLink"]


def grouping_set_count(items: list[Raw]) -> int:
    """How many grouping sets a GROUP BY list expands to, as ``expand_grouping_sets`` counts them: the product
    over its items, where ROLLUP of n is n + 1 sets, CUBE of n is 2^n and GROUPING SETS the sum of its own."""
    count = 1
    for raw in items:
        kind, body = unwrap(raw)
        count *= _sets_of(body) if kind == "GroupingSet" else 1
    return count


def _sets_of(body: Raw) -> int:
    kind, content = body.get("kind"), body.get("content", ())
    if kind == "GROUPING_SET_ROLLUP":
        return len(content) + 1
    if kind == "GROUPING_SET_CUBE":
        return 1 << min(len(content), 62)
    if kind == "GROUPING_SET_SETS":
        return sum(_sets_of(unwrap(raw)[1]) if unwrap(raw)[0] == "GroupingSet" else 1 for raw in content)
    return 1  # GROUPING_SET_EMPTY, GROUPING_SET_SIMPLE
