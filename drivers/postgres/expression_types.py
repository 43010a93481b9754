"""The types an expression of the raw parse tree could have, as far as the guard can tell.

``ExpressionTypes.of(expression)`` answers a ``TypeSet`` (``query_policy.py``):
a cast has its type, a literal its literal type (an untyped string or NULL is
``UNKNOWN``), a call the results of the overloads PostgreSQL could pick, an
operator expression the results of its possible implementations. A column
is ``ANY``: the guard does not know column types. Anything it does not model
is ``ANY`` too, so the answer is always a superset of what PostgreSQL will
decide. The walk has no recursion (an expression can nest a thousand
levels deep) and remembers each node's answer.
"""

from __future__ import annotations

import re

from drivers.postgres.query_policy import QueryPolicy
from drivers.postgres.type_matching import ANY, ANY_TYPE, UNKNOWN, UNKNOWN_TEXT, TypeSet
from drivers.postgres.sql_names import builtin_name_of

# The text forms of path and polygon: numbers separated by commas, in any
# brackets. A literal of another shape ('{"k": 1}', '2024-01-01') makes
# PostgreSQL's input function fail before anything runs, so it never reaches
# a polygon or path implementation.
_NUMBER = (
    r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?"
    r"|0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?\d+)?"  # strtod reads hexadecimal too
    r"|inf|infinity|nan)\s*"
)
_POINTS_TEXT = re.compile(rf"{_NUMBER}(?:,{_NUMBER})*", re.IGNORECASE)
_BRACKETS = str.maketrans("", "", "()[]")

_BOOLEAN_NODES = frozenset({"BoolExpr", "NullTest", "BooleanTest"})
_BOOLEAN_EXPRESSIONS = frozenset({
    "AEXPR_OP_ANY", "AEXPR_OP_ALL", "AEXPR_DISTINCT", "AEXPR_NOT_DISTINCT", "AEXPR_IN", "AEXPR_LIKE",
    "AEXPR_ILIKE", "AEXPR_SIMILAR", "AEXPR_BETWEEN", "AEXPR_NOT_BETWEEN", "AEXPR_BETWEEN_SYM",
    "AEXPR_NOT_BETWEEN_SYM",
})
_VALUE_FUNCTION_TYPES = {
    "SVFOP_CURRENT_DATE": "date", "SVFOP_CURRENT_TIME": "timetz", "SVFOP_CURRENT_TIME_N": "timetz",
    "SVFOP_CURRENT_TIMESTAMP": "timestamptz", "SVFOP_CURRENT_TIMESTAMP_N": "timestamptz",
    "SVFOP_LOCALTIME": "time", "SVFOP_LOCALTIME_N": "time", "SVFOP_LOCALTIMESTAMP": "timestamp",
    "SVFOP_LOCALTIMESTAMP_N": "timestamp",
}


def unwrap(expression: dict) -> tuple[str, dict]:
    """``{"Kind": {...}}`` -> ``("Kind", {...})``."""
    ((kind, node),) = expression.items()
    return kind, node


def literal_types(constant: dict) -> TypeSet:
    """The possible types of an ``A_Const`` node."""
    if "sval" in constant:
        text = constant["sval"].get("sval", "")
        return frozenset({UNKNOWN if _POINTS_TEXT.fullmatch(text.translate(_BRACKETS)) else UNKNOWN_TEXT})
    if "ival" in constant:
        return frozenset({_INT4})
    if "fval" in constant:
        return frozenset({_INT8, _NUMERIC})
    if "boolval" in constant:
        return frozenset({_BOOL})
    if "bsval" in constant:
        return frozenset({_BIT})
    return frozenset({UNKNOWN})  # NULL


# Built-in type OIDs are fixed by initdb; these never change between releases.
_BOOL, _INT8, _INT4, _NUMERIC, _BIT, _RECORD = 16, 20, 23, 1700, 1560, 2249


