"""Which parse-tree node kinds a SELECT may hold, and how pglast's JSON names a field's node kind."""

from __future__ import annotations

import functools
import inspect

import pglast.ast

# Node kinds that carry no name PostgreSQL would resolve and no side effect;
# their children are still walked. Kinds with names are checked by a method
# of SelectTreeWalker; anything in neither list is refused.
SAFE_NODE_TYPES = frozenset({
    "ResTarget", "A_Star", "A_Indirection", "String", "Integer", "Float", "Boolean", "BitString", "List",
    "Alias", "RangeSubselect", "RangeFunction", "JoinExpr", "BoolExpr", "NullTest",
    "BooleanTest", "CaseExpr", "CaseWhen", "CoalesceExpr", "MinMaxExpr", "RowExpr",
    "A_ArrayExpr", "A_Indices", "NamedArgExpr", "TypeCast", "WindowDef", "GroupingSet",
    "GroupingFunc", "CTESearchClause", "CTECycleClause", "ColumnDef",
    "JsonFormat", "JsonValueExpr", "JsonOutput", "JsonReturning", "JsonBehavior",
    "JsonFuncExpr", "JsonTable", "JsonTableColumn", "JsonTablePathSpec", "JsonArgument",
    "JsonKeyValue", "JsonObjectConstructor", "JsonArrayConstructor",
    "JsonArrayQueryConstructor", "JsonAggConstructor", "JsonObjectAgg", "JsonArrayAgg",
    "JsonIsPredicate", "JsonParseExpr", "JsonScalarExpr", "JsonSerializeExpr",
})

DATA_MODIFYING = frozenset({"InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"})


@functools.cache
def typed_field_node(parent: str, field: str) -> str | None:
    """The node kind of a field declared with a specific type (the JSON omits its wrapper)."""
    node_class = getattr(pglast.ast, parent, None)
    slots = getattr(node_class, "__slots__", None)
    if not isinstance(slots, dict) or field not in slots:
        return None
    c_type = slots[field].c_type
    target = c_type.removesuffix("*")
    if c_type == target or target in {"Node", "List", "Expr", "char"}:
        return None
    target_class = getattr(pglast.ast, target, None)
    return target if inspect.isclass(target_class) else None
