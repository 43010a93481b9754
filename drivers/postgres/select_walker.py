"""The walk over a SELECT's raw parse tree that the SQL guard relies on.

``SelectTreeWalker`` visits every node of pglast's JSON parse tree without
recursion. Node kinds known to be harmless inside a SELECT pass (an
allowlist); kinds that name something PostgreSQL resolves (relations,
functions, types, operators, collations) are checked by a ``_check_<Kind>``
method; anything else is refused with a sentence naming it. On the way it
collects every relation read and every function called, for
``drivers.postgres.sql_guard.check_query`` to compare with the grants.
"""

from __future__ import annotations

import functools
import inspect
import re

import attrs
import pglast.ast

from gateway.errors import QueryRejected, RefusalReason

_CATALOG = "pg_catalog"

# Node kinds that carry no name PostgreSQL would resolve and no side effect;
# their children are still walked. Kinds with names are checked by a method
# of _TreeWalker; anything in neither list is refused.
_SAFE_NODE_TYPES = frozenset({
    "ResTarget", "A_Star", "String", "Integer", "Float", "Boolean", "BitString", "List",
    "Alias", "RangeSubselect", "RangeFunction", "JoinExpr", "BoolExpr", "NullTest",
    "BooleanTest", "CaseExpr", "CaseWhen", "CoalesceExpr", "MinMaxExpr", "RowExpr",
    "A_ArrayExpr", "A_Indices", "NamedArgExpr", "TypeCast", "WindowDef", "GroupingSet",
    "GroupingFunc", "CTESearchClause", "CTECycleClause", "XmlExpr", "XmlSerialize",
    "RangeTableFunc", "RangeTableFuncCol", "ColumnDef",
    "JsonFormat", "JsonValueExpr", "JsonOutput", "JsonReturning", "JsonBehavior",
    "JsonFuncExpr", "JsonTable", "JsonTableColumn", "JsonTablePathSpec", "JsonArgument",
    "JsonKeyValue", "JsonObjectConstructor", "JsonArrayConstructor",
    "JsonArrayQueryConstructor", "JsonAggConstructor", "JsonObjectAgg", "JsonArrayAgg",
    "JsonIsPredicate", "JsonParseExpr", "JsonScalarExpr", "JsonSerializeExpr",
})

_DATA_MODIFYING = frozenset({"InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"})

_FRIENDLY_NAMES = {
    "InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE",
    "VariableSetStmt": "SET", "VariableShowStmt": "SHOW", "TransactionStmt": "transaction control",
    "DeclareCursorStmt": "DECLARE CURSOR", "SetToDefault": "DEFAULT",
    "CurrentOfExpr": "WHERE CURRENT OF", "MergeSupportFunc": "MERGE_ACTION()",
    "RangeTableSample": "TABLESAMPLE", "IntoClause": "SELECT ... INTO",
    "LockingClause": "a locking clause", "WithClause": "WITH here",
}

# Casts to these types look catalog objects up by name (reg*) or resolve role
# names (aclitem): a catalog read the grants cannot see.
_CATALOG_LOOKUP_TYPES = frozenset({
    "regclass", "regcollation", "regconfig", "regdictionary", "regnamespace", "regoper",
    "regoperator", "regproc", "regprocedure", "regrole", "regtype", "aclitem",
})

# CURRENT_DATE and friends are plain clock readings; CURRENT_USER, SESSION_USER,
# USER, CURRENT_ROLE name the gateway's database account (which the contract
# never shows a token holder) and CURRENT_CATALOG/CURRENT_SCHEMA name server
# settings, so those are refused.
_ALLOWED_VALUE_FUNCTIONS = frozenset({
    "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP",
})

_LOCK_STRENGTHS = {
    "LCS_FORKEYSHARE": "FOR KEY SHARE", "LCS_FORSHARE": "FOR SHARE",
    "LCS_FORNOKEYUPDATE": "FOR NO KEY UPDATE", "LCS_FORUPDATE": "FOR UPDATE",
}

_Checked = tuple[tuple[str, ...], frozenset[str]]
"""What a node check returns: fields it handled itself, and the CTE names its children see."""

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


@functools.cache
def _typed_field_node(parent: str, field: str) -> str | None:
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


def _names(items: list[dict]) -> list[str]:
    """The identifiers of a name list; anything but plain strings there is refused."""
    if not all("String" in item for item in items):
        raise QueryRejected(
            "a name made of something other than identifiers is not allowed",
            reason=RefusalReason.CONSTRUCT,
        )
    return [item["String"]["sval"] for item in items]