def operands(node: dict) -> list[dict]:
    """The operand expressions of an ``A_Expr`` (a BETWEEN or IN list counts each item)."""
    found = [node["lexpr"]] if "lexpr" in node else []
    right = node.get("rexpr")
    if isinstance(right, dict) and "List" in right:
        found.extend(right["List"].get("items", ()))
    elif isinstance(right, list):
        found.extend(right)
    elif right is not None:
        found.append(right)
    return found


def first_target(sublink: dict) -> dict | None:
    """The first select-list expression of a sub-select, when it is a plain SELECT."""
    kind, select = unwrap(sublink["subselect"])
    targets = select.get("targetList", ()) if kind == "SelectStmt" else ()
    if not targets or select.get("op", "SETOP_NONE") != "SETOP_NONE":
        return None
    value = targets[0].get("ResTarget", {}).get("val")
    if value is None or "A_Star" in value.get("ColumnRef", {}).get("fields", [{}])[-1]:
        return None  # SELECT * names no one column
    return value


def call_arguments(node: dict) -> list[dict]:
    """A FuncCall's arguments in order, WITHIN GROUP ordering expressions included."""
    arguments = list(node.get("args", ()))
    if node.get("agg_within_group"):
        arguments.extend(item["SortBy"]["node"] for item in node.get("agg_order", ()))
    return arguments


