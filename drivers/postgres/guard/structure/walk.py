"""The first pass over a SELECT's raw parse tree: its shape, and the names it may use.

``SelectTreeWalker`` visits every node of pglast's JSON parse tree without
recursion, before any name is looked up. Node kinds known to be harmless
inside a SELECT pass (an allowlist); kinds that name something PostgreSQL
resolves (relations, functions, types, operators, collations) are checked by
a ``_check_<Kind>`` method: relations must be schema-qualified (or a CTE in
scope), everything else built in (schema ``pg_catalog``); anything else is
refused with a sentence naming it. On the way it collects every relation
read, so that the grant check runs before the type model (``analysis.py``)
looks at any column: a refusal never tells what an ungranted table holds.
"""

from __future__ import annotations

import attrs

from drivers.postgres.guard.refusal_reasons import PostgresRefusal
from drivers.postgres.guard.rules.type_rules import CATALOG_LOOKUP_TYPES
from drivers.postgres.guard.structure.names import builtin_name, display_name, friendly_node_name, identifiers
from drivers.postgres.guard.structure.node_kinds import DATA_MODIFYING, SAFE_NODE_TYPES, typed_field_node
from gateway.errors import QueryRejected, RefusalReason

__all__ = ["SelectTreeWalker", "display_name", "friendly_node_name"]


# CURRENT_DATE and friends are plain clock readings; CURRENT_USER, SESSION_USER,
# USER, CURRENT_ROLE name the gateway's database account (which the contract
# never shows a token holder) and CURRENT_CATALOG/CURRENT_SCHEMA name server
# settings, so those are refused.
_ALLOWED_VALUE_FUNCTIONS = frozenset({
    "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP",
})

# XML that PostgreSQL would parse with libxml2, which never checks for
# interrupts: XMLTABLE, XMLPARSE, IS DOCUMENT, XMLSERIALIZE(DOCUMENT ...).
# Building XML (xmlelement, xmlforest, xmlconcat, xmlpi, xmlroot, xmlagg) parses nothing.
_XML_PARSING = "it parses XML with libxml2, which PostgreSQL cannot interrupt"
_PARSING_XML_EXPRESSIONS = {"IS_XMLPARSE": "XMLPARSE", "IS_DOCUMENT": "IS DOCUMENT"}

_LOCK_STRENGTHS = {
    "LCS_FORKEYSHARE": "FOR KEY SHARE", "LCS_FORSHARE": "FOR SHARE",
    "LCS_FORNOKEYUPDATE": "FOR NO KEY UPDATE", "LCS_FORUPDATE": "FOR UPDATE",
}

Checked = tuple[tuple[str, ...], frozenset[str]]
"""What a node check returns: fields it handled itself, and the CTE names its children see."""
_Checked = Checked

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
        self.type_names: list[dict] = []
        """Every TypeName node (casts, typed literals, column definitions)."""
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
        if check is None and node_type not in SAFE_NODE_TYPES:
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
                node_type, node = typed_field_node(parent, field), value
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
            if query_type in DATA_MODIFYING:
                raise QueryRejected(
                    "data-modifying statement in WITH is not allowed",
                    reason=RefusalReason.STATEMENT,
                )
            # Without RECURSIVE a CTE sees only earlier siblings: a reference to
            # itself or a later one would fall through to a real table.
            # A CTE body sees the levels around its WITH, not that level's FROM items.
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

    def _check_RangeTableFunc(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        raise QueryRejected(f"XMLTABLE is not allowed: {_XML_PARSING}", reason=RefusalReason.FUNCTION)

    def _check_XmlExpr(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        construct = _PARSING_XML_EXPRESSIONS.get(node.get("op", ""))
        if construct:
            raise QueryRejected(f"{construct} is not allowed: {_XML_PARSING}", reason=RefusalReason.FUNCTION)
        return (), ctes_in_scope

    def _check_XmlSerialize(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        if node.get("xmloption") == "XMLOPTION_DOCUMENT":
            raise QueryRejected(
                f"XMLSERIALIZE(DOCUMENT ...) is not allowed: {_XML_PARSING}; write x::text",
                reason=RefusalReason.FUNCTION,
            )
        return (), ctes_in_scope

    def _check_FuncCall(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        names = identifiers(node["funcname"])
        name = builtin_name(names)
        if name is None:
            raise QueryRejected(
                f"function {display_name(*names)} is not allowed: "
                "only built-in functions (schema pg_catalog) may be called",
                reason=RefusalReason.FUNCTION,
            )
        self.functions.add(name)
        return ("funcname",), ctes_in_scope

    def _builtin_operator(self, names: list[str]) -> str:
        name = builtin_name(names)
        if name is None:
            raise QueryRejected(
                f'operator "{".".join(names)}" is not allowed: '
                "only built-in operators (schema pg_catalog) may be used",
                reason=PostgresRefusal.OPERATOR,
            )
        return name

    def _check_A_Expr(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        self._builtin_operator(identifiers(node.get("name", ())) or ["="])
        return ("name",), ctes_in_scope

    def _check_SubLink(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        if "operName" in node:
            self._builtin_operator(identifiers(node["operName"]))
        return ("operName",), ctes_in_scope

    def _check_SortBy(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        if "useOp" in node:
            self._builtin_operator(identifiers(node["useOp"]))
        return ("useOp",), ctes_in_scope

    def _check_TypeName(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        names = identifiers(node.get("names", ()))
        name = builtin_name(names) if names and not node.get("pct_type") else None
        if name is None:
            raise QueryRejected(
                f"type {display_name(*names or ['?'])} is not allowed: "
                "only built-in types (schema pg_catalog) may be used",
                reason=PostgresRefusal.TYPE,
            )
        if name.lstrip("_") in CATALOG_LOOKUP_TYPES:
            raise QueryRejected(
                f"type {display_name(name)} is not allowed: it looks up catalog objects",
                reason=PostgresRefusal.TYPE,
            )
        for modifier in node.get("typmods", ()):
            if "ival" not in modifier.get("A_Const", {}):
                # bit('80000000'), numeric(a): PostgreSQL hands text to the type's modifier parser.
                raise QueryRejected(
                    f"type modifier of {display_name(name)} is not allowed: write it as an integer, "
                    f"as in {name}(10)",
                    reason=PostgresRefusal.TYPE,
                )
        self.type_names.append(node)
        return ("names", "typmods"), ctes_in_scope

    def _check_ColumnRef(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        fields = node.get("fields", ())
        if len(fields) >= 4:
            # db.schema.table.column (or .*): the database's own error would compare the name with its own.
            raise QueryRejected(
                f"column reference {'.'.join(f.get('String', {}).get('sval', '*') for f in fields)} names a "
                "database: cross-database references are not allowed, write table.column or schema.table.column",
                reason=RefusalReason.CROSS_DATABASE,
            )
        return (), ctes_in_scope

    def _check_CollateClause(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        names = identifiers(node.get("collname", ()))
        if builtin_name(names) is None:
            raise QueryRejected(
                f"collation {display_name(*names)} is not allowed: "
                "only built-in collations (schema pg_catalog) may be used",
                reason=PostgresRefusal.COLLATION,
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

    def _check_ParamRef(self, node: dict, ctes_in_scope: frozenset[str]) -> _Checked:
        # $n: a value sent beside the text (issue 23), typed and sized by the analysis; nothing to walk.
        return (), ctes_in_scope
