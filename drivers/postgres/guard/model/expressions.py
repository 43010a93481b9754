"""Analysing one raw expression into a typed one (``transformExpr`` of PostgreSQL's ``parse_expr.c``).

``Expressions.expr`` dispatches on the raw node's kind. Literals, casts,
column references, CASE, COALESCE, GREATEST, ARRAY, ROW, subscripts and
field selections, sub-selects and the SQL-standard value functions are here;
calls (``calls.py``) and operator expressions (``operators.py``) have their
own modules. Each follows the C function it replaces, so that every
expression gets the type PostgreSQL gives it.
"""

from __future__ import annotations

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.base import AnalyzerBase, Raw
from drivers.postgres.guard.model.coercion import Context
from drivers.postgres.guard.model.ir import (
    Array,
    BoolOp,
    Case,
    CaseTest,
    Coalesce,
    Collate,
    Const,
    Expr,
    Grouping,
    MinMax,
    Param,
    Row,
    SubLink,
    Subscript,
    SubSelectColumn,
    Test,
    ValueFunction,
    Xml,
)
from drivers.postgres.guard.model.scope import ParseState
from drivers.postgres.guard.model.typenames import resolve_type_name, type_name_parts
from drivers.postgres.guard.model.types import (
    BIT,
    BOOL,
    DATE,
    INT2VECTOR,
    INT4,
    INT8,
    JSONB,
    NUMERIC,
    OIDVECTOR,
    RECORD,
    TEXT,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    TIMETZ,
    UNKNOWN,
    XML,
)

_INT4_RANGE = range(-(2**31), 2**31)
_INT8_RANGE = range(-(2**63), 2**63)
_VALUE_FUNCTIONS = {
    "SVFOP_CURRENT_DATE": ("current_date", DATE), "SVFOP_CURRENT_TIME": ("current_time", TIMETZ),
    "SVFOP_CURRENT_TIME_N": ("current_time", TIMETZ), "SVFOP_CURRENT_TIMESTAMP": ("current_timestamp", TIMESTAMPTZ),
    "SVFOP_CURRENT_TIMESTAMP_N": ("current_timestamp", TIMESTAMPTZ), "SVFOP_LOCALTIME": ("localtime", TIME),
    "SVFOP_LOCALTIME_N": ("localtime", TIME), "SVFOP_LOCALTIMESTAMP": ("localtimestamp", TIMESTAMP),
    "SVFOP_LOCALTIMESTAMP_N": ("localtimestamp", TIMESTAMP),
}
_NAME_VALUE_FUNCTIONS = {
    "SVFOP_CURRENT_ROLE": "current_role", "SVFOP_CURRENT_USER": "current_user", "SVFOP_USER": "user",
    "SVFOP_SESSION_USER": "session_user", "SVFOP_CURRENT_CATALOG": "current_catalog",
    "SVFOP_CURRENT_SCHEMA": "current_schema",
}
_BOOLEAN_TESTS = {
    "IS_TRUE": "IS TRUE", "IS_NOT_TRUE": "IS NOT TRUE", "IS_FALSE": "IS FALSE", "IS_NOT_FALSE": "IS NOT FALSE",
    "IS_UNKNOWN": "IS UNKNOWN", "IS_NOT_UNKNOWN": "IS NOT UNKNOWN",
}


def unwrap(node: Raw) -> tuple[str, Raw]:
    """``{"Kind": {...}}`` -> ``("Kind", {...})``."""
    ((kind, body),) = node.items()
    return kind, body


def string_value(node: Raw) -> str:
    """The text of a ``String`` node."""
    return str(node["String"].get("sval", ""))


def constant(body: Raw) -> Const:
    """``make_const``: an ``A_Const``'s type and text."""
    location = body.get("location", -1)
    if body.get("isnull"):
        return Const(UNKNOWN, None, "null", location)
    if "ival" in body:
        return Const(INT4, str(body["ival"].get("ival", 0)), "integer", location)
    if "fval" in body:
        text = str(body["fval"].get("fval", "0"))
        stripped = text.lstrip("+-")
        if stripped.isdigit() and len(stripped) <= 19 and int(text) in _INT8_RANGE:
            # make_const: a float token that is an integer may still fit int4 (the grammar negated
            # 2147483648, an int8 token, into -2147483648).
            return Const(INT4 if int(text) in _INT4_RANGE else INT8, text, "integer", location)
        return Const(NUMERIC, text, "numeric", location)
    if "boolval" in body:
        return Const(BOOL, "true" if body["boolval"].get("boolval") else "false", "boolean", location)
    if "bsval" in body:
        return Const(BIT, str(body["bsval"].get("bsval", "")), "bits", location)
    if "sval" in body:
        return Const(UNKNOWN, str(body["sval"].get("sval", "")), "string", location)
    raise Unsupported("a constant of an unknown kind")


