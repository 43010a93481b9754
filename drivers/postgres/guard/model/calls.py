"""Function calls (``transformFuncCall`` and ``ParseFuncOrColumn`` of ``parse_func.c``).

A call resolves through ``resolution.Resolver.function``; then, as in
PostgreSQL, its polymorphic parameters are resolved from the arguments, each
argument is coerced to its parameter, VARIADIC arguments are gathered into an
array, and the call becomes a plain call, an aggregate (with its ORDER BY,
DISTINCT, FILTER and ordered-set direct arguments) or a window function. A
call of one argument of a composite type may be a column of that row
(``(t).name``, ``name(t)``) and is read both ways in PostgreSQL's order.
"""

from __future__ import annotations

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.base import AnalyzerBase, Raw
from drivers.postgres.guard.model.coercion import Context
from drivers.postgres.guard.model.expressions import string_value, unwrap
from drivers.postgres.guard.model.ir import Array, Call, Expr, FieldSelect, Row, SortItem, Var, Window
from drivers.postgres.guard.model.resolution import Outcome
from drivers.postgres.guard.model.scope import NamespaceItem, ParseState, column_of
from drivers.postgres.guard.model.types import ANY, INTERNAL, RECORD, UNKNOWN, VOID

_NO_AGGREGATES = {
    "WHERE": "aggregate functions are not allowed in WHERE",
    "JOIN/ON": "aggregate functions are not allowed in JOIN conditions",
    "GROUP BY": "aggregate functions are not allowed in GROUP BY",
    "FROM": "aggregate functions are not allowed in functions in FROM",
    "LIMIT": "aggregate functions are not allowed in LIMIT",
    "OFFSET": "aggregate functions are not allowed in OFFSET",
    "window frame": "aggregate functions are not allowed in window frames",
}
_NO_WINDOWS = {
    "WHERE": "window functions are not allowed in WHERE",
    "JOIN/ON": "window functions are not allowed in JOIN conditions",
    "GROUP BY": "window functions are not allowed in GROUP BY",
    "HAVING": "window functions are not allowed in HAVING",
    "FROM": "window functions are not allowed in functions in FROM",
    "FILTER": "window functions are not allowed in FILTER",
    "LIMIT": "window functions are not allowed in LIMIT",
    "OFFSET": "window functions are not allowed in OFFSET",
    "window": "window functions are not allowed in window definitions",
    "window frame": "window functions are not allowed in window definitions",
}
_NO_SETS = {
    "WHERE": "set-returning functions are not allowed in WHERE",
    "JOIN/ON": "set-returning functions are not allowed in JOIN conditions",
    "HAVING": "set-returning functions are not allowed in HAVING",
    "FILTER": "set-returning functions are not allowed in FILTER",
    "LIMIT": "set-returning functions are not allowed in LIMIT",
    "OFFSET": "set-returning functions are not allowed in OFFSET",
    "window": "set-returning functions are not allowed in window definitions",
    "GROUP BY": "set-returning functions are not allowed in GROUP BY",
}


def function_name(parts: list[Raw]) -> str:
    """The pg_catalog function a FuncCall names; other schemas are refused."""
    names = [string_value(part) for part in parts]
    if len(names) == 2 and names[0] == "pg_catalog" or len(names) == 1:
        return names[-1]
    raise Unsupported(f"function {'.'.join(names)} is not allowed: only built-in functions (schema pg_catalog) "
                      "may be called")