def _builtin_name(names: list[str]) -> str | None:
    """The bare name when ``names`` is unqualified or qualified with pg_catalog, else None."""
    if len(names) == 1:
        return names[0]
    if len(names) == 2 and names[0] == _CATALOG:
        return names[1]
    return None


@attrs.frozen
class RangeVarSite:
    """One schema-qualified relation reference, where the query text names it (see ``inheritance.py``)."""

    location: int
    """Byte offset of the reference's first token in the UTF-8 text, as the parser reports it."""
    inherited: bool
    """True when PostgreSQL reads it with its inheritance children (written without ONLY)."""
    schema: str
    """The schema, as PostgreSQL resolves it."""
    name: str
    """The relation's name, as PostgreSQL resolves it."""


class SelectTreeWalker:
    """Walks one raw parse tree without recursion, collecting names and refusing the unknown."""

    def __init__(self) -> None:
        self.relations: set[tuple[str, str]] = set()
        self.range_vars: list[RangeVarSite] = []
        self.functions: set[str] = set()
        self.attribute_names: set[str] = set()
        self._stack: list[tuple[str, dict, frozenset[str]]] = []

    def walk_select(self, body: dict) -> None:
        self._stack.append(("SelectStmt", body, frozenset()))
        while self._stack:
            node_type, node, ctes_in_scope = self._stack.pop()
            self._visit(node_type, node, ctes_in_scope)

    def _visit(self, node_type: str, node: dict, ctes_in_scope: frozenset[str]) -> None:
        if node_type == "A_Const":
            return  # a literal; its value union has no names
        check = getattr(self, "_check_" + node_type, None)
        if check is None and node_type not in _SAFE_NODE_TYPES:
            raise QueryRejected(
                f"{friendly_node_name(node_type)} is not allowed in a GetData query",
                reason=RefusalReason.CONSTRUCT,
            )
        handled, ctes_in_scope = check(node, ctes_in_scope) if check else ((), ctes_in_scope)
        for field, value in node.items():
            if field not in handled:
                self._push_children(node_type, field, value, ctes_in_scope)

    def _push_children(self, parent: str, field: str, value: object, ctes_in_scope: frozenset[str]) -> None:
        if isinstance(value, list):
            for item in value:
                self._push_children(parent, field, item, ctes_in_scope)
        elif isinstance(value, dict) and value:
            if len(value) == 1 and next(iter(value))[0].isupper():
                ((node_type, node),) = value.items()
            else:
                node_type, node = _typed_field_node(parent, field), value
                if node_type is None:
                    raise QueryRejected(
                        f"the construct at {parent}.{field} is not supported",
                        reason=RefusalReason.CONSTRUCT,
                    )
            self._stack.append((node_type, node, ctes_in_scope))

    def _check_SelectStmt(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        if "intoClause" in node:
            raise QueryRejected(
                "SELECT ... INTO is not allowed: it creates a table",
                reason=RefusalReason.STATEMENT,
            )
        for clause in node.get("lockingClause", ()):
            strength = _LOCK_STRENGTHS.get(clause["LockingClause"].get("strength"), "FOR UPDATE")
            raise QueryRejected(f"locking clause {strength} is not allowed", reason=RefusalReason.STATEMENT)
        with_clause = node.get("withClause")
        if with_clause:
            ctes_in_scope = self._enter_with(with_clause, ctes_in_scope)
        return ("withClause",), ctes_in_scope

    def _enter_with(self, with_clause: dict, outer: frozenset[str]) -> frozenset[str]:
        """Push each CTE's query with the names it may see; return the names the body sees."""
        ctes = [item["CommonTableExpr"] for item in with_clause.get("ctes", ())]
        names = [cte["ctename"] for cte in ctes]
        recursive = bool(with_clause.get("recursive"))
        for position, cte in enumerate(ctes):
            ((query_type, query),) = cte["ctequery"].items()
            if query_type in _DATA_MODIFYING:
                raise QueryRejected(
                    "data-modifying statement in WITH is not allowed",
                    reason=RefusalReason.STATEMENT,
                )
            # Without RECURSIVE a CTE sees only earlier siblings: a reference to
            # itself or a later one would fall through to a real table.
            visible = names if recursive else names[:position]
            self._stack.append((query_type, query, outer | frozenset(visible)))
            for field, value in cte.items():
                if field != "ctequery":
                    self._push_children("CommonTableExpr", field, value, outer)
        return outer | frozenset(names)

    def _check_RangeVar(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        schema, relation = node.get("schemaname"), node["relname"]
        if "catalogname" in node:
            raise QueryRejected(
                f"table {display_name(node['catalogname'], schema or '', relation)} names a database: "
                "cross-database references are not allowed, write schema.table",
                reason=RefusalReason.CROSS_DATABASE,
            )
        if schema is None:
            if relation in ctes_in_scope:
                return (), ctes_in_scope
            if "." in relation:  # "sales.orders" in double quotes is one identifier, not schema.table
                schema_part, _, table_part = relation.partition(".")
                hint = (
                    f"a quoted name is one identifier; for table {table_part} of schema {schema_part} "
                    f"write {schema_part}.{table_part}"
                )
            else:
                hint = f"write it with its schema, as in {display_name('public', relation)}"
            raise QueryRejected(
                f"table {display_name(relation)} is not schema-qualified: {hint}",
                reason=RefusalReason.NOT_QUALIFIED,
            )
        self.relations.add((schema, relation))
        self.range_vars.append(RangeVarSite(node.get("location", -1), bool(node.get("inh")), schema, relation))
        return (), ctes_in_scope

    def _check_FuncCall(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        names = _names(node["funcname"])
        name = _builtin_name(names)
        if name is None:
            raise QueryRejected(
                f"function {display_name(*names)} is not allowed: "
                "only built-in functions (schema pg_catalog) may be called",
                reason=RefusalReason.FUNCTION,
            )
        self.functions.add(name)
        return ("funcname",), ctes_in_scope

    def _check_TypeName(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        names = _names(node.get("names", ()))
        name = _builtin_name(names) if names and not node.get("pct_type") else None
        if name is None:
            raise QueryRejected(
                f"type {display_name(*names or ['?'])} is not allowed: "
                "only built-in types (schema pg_catalog) may be used",
                reason=RefusalReason.TYPE,
            )
        if name.lstrip("_") in _CATALOG_LOOKUP_TYPES:
            raise QueryRejected(
                f"type {display_name(name)} is not allowed: it looks up catalog objects",
                reason=RefusalReason.TYPE,
            )
        return ("names",), ctes_in_scope

    def _refuse_foreign_operator(self, names: list[str]) -> None:
        if _builtin_name(names) is None:
            raise QueryRejected(
                f'operator "{".".join(names)}" is not allowed: '
                "only built-in operators (schema pg_catalog) may be used",
                reason=RefusalReason.OPERATOR,
            )

    def _check_A_Expr(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        self._refuse_foreign_operator(_names(node.get("name", ())) or ["="])
        return ("name",), ctes_in_scope

    def _check_SubLink(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        if "operName" in node:
            self._refuse_foreign_operator(_names(node["operName"]))
        return ("operName",), ctes_in_scope

    def _check_SortBy(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        if "useOp" in node:
            self._refuse_foreign_operator(_names(node["useOp"]))
        return ("useOp",), ctes_in_scope

    def _check_CollateClause(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        names = _names(node.get("collname", ()))
        if _builtin_name(names) is None:
            raise QueryRejected(
                f"collation {display_name(*names)} is not allowed: "
                "only built-in collations (schema pg_catalog) may be used",
                reason=RefusalReason.COLLATION,
            )
        return ("collname",), ctes_in_scope

    def _check_SQLValueFunction(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        name = node.get("op", "").removeprefix("SVFOP_").removesuffix("_N")
        if name not in _ALLOWED_VALUE_FUNCTIONS:
            raise QueryRejected(
                f"{name} is not allowed: it reveals the database account or server settings",
                reason=RefusalReason.FUNCTION,
            )
        return (), ctes_in_scope

    def _note_attribute(self, name: str) -> None:
        if name.lstrip("_") in _CATALOG_LOOKUP_TYPES:
            raise QueryRejected(
                f"type {display_name(name)} is not allowed: it looks up catalog objects",
                reason=RefusalReason.TYPE,
            )
        self.attribute_names.add(name)

    def _check_ColumnRef(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        fields = node.get("fields", ())
        if len(fields) >= 2 and "String" in fields[-1]:
            self._note_attribute(fields[-1]["String"]["sval"])
        return (), ctes_in_scope

    def _check_A_Indirection(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        for item in node.get("indirection", ()):
            if "String" in item:
                self._note_attribute(item["String"]["sval"])
        return (), ctes_in_scope

    def _check_ParamRef(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        raise QueryRejected(
            f"$1 parameters are not supported: write the value of ${node.get('number', '?')} into the query",
            reason=RefusalReason.CONSTRUCT,
        )