class Expressions(AnalyzerBase):
    """``transformExpr``: mixed into the analyser (``analysis.Analyzer``)."""

    def expr(self, node: Raw | None, state: ParseState) -> Expr:
        """The analysed form of raw expression ``node``."""
        if node is None:
            raise Unsupported("an empty expression")
        kind, body = unwrap(node)
        method = getattr(self, "_expr_" + kind, None)
        if method is None:
            raise Unsupported(f"{kind} is not supported in a GetData query")
        return method(body, state)

    def exprs(self, nodes: list[Raw] | None, state: ParseState) -> list[Expr]:
        return [self.expr(node, state) for node in nodes or ()]

    def _expr_A_Const(self, body: Raw, state: ParseState) -> Expr:
        return constant(body)

    def _expr_ColumnRef(self, body: Raw, state: ParseState) -> Expr:
        return self.column_ref(body, state)

    def _expr_ParamRef(self, body: Raw, state: ParseState) -> Expr:
        """``variable_paramref_hook``: ``$n`` of the type deduced so far (``unknown`` until a coercion says)."""
        number = int(body.get("number", 0))
        values = self.parameter_values
        if number < 1 or number > len(values):
            raise Unsupported(f"${number} has no value: send the query's parameters beside it ({len(values)} were "
                              "sent)" if number >= 1 else f"there is no parameter ${number}")
        while len(self.parameter_types) < number:
            self.parameter_types.append(UNKNOWN)
        return Param(self.parameter_types[number - 1], number, values[number - 1], body.get("location", -1))

    def _expr_TypeCast(self, body: Raw, state: ParseState) -> Expr:
        target, typmod = resolve_type_name(self.catalog, body["typeName"])
        arg = body.get("arg")
        if arg is not None and "A_ArrayExpr" in arg:
            element = self.catalog.element_type(self.catalog.base_type(target))
            if element:
                return self.array_expr(arg["A_ArrayExpr"], state, target, element, typmod)
        value = self.expr(arg, state)
        result = self.coerce_to_target(value, target, typmod, Context.EXPLICIT,
                                       explicit=True)
        if result is None:
            raise AnalysisError(f"cannot cast type {self.catalog.type_display(value.type)} to "
                                f"{self.catalog.type_display(target)}")
        return result

    def _expr_CollateClause(self, body: Raw, state: ParseState) -> Expr:
        arg = self.expr(body.get("arg"), state)
        names = [string_value(n) for n in body.get("collname", ())]
        name = names[-1] if names else ""
        if len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog"):
            raise Unsupported(f"collation {'.'.join(names)} is not allowed: only built-in collations "
                              "(schema pg_catalog) may be used")
        info = self.catalog.type(arg.type)
        if arg.type != UNKNOWN and (info is None or not info.collatable):
            raise AnalysisError(f"collations are not supported by type {self.catalog.type_display(arg.type)}")
        if name not in self.catalog.collations and name != "default":
            raise AnalysisError(f'collation "{name}" for encoding "UTF8" does not exist')
        return Collate(arg, name, body.get("location", -1))

    def _expr_BoolExpr(self, body: Raw, state: ParseState) -> Expr:
        op = {"AND_EXPR": "AND", "OR_EXPR": "OR", "NOT_EXPR": "NOT"}[body.get("boolop", "AND_EXPR")]
        args = [self.coerce_to_boolean(self.expr(a, state), op)
                for a in body.get("args", ())]
        return BoolOp(op, args, body.get("location", -1))

    def _expr_NullTest(self, body: Raw, state: ParseState) -> Expr:
        arg = self.expr(body.get("arg"), state)
        test = "IS NOT NULL" if body.get("nulltesttype") == "IS_NOT_NULL" else "IS NULL"
        return Test(arg, test, body.get("location", -1))

    def _expr_BooleanTest(self, body: Raw, state: ParseState) -> Expr:
        test = _BOOLEAN_TESTS.get(body.get("booltesttype", "IS_TRUE"), "IS TRUE")
        arg = self.coerce_to_boolean(self.expr(body.get("arg"), state), test)
        return Test(arg, test, body.get("location", -1))

    def _expr_CaseExpr(self, body: Raw, state: ParseState) -> Expr:
        arg: Expr | None = None
        placeholder: CaseTest | None = None
        if body.get("arg") is not None:
            arg = self.expr(body["arg"], state)
            if arg.type == UNKNOWN:
                arg = self.coerce_to_common(arg, TEXT, "CASE")
            placeholder = CaseTest(arg)
        whens: list[tuple[Expr, Expr]] = []
        for item in body.get("args", ()):
            when = item["CaseWhen"]
            if placeholder is not None:
                condition = self.binary_operator("=", placeholder, self.expr(when.get("expr"), state),
                                                 when.get("location", -1))
            else:
                condition = self.expr(when.get("expr"), state)
            condition = self.coerce_to_boolean(condition, "CASE/WHEN")
            whens.append((condition, self.expr(when.get("result"), state)))
        default_node = body.get("defresult") or {"A_Const": {"isnull": True, "location": -1}}
        default = self.expr(default_node, state)
        results = [default] + [result for _, result in whens]
        common = self.coercions.common_type([r.type for r in results], "CASE")
        default = self.coerce_to_common(default, common, "CASE/ELSE")
        whens = [(c, self.coerce_to_common(r, common, "CASE/WHEN")) for c, r in whens]
        typmod = self.common_typmod([default] + [r for _, r in whens], common)
        if any(getattr(r, "returns_set", False) for r in [default] + [r for _, r in whens]):
            raise AnalysisError("set-returning functions are not allowed in CASE")
        return Case(common, arg, whens, default, typmod, body.get("location", -1))

    def _unified(self, body: Raw, state: ParseState, construct: str) -> tuple[int, list[Expr], int]:
        args = self.exprs(body.get("args"), state)
        common = self.coercions.common_type([a.type for a in args], construct)
        args = [self.coerce_to_common(a, common, construct) for a in args]
        return common, args, self.common_typmod(args, common)

    def _expr_CoalesceExpr(self, body: Raw, state: ParseState) -> Expr:
        common, args, typmod = self._unified(body, state, "COALESCE")
        if any(getattr(a, "returns_set", False) for a in args):
            raise AnalysisError("set-returning functions are not allowed in COALESCE")
        return Coalesce(common, args, typmod, body.get("location", -1))

    def _expr_MinMaxExpr(self, body: Raw, state: ParseState) -> Expr:
        op = "GREATEST" if body.get("op") == "IS_GREATEST" else "LEAST"
        common, args, typmod = self._unified(body, state, op)
        return MinMax(common, op, args, typmod, body.get("location", -1))

    def _expr_A_ArrayExpr(self, body: Raw, state: ParseState) -> Expr:
        return self.array_expr(body, state, 0, 0, -1)

    def array_expr(self, body: Raw, state: ParseState, array_type: int, element_type: int,
                   typmod: int) -> Expr:
        """``transformArrayExpr``; with ``array_type`` when the array is cast (``ARRAY[...]::int[]``)."""
        catalog = self.catalog
        multidims = False
        elements: list[Expr] = []
        for node in body.get("elements", ()):
            if "A_ArrayExpr" in node:
                element = self.array_expr(node["A_ArrayExpr"], state, array_type, element_type, typmod)
                multidims = True
            else:
                element = self.expr(node, state)
                if not multidims and element.type not in (INT2VECTOR, OIDVECTOR) and catalog.element_type(
                        element.type):
                    multidims = True
            elements.append(element)
        if array_type:
            target, hard = (array_type if multidims else element_type), True
        else:
            if not elements:
                raise AnalysisError("cannot determine type of empty array",
                                    hint="Explicitly cast to the desired type, for example ARRAY[]::integer[].")
            target, hard = self.coercions.common_type([e.type for e in elements], "ARRAY"), False
            if multidims:
                array_type, element_type = target, catalog.element_type(target)
                if not element_type:
                    raise AnalysisError(f"could not find element type for data type {catalog.type_display(target)}")
            else:
                element_type, array_type = target, catalog.array_type(target)
                if not array_type:
                    raise AnalysisError(f"could not find array type for data type {catalog.type_display(target)}")
        coerced = []
        for element in elements:
            if hard:
                converted = self.coerce_to_target(element, target, typmod, Context.EXPLICIT,
                                                  explicit=True)
                if converted is None:
                    raise AnalysisError(f"cannot cast type {catalog.type_display(element.type)} to "
                                        f"{catalog.type_display(target)}")
            else:
                converted = self.coerce_to_common(element, target, "ARRAY")
            coerced.append(converted)
        result_typmod = self.common_typmod(coerced, target) if not multidims else -1
        if hard:
            result_typmod = typmod
        return Array(array_type, element_type, coerced, multidims, result_typmod, body.get("location", -1))

    def _expr_RowExpr(self, body: Raw, state: ParseState) -> Expr:
        args = self.target_expressions(body.get("args"), state)
        if len(args) > 1664:
            raise AnalysisError("ROW expressions can have at most 1664 entries")
        return Row(RECORD, args, [f"f{i}" for i in range(1, len(args) + 1)], body.get("location", -1))

    def _expr_SQLValueFunction(self, body: Raw, state: ParseState) -> Expr:
        op = body.get("op", "")
        if op in _NAME_VALUE_FUNCTIONS:
            return ValueFunction(self.catalog.types_by_name["name"].oid, _NAME_VALUE_FUNCTIONS[op],
                                 location=body.get("location", -1))
        if op not in _VALUE_FUNCTIONS:
            raise Unsupported(f"{op} is not supported")
        name, type_oid = _VALUE_FUNCTIONS[op]
        typmod = int(body.get("typmod", 0)) if op.endswith("_N") else -1
        return ValueFunction(type_oid, name, min(typmod, 6) if typmod >= 0 else -1, body.get("location", -1))

    def _expr_GroupingFunc(self, body: Raw, state: ParseState) -> Expr:
        args = self.exprs(body.get("args"), state)
        if len(args) > 31:
            raise AnalysisError("GROUPING must have fewer than 32 arguments")
        return Grouping(INT4, args, body.get("location", -1))

    def _expr_NamedArgExpr(self, body: Raw, state: ParseState) -> Expr:
        raise AnalysisError("named argument is not allowed here")

    def _expr_SubLink(self, body: Raw, state: ParseState) -> Expr:
        kind = body.get("subLinkType", "EXPR_SUBLINK").removesuffix("_SUBLINK").lower()
        if kind in ("multiexpr", "cte"):
            raise Unsupported(f"a {kind} sub-select is not supported")
        query = self.sub_select(body["subselect"], state)
        location = body.get("location", -1)
        columns = query.columns
        if kind == "exists":
            return SubLink(BOOL, kind, query, location=location)
        if kind in ("expr", "array"):
            if len(columns) != 1:
                raise AnalysisError("subquery must return only one column")
            _, type_oid, typmod = columns[0]
            if kind == "expr":
                return SubLink(type_oid, kind, query, typmod=typmod, location=location)
            array = type_oid if self.catalog.element_type(type_oid) else self.catalog.array_type(type_oid)
            if not array:
                raise AnalysisError(f"could not find array type for data type "
                                    f"{self.catalog.type_display(type_oid)}")
            return SubLink(array, kind, query, typmod=typmod, location=location)
        operator_names = body.get("operName")
        operator = string_value(operator_names[-1]) if operator_names else "="
        left = self.expr(body.get("testexpr"), state)
        left_list = left.args if isinstance(left, Row) else [left]
        right_list: list[Expr] = [SubSelectColumn(t, m, query, i + 1) for i, (_, t, m) in enumerate(columns)]
        if len(left_list) < len(right_list):
            raise AnalysisError("subquery has too many columns")
        if len(left_list) > len(right_list):
            raise AnalysisError("subquery has too few columns")
        test = self.row_comparison(operator, left_list, right_list, location)
        return SubLink(BOOL, kind, query, test=test, location=location)

    def _expr_A_Indirection(self, body: Raw, state: ParseState) -> Expr:
        result = self.expr(body.get("arg"), state)
        subscripts: list[Raw] = []
        for item in body.get("indirection", ()):
            kind, inner = unwrap(item)
            if kind == "A_Indices":
                subscripts.append(inner)
            elif kind == "A_Star":
                raise AnalysisError('row expansion via "*" is not supported here')
            else:
                if subscripts:
                    result = self.subscripts(result, subscripts, state)
                    subscripts = []
                name = str(inner.get("sval", ""))
                projected = self.function_or_column(name, result, state)
                if projected is None:
                    raise AnalysisError(self.unknown_attribute(result, name))
                result = projected
        if subscripts:
            result = self.subscripts(result, subscripts, state)
        return result

    def subscripts(self, container: Expr, indices: list[Raw], state: ParseState) -> Expr:
        """``transformContainerSubscripts``: arrays, jsonb and the fixed-length subscriptable types."""
        catalog = self.catalog
        container_type = catalog.base_type(container.type)
        typmod = container.typmod if container_type == container.type else -1
        info = catalog.type(container_type)
        handler = info.subscript if info is not None else ""
        is_slice = any(i.get("is_slice") for i in indices)
        upper: list[Expr | None] = []
        lower: list[Expr | None] = []
        if handler in ("array_subscript_handler", "raw_array_subscript_handler"):
            for index in indices:
                for bound, found in (("uidx", upper), ("lidx", lower)):
                    node = index.get(bound)
                    if node is None:
                        found.append(None)
                        continue
                    value = self.expr(node, state)
                    coerced = self.coerce_to_target(value, INT4, -1, Context.ASSIGNMENT)
                    if coerced is None:
                        raise AnalysisError("array subscript must have type integer")
                    found.append(coerced)
            element = info.element if info is not None else 0
            result_type = container_type if is_slice else element
            return Subscript(result_type, typmod, container, upper, lower, is_slice, handler)
        if handler == "jsonb_subscript_handler":
            if is_slice:
                raise AnalysisError("jsonb subscript does not support slices")
            for index in indices:
                value = self.expr(index.get("uidx"), state)
                converted = None
                if value.type != UNKNOWN:
                    for target in (INT4, TEXT):
                        if self.coercions.can_coerce((value.type,), (target,)):
                            converted = self.coerce(value, target)
                            break
                else:
                    converted = self.coerce(value, TEXT)
                if converted is None:
                    raise AnalysisError(f"subscript type {catalog.type_display(value.type)} is not supported",
                                        hint="jsonb subscript must be coercible to either integer or text.")
                upper.append(converted)
                lower.append(None)
            return Subscript(JSONB, -1, container, upper, lower, False, handler)
        if not handler:
            raise AnalysisError(f"cannot subscript type {catalog.type_display(container_type)} because it does "
                                "not support subscripting")
        raise Unsupported(f"subscripting type {catalog.type_display(container_type)} is not supported")

    def _expr_XmlExpr(self, body: Raw, state: ParseState) -> Expr:
        """``transformXmlExpr``."""
        op = body.get("op", "").removeprefix("IS_").lower()
        named = []
        for item in body.get("named_args", ()):
            target = item["ResTarget"]
            if not target.get("name") and "ColumnRef" not in target.get("val", {}):
                raise AnalysisError("unnamed XML attribute value must be a column reference" if op == "xmlelement"
                                    else "unnamed XML element value must be a column reference")
            named.append(self.expr(target.get("val"), state))
        args = []
        for position, raw in enumerate(body.get("args", ())):
            arg = self.expr(raw, state)
            if op in ("xmlconcat", "xmlforest", "document"):
                arg = self._coerce_xml(arg, XML, "IS DOCUMENT" if op == "document" else op.upper())
            elif op == "xmlparse":
                arg = self._coerce_xml(arg, TEXT, "XMLPARSE") if position == 0 else \
                    self.coerce_to_boolean(arg, "XMLPARSE")
            elif op == "xmlpi":
                arg = self._coerce_xml(arg, TEXT, "XMLPI")
            elif op == "xmlroot":
                arg = self._coerce_xml(arg, (XML, TEXT, INT4)[min(position, 2)], "XMLROOT")
            args.append(arg)
        return Xml(BOOL if op == "document" else XML, op, args, named, body.get("location", -1))

    def _coerce_xml(self, expr: Expr, target: int, construct: str) -> Expr:
        return self.coerce_to_specific(expr, target, construct)

    def _expr_XmlSerialize(self, body: Raw, state: ParseState) -> Expr:
        arg = self._coerce_xml(self.expr(body.get("expr"), state), XML, "XMLSERIALIZE")
        target, typmod = resolve_type_name(self.catalog, body["typeName"])
        if self.catalog.category(target) != "S":
            raise AnalysisError(f"cannot cast XMLSERIALIZE result to {self.catalog.type_display(target)}")
        result = Xml(target, "xmlserialize", [arg], [], body.get("location", -1))
        result.typmod = typmod
        return result

    def _expr_A_Expr(self, body: Raw, state: ParseState) -> Expr:
        return self.operator_expr(body, state)

    def _expr_FuncCall(self, body: Raw, state: ParseState) -> Expr:
        return self.function_call(body, state)


def type_cast_name(body: Raw) -> str:
    """The last part of a TypeCast's type name (``FigureColname`` names ``'x'::text`` "text")."""
    parts = type_name_parts(body.get("typeName", {}))
    return parts[-1] if parts else "?column?"