class Calls(AnalyzerBase):
    """Function calls, a part of the analyser."""

    def function_call(self, body: Raw, state: ParseState) -> Expr:
        """``transformFuncCall``."""
        parts = body.get("funcname", [])
        name = function_name(parts)
        arguments: list[Expr] = []
        names: list[str] = []
        for raw in body.get("args", ()):
            kind, inner = unwrap(raw)
            if kind == "NamedArgExpr":
                if inner.get("name") in names:
                    raise AnalysisError(f'argument name "{inner.get("name")}" used more than once')
                names.append(str(inner.get("name")))
                arguments.append(self.expr(inner.get("arg"), state))
            else:
                if names:
                    raise AnalysisError("positional argument cannot follow named argument")
                arguments.append(self.expr(raw, state))
        order_nodes = [item["SortBy"] for item in body.get("agg_order", ())]
        within_group = bool(body.get("agg_within_group"))
        if within_group:
            saved, state.expr_kind = state.expr_kind, "ORDER BY"
            arguments.extend(self.expr(item.get("node"), state) for item in order_nodes)
            state.expr_kind = saved
        call = _CallSyntax(
            name=name, qualified=len(parts) > 1, arguments=arguments, names=names,
            order=order_nodes, within_group=within_group, star=bool(body.get("agg_star")),
            distinct=bool(body.get("agg_distinct")), variadic=bool(body.get("func_variadic")),
            filter=body.get("agg_filter"), over=body.get("over"), location=body.get("location", -1),
        )
        result = self._parse_function(call, state, is_column=False)
        assert result is not None
        return result

    def function_or_column(self, name: str, arg: Expr, state: ParseState) -> Expr | None:
        """``x.name`` written as a column: a column of x's row, else the call ``name(x)`` (None when neither)."""
        call = _CallSyntax(name=name, qualified=False, arguments=[arg])
        return self._parse_function(call, state, is_column=True)

    def _parse_function(self, call: _CallSyntax, state: ParseState, *, is_column: bool) -> Expr | None:
        """``ParseFuncOrColumn``."""
        catalog = self.catalog
        arguments = call.arguments
        count = len(arguments)
        if count > 100:
            raise AnalysisError("cannot pass more than 100 arguments to a function")
        types = [a.type for a in arguments]
        filter_expr = None
        if call.filter is not None:
            saved, state.expr_kind = state.expr_kind, "FILTER"
            filter_expr = self.coerce_to_boolean(self.expr(call.filter, state), "FILTER")
            state.expr_kind = saved
        projection = (count == 1 and not call.order and filter_expr is None and not call.star and not call.distinct
                      and call.over is None and not call.variadic and not call.names and not call.qualified
                      and (types[0] == RECORD or catalog.is_complex(types[0])))
        if projection and is_column:
            found = self.complex_projection(call.name, arguments[0])
            if found is not None:
                return found
        first_is_literal = count == 1 and arguments[0].__class__.__name__ == "Const"
        choice = self.resolver.function(call.name, types, call.names, expand_variadic=not call.variadic,
                                        first_is_literal=first_is_literal)
        outcome = choice.outcome
        signature = self._signature(call.name, types, call.names)
        if outcome is Outcome.PROCEDURE:
            raise AnalysisError(f"{signature} is a procedure", hint="To call a procedure, use CALL.")
        if outcome in (Outcome.NORMAL, Outcome.COERCION):
            for flag, what in ((call.star, f"{call.name}(*) specified, but {call.name} is not an aggregate function"),
                               (call.distinct, f"DISTINCT specified, but {call.name} is not an aggregate function"),
                               (call.within_group, f"WITHIN GROUP specified, but {call.name} is not an aggregate "
                                                   "function"),
                               (bool(call.order), f"ORDER BY specified, but {call.name} is not an aggregate function"),
                               (filter_expr is not None, f"FILTER specified, but {call.name} is not an aggregate "
                                                         "function"),
                               (call.over is not None, f"OVER specified, but {call.name} is not a window function "
                                                       "nor an aggregate function")):
                if flag:
                    raise AnalysisError(what)
        if outcome is Outcome.COERCION:
            return self.coerce(arguments[0], choice.cast_target, context=Context.EXPLICIT, explicit=True)
        if outcome is Outcome.MULTIPLE:
            if is_column:
                return None
            raise AnalysisError(f"function {signature} is not unique",
                                hint="Could not choose a best candidate function. You might need to add explicit "
                                     "type casts.")
        if outcome is Outcome.NOT_FOUND:
            if is_column:
                return None
            if projection:
                found = self.complex_projection(call.name, arguments[0])
                if found is not None:
                    return found
            raise AnalysisError(f"function {signature} does not exist",
                                hint="No function matches the given name and argument types. You might need to add "
                                     "explicit type casts.")
        function = choice.function
        assert function is not None
        if function.result == INTERNAL:
            raise AnalysisError('functions returning type "internal" cannot be called explicitly')
        if outcome is Outcome.AGGREGATE and function.aggregate_kind in ("o", "h"):
            self._check_ordered_set(call, function, choice.variadic_count)
        elif outcome is Outcome.AGGREGATE and call.within_group:
            raise AnalysisError(f"{call.name} is not an ordered-set aggregate, so it cannot have WITHIN GROUP")
        if outcome is Outcome.WINDOW:
            if call.over is None:
                raise AnalysisError(f"window function {call.name} requires an OVER clause")
            if call.within_group:
                raise AnalysisError(f"window function {call.name} cannot have WITHIN GROUP")
        declared = list(choice.declared)
        actual = types + declared[count:]
        if function.aggregate_kind == "h":
            self._unify_hypothetical(arguments, types, declared, len(call.order))
            actual = [a.type for a in arguments] + declared[count:]
        result_type = self.coercions.resolve_polymorphic(actual, declared, function.result)
        arguments = [self.coerce(arg, declared[i]) if arg.type != declared[i] else arg
                     for i, arg in enumerate(arguments)]
        variadic = call.variadic if function.variadic else False
        if choice.variadic_count > 0 and function.variadic != ANY:
            fixed = count - choice.variadic_count
            gathered = arguments[fixed:]
            element = gathered[0].type
            array = catalog.array_type(element)
            if not array:
                raise AnalysisError(f"could not find array type for data type {catalog.type_display(element)}")
            arguments = arguments[:fixed] + [Array(array, element, gathered, False)]
            variadic = True
        if count and function.variadic == ANY and call.variadic \
                and not catalog.element_type(catalog.base_type(arguments[-1].type)):
            raise AnalysisError("VARIADIC argument must be an array")
        if function.returns_set:
            problem = _NO_SETS.get(state.expr_kind)
            if problem:
                raise AnalysisError(problem)
        return self._build_call(call, function, outcome, result_type, arguments, variadic, filter_expr, state)

    def _build_call(self, call: _CallSyntax, function: object, outcome: Outcome, result_type: int,
                    arguments: list[Expr], variadic: bool, filter_expr: Expr | None, state: ParseState) -> Expr:
        from drivers.postgres.guard.model.types import FunctionInfo
        assert isinstance(function, FunctionInfo)
        if outcome is Outcome.NORMAL:
            return Call(result_type, function, arguments, variadic=variadic, location=call.location)
        if outcome is Outcome.AGGREGATE and call.over is None:
            if not arguments and not call.star and not call.within_group:
                raise AnalysisError(f"{call.name}(*) must be used to call a parameterless aggregate function")
            if function.returns_set:
                raise AnalysisError("aggregates cannot return sets")
            if call.names:
                raise AnalysisError("aggregates cannot use named arguments")
            problem = _NO_AGGREGATES.get(state.expr_kind)
            if problem:
                raise AnalysisError(problem)
            result = Call(result_type, function, arguments, variadic=variadic, kind="aggregate",
                          location=call.location)
            if function.aggregate_kind in ("o", "h"):
                direct = len(arguments) - len(call.order)
                result.direct_args, result.args = arguments[:direct], arguments[direct:]
            else:
                saved, state.expr_kind = state.expr_kind, "ORDER BY"
                result.order = [SortItem(self.expr(item.get("node"), state)) for item in call.order]
                state.expr_kind = saved
            result.distinct, result.filter, result.star = call.distinct, filter_expr, call.star
            state.query_has_aggregates = True
            return result
        # A window function, or an aggregate used as one.
        if call.distinct:
            raise AnalysisError("DISTINCT is not implemented for window functions")
        if outcome is Outcome.AGGREGATE and not arguments and not call.star:
            raise AnalysisError(f"{call.name}(*) must be used to call a parameterless aggregate function")
        if call.order:
            raise AnalysisError("aggregate ORDER BY is not implemented for window functions")
        if outcome is Outcome.WINDOW and filter_expr is not None:
            raise AnalysisError("FILTER is not implemented for non-aggregate window functions")
        if function.returns_set:
            raise AnalysisError("window functions cannot return sets")
        problem = _NO_WINDOWS.get(state.expr_kind)
        if problem:
            raise AnalysisError(problem)
        result = Call(result_type, function, arguments, variadic=variadic, kind="window", location=call.location)
        result.filter, result.star = filter_expr, call.star
        assert call.over is not None  # a window outcome is decided by the OVER clause
        result.window = self.window_reference(call.over, state)
        state.query_has_windows = True
        return result

    def _check_ordered_set(self, call: _CallSyntax, function: object, variadic_count: int) -> None:
        from drivers.postgres.guard.model.types import FunctionInfo
        assert isinstance(function, FunctionInfo)
        if not call.within_group:
            raise AnalysisError(f"WITHIN GROUP is required for ordered-set aggregate {call.name}")
        if call.over is not None:
            raise AnalysisError(f"OVER is not supported for ordered-set aggregate {call.name}")
        aggregated = len(call.order)
        direct = len(call.arguments) - aggregated
        signature = self._signature(call.name, [a.type for a in call.arguments], call.names)
        if not function.variadic:
            if direct != function.direct_arguments:
                raise AnalysisError(f"function {signature} does not exist")
            return
        declared = len(call.arguments) - (variadic_count - 1 if variadic_count > 1 else 0)
        if function.direct_arguments < declared:
            if direct != function.direct_arguments:
                raise AnalysisError(f"function {signature} does not exist")
        elif function.aggregate_kind == "h":
            if variadic_count != 2 * aggregated:
                raise AnalysisError(f"function {signature} does not exist")
        elif variadic_count <= aggregated:
            raise AnalysisError(f"function {signature} does not exist")

    def _unify_hypothetical(self, arguments: list[Expr], types: list[int], declared: list[int],
                            aggregated: int) -> None:
        """``unify_hypothetical_args``: each hypothetical argument takes the type of its aggregated one."""
        direct = len(arguments) - aggregated
        first_hypothetical = direct - aggregated
        for position in range(first_hypothetical, direct):
            paired = direct + position - first_hypothetical
            if declared[position] != ANY:
                continue
            pair = [arguments[paired], arguments[position]]
            common = self.coercions.common_type([e.type for e in pair], "WITHIN GROUP")
            typmod = self.common_typmod(pair, common)
            arguments[position] = self.coerce(arguments[position], common, typmod)
            arguments[paired] = self.coerce(arguments[paired], common, typmod)

    def complex_projection(self, name: str, arg: Expr) -> Expr | None:
        """``ParseComplexProjection``: the field ``name`` of a row value, or None."""
        if isinstance(arg, Var) and arg.column == 0:
            item = NamespaceItem(arg.entry)
            return column_of(item, name, arg.levels_up)
        for index, (field, type_oid, typmod) in enumerate(self.row_fields(arg) or ()):
            if field == name:
                return FieldSelect(type_oid, typmod, arg, name, arg.location)
        return None

    def row_fields(self, expr: Expr) -> list[tuple[str, int, int]] | None:
        """The fields of a row value (``get_expr_result_tupdesc``, ``expandRecordVariable``), or None."""
        catalog = self.catalog
        if isinstance(expr, Var) and expr.column == 0:
            return [(c.name, c.type, c.typmod) for c in expr.entry.columns]
        relation = catalog.relation_of_type(catalog.base_type(expr.type))
        if relation is not None:
            return [(c.name, c.type, c.typmod) for c in relation.columns]
        if expr.type != RECORD:
            return None
        if isinstance(expr, Row):
            return [(n, a.type, a.typmod) for n, a in zip(expr.names, expr.args)]
        if isinstance(expr, Call):
            outputs = expr.function.output_columns()
            return [(n, t, -1) for n, t in outputs] if outputs else None
        if isinstance(expr, Var) and expr.column > 0:
            slot = expr.entry.columns[expr.column - 1]
            if slot.expr is not None:
                return self.row_fields(slot.expr)
        if isinstance(expr, FieldSelect):
            return None
        return None

    def unknown_attribute(self, arg: Expr, name: str) -> str:
        """``unknown_attribute``'s message for ``(arg).name``."""
        if arg.type == RECORD:
            return f'could not identify column "{name}" in record data type'
        if self.catalog.is_complex(arg.type):
            return f'column "{name}" not found in data type {self.catalog.type_display(arg.type)}'
        return (f"column notation .{name} applied to type {self.catalog.type_display(arg.type)}, which is not a "
                "composite type")

    def _signature(self, name: str, types: list[int], names: list[str]) -> str:
        """``func_signature_string``: ``lower(integer)``."""
        shown = [self.catalog.type_display(t) for t in types]
        positional = len(types) - len(names)
        shown = shown[:positional] + [f"{n} => {t}" for n, t in zip(names, shown[positional:])]
        return f"{name}({', '.join(shown)})"


class _CallSyntax:
    """How a call was written: its name, analysed arguments and decorations."""

    def __init__(self, *, name: str, qualified: bool, arguments: list[Expr], names: list[str] | None = None,
                 order: list[Raw] | None = None, within_group: bool = False, star: bool = False,
                 distinct: bool = False, variadic: bool = False, filter: Raw | None = None,
                 over: Raw | None = None, location: int = -1) -> None:
        self.name = name
        self.qualified = qualified
        self.arguments = arguments
        self.names = names or []
        self.order = order or []
        self.within_group = within_group
        self.star = star
        self.distinct = distinct
        self.variadic = variadic
        self.filter = filter
        self.over = over
        self.location = location


__all__ = ["Calls", "function_name", "UNKNOWN", "VOID", "Window"]