class ExpressionTypes:
    """Possible types of expressions of one parse tree, remembered per node."""

    def __init__(self, policy: QueryPolicy, row_names: frozenset[str] = frozenset()) -> None:
        self.policy = policy
        self.row_names = row_names
        """Names of FROM items that are no table (sub-selects, CTEs, functions): ``f(name)`` may be a column."""
        self._known: dict[int, TypeSet] = {}
        self._overloads: dict[int, tuple | None] = {}

    def of(self, expression: dict) -> TypeSet:
        """The possible types of ``expression`` (a ``{"Kind": {...}}`` node)."""
        known = self._known.get(id(expression))
        if known is not None:
            return known
        stack: list[tuple[dict, bool]] = [(expression, False)]
        while stack:
            current, children_done = stack.pop()
            if id(current) in self._known:
                continue
            children = self._children(*unwrap(current))
            if children_done or not children:
                self._known[id(current)] = self._compute(*unwrap(current))
            else:
                stack.append((current, True))
                stack.extend((child, False) for child in children if id(child) not in self._known)
        return self._known[id(expression)]

    def _children(self, kind: str, node: dict) -> list[dict]:
        if kind == "A_Expr":
            return operands(node)
        if kind == "FuncCall":
            return [unwrap(a)[1]["arg"] if "NamedArgExpr" in a else a for a in call_arguments(node)]
        if kind == "CaseExpr":
            return [w["CaseWhen"]["result"] for w in node.get("args", ())] + (
                [node["defresult"]] if "defresult" in node else [])
        if kind in ("CoalesceExpr", "MinMaxExpr", "A_ArrayExpr"):
            return list(node.get("args" if kind != "A_ArrayExpr" else "elements", ()))
        if kind in ("NamedArgExpr", "CollateClause") and "arg" in node:
            return [node["arg"]]
        if kind == "SubLink" and node.get("subLinkType") in ("EXPR_SUBLINK", "ARRAY_SUBLINK"):
            target = first_target(node)
            return [target] if target is not None else []
        return []

    def _compute(self, kind: str, node: dict) -> TypeSet:
        policy = self.policy
        if kind == "A_Const":
            return literal_types(node)
        if kind == "TypeCast":
            return self.cast_type(node["typeName"])
        if kind == "A_Expr":
            return self._operator_expression(node)
        if kind == "FuncCall":
            if self.maybe_column(node):
                return ANY_TYPE
            overloads = self.possible_overloads(node)
            return ANY_TYPE if overloads is None else policy.result_types(o.result for o in overloads)
        if kind in _BOOLEAN_NODES:
            return frozenset({_BOOL})
        if kind in ("CaseExpr", "CoalesceExpr", "MinMaxExpr", "NamedArgExpr", "CollateClause"):
            return self._union(self._children(kind, node))
        if kind == "A_ArrayExpr":
            return self._arrays_of(self._union(self._children(kind, node)))
        if kind == "RowExpr":
            return frozenset({_RECORD})
        if kind == "SubLink":
            link = node.get("subLinkType")
            if link not in ("EXPR_SUBLINK", "ARRAY_SUBLINK"):
                return frozenset({_BOOL})
            children = self._children(kind, node)
            found = self._union(children) if children else ANY_TYPE
            return self._arrays_of(found) if link == "ARRAY_SUBLINK" else found
        if kind == "SQLValueFunction":
            oid = policy.catalog.type_oids.get(_VALUE_FUNCTION_TYPES.get(node.get("op", ""), ""))
            return frozenset({oid}) if oid else ANY_TYPE
        if kind == "GroupingFunc":
            return frozenset({_INT4})
        return ANY_TYPE

    def cast_type(self, type_name: dict) -> TypeSet:
        """The type a TypeName names, when the query may name it (else ANY: refused elsewhere)."""
        name = builtin_name_of(type_name.get("names", ()))
        oid = self.policy.nameable_type(name, len(type_name.get("arrayBounds", ()))) if name else None
        return frozenset({oid}) if oid is not None else ANY_TYPE

    def _union(self, expressions: list[dict]) -> TypeSet:
        found: set[int] = set()
        for expression in expressions:
            types = self.of(expression)
            if ANY in types:
                return ANY_TYPE
            found |= types
        return frozenset(found) or ANY_TYPE

    def _arrays_of(self, elements: TypeSet) -> TypeSet:
        types = self.policy.catalog.types
        concrete = {oid for oid in elements if oid >= 0}
        if ANY in elements or not elements:
            return ANY_TYPE
        if not concrete:  # ARRAY['a', 'b']: PostgreSQL reads untyped elements as text
            concrete = {self.policy.catalog.type_oids.get("text", 25)}
        arrays = {types[oid].array if oid in types and not types[oid].is_array else oid for oid in concrete}
        return ANY_TYPE if 0 in arrays else frozenset(arrays)

    def _operator_expression(self, node: dict) -> TypeSet:
        kind = node.get("kind", "AEXPR_OP")
        if kind in _BOOLEAN_EXPRESSIONS:
            return frozenset({_BOOL})
        found = operands(node)
        if kind == "AEXPR_NULLIF":
            return self.of(found[0]) if found else ANY_TYPE
        name = builtin_name_of(node.get("name", ()))
        if name is None:
            return ANY_TYPE
        if len(found) == 2 and all("RowExpr" in operand for operand in found):
            return frozenset({_BOOL})  # a row comparison; one ROW(...) operand is a record (ROW(x) || 'y' is text)
        implementations = self.policy.possible_operators(name, tuple(self.of(o) for o in found))
        return self.policy.result_types(op.result for op in implementations)

    def maybe_column(self, node: dict) -> bool:
        """True for ``f(x)`` where x may be the row of a sub-select, CTE or function: then it may be column x.f."""
        arguments = node.get("args", ())
        if len(arguments) != 1 or set(node) - {"funcname", "args", "funcformat", "location"}:
            return False
        fields = arguments[0].get("ColumnRef", {}).get("fields", ())
        return len(fields) == 1 and fields[0].get("String", {}).get("sval") in self.row_names

    def possible_overloads(self, node: dict) -> tuple | None:
        """The overloads a FuncCall node could run, or None when it names no pg_catalog function."""
        if id(node) in self._overloads:
            return self._overloads[id(node)]
        name = builtin_name_of(node.get("funcname", ()))
        found = None
        if name is not None:
            arguments = call_arguments(node)
            named = any("NamedArgExpr" in argument for argument in arguments)
            types = tuple(self.of(unwrap(a)[1]["arg"] if "NamedArgExpr" in a else a) for a in arguments)
            found = self.policy.possible_overloads(
                name, types, variadic_call=bool(node.get("func_variadic")), named=named
            )
        self._overloads[id(node)] = found
        return found
