"""How the SQL guard reads names from the parse tree and writes them into its messages."""

from __future__ import annotations

import re

from gateway.errors import QueryRejected, RefusalReason

_CATALOG = "pg_catalog"

_FRIENDLY_NAMES = {
    "InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE",
    "VariableSetStmt": "SET", "VariableShowStmt": "SHOW", "TransactionStmt": "transaction control",
    "DeclareCursorStmt": "DECLARE CURSOR", "SetToDefault": "DEFAULT",
    "CurrentOfExpr": "WHERE CURRENT OF", "MergeSupportFunc": "MERGE_ACTION()",
    "RangeTableSample": "TABLESAMPLE", "IntoClause": "SELECT ... INTO",
    "LockingClause": "a locking clause", "WithClause": "WITH here",
}

_SIMPLE_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_$]*")
_CAMEL_WORD = re.compile(r"[A-Z][a-z]*")


def display_name(*parts: str) -> str:
    """Render a (qualified) name for a message: ``"sales.orders"`` or ``"Sales"."Order Lines"``."""
    if all(_SIMPLE_IDENTIFIER.fullmatch(part) for part in parts):
        return '"' + ".".join(parts) + '"'
    return ".".join('"' + part.replace('"', '""') + '"' for part in parts)


def friendly_node_name(node_type: str) -> str:
    """How a refusal names a node kind: ``INSERT``, ``SELECT ... INTO``, ``CREATE TABLE``."""
    if node_type in _FRIENDLY_NAMES:
        return _FRIENDLY_NAMES[node_type]
    return " ".join(_CAMEL_WORD.findall(node_type.removesuffix("Stmt"))).upper() or node_type


def identifiers(items: list[dict]) -> list[str]:
    """The identifiers of a name list; anything but plain strings there is refused."""
    if not all("String" in item for item in items):
        raise QueryRejected(
            "a name made of something other than identifiers is not allowed",
            reason=RefusalReason.CONSTRUCT,
        )
    return [item["String"]["sval"] for item in items]


def builtin_name(names: list[str]) -> str | None:
    """The bare name when ``names`` is unqualified or qualified with pg_catalog, else None."""
    if len(names) == 1:
        return names[0]
    if len(names) == 2 and names[0] == _CATALOG:
        return names[1]
    return None


def builtin_name_of(items: list[dict]) -> str | None:
    """``builtin_name`` of a raw name list; None when it holds anything but identifiers."""
    if not all("String" in item for item in items):
        return None
    return builtin_name([item["String"]["sval"] for item in items])
