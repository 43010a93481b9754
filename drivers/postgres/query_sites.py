"""What the parse-tree walk records for the catalog checks: scopes, operator uses, FROM items.

``select_walker.py`` walks the tree once, without the catalog; it records
here everything ``query_checks.py`` then decides against a database's
``QueryPolicy``:

- ``Scope``: for each SELECT level, whether every FROM item a column
  reference there could resolve to is a table of the database (not a
  sub-select, CTE, VALUES list or function in FROM). PostgreSQL resolves an
  unqualified column at its own level first, then at each enclosing level a
  sub-select can see: a sub-select in FROM (without LATERAL) and a CTE body
  cannot see their own level's FROM items, only the levels around it.
- ``OperatorSite``: every place an operator is applied, spelled or implied
  (``LIKE`` is ``~~``, ``IN`` and ``NULLIF`` are ``=``, ``BETWEEN`` is ``>=`` and
  ``<=``, a ``CASE x WHEN`` and ``JOIN ... USING`` compare with ``=``,
  ``ORDER BY x USING <``, ``x = ANY (...)``, row comparisons pairwise).
"""

from __future__ import annotations

import attrs

from gateway.errors import QueryRejected, RefusalReason

_BETWEEN_OPERATORS = {
    "AEXPR_BETWEEN": ("<=", ">="), "AEXPR_BETWEEN_SYM": ("<=", ">="),
    "AEXPR_NOT_BETWEEN": ("<", ">"), "AEXPR_NOT_BETWEEN_SYM": ("<", ">"),
}
_EQUALITY_KINDS = frozenset({"AEXPR_DISTINCT", "AEXPR_NOT_DISTINCT", "AEXPR_NULLIF"})


@attrs.frozen
class Scope:
    """One SELECT level as a column reference in it sees the FROM items."""

    parent: Scope | None
    """The enclosing level whose FROM items a reference here can also resolve to, if any."""
    only_tables: bool
    """True when every FROM item here and at every enclosing visible level is a table of the database."""

    @classmethod
    def enclosed_by(cls, parent: Scope | None, tables_only_here: bool) -> Scope:
        return cls(parent, tables_only_here and (parent is None or parent.only_tables))


@attrs.frozen
class OperatorSite:
    """One application of an operator (``name``) to its operands."""

    name: str
    """The operator's name as the query spells or implies it: ``=``, ``~~``, ``<->``."""
    operands: tuple[dict | None, ...]
    """The operand expressions (one for a prefix operator); None for a value the query does not spell
    (a sub-select's column, a ``USING`` column): its type is unknown and its size unbounded."""
    scope: Scope | None
    """The level the operands are evaluated at."""
    element_of_right: bool = False
    """True for ``x op ANY/ALL (array)``: the operator sees the right operand's elements."""


@attrs.frozen
class FromItems:
    """The FROM items of one SELECT level, as far as column resolution cares."""

    only_tables: bool
    """True when every item is a schema-qualified table, view or other relation."""
    table_names: frozenset[str]
    """The names (alias, else relation name) a qualified column reference uses for those relations."""
    other_names: frozenset[str]
    """Names of every other item: sub-selects, CTE references, functions, join aliases."""


def from_items(from_clause: list[dict], ctes_in_scope: frozenset[str]) -> FromItems:
    """Classify the FROM items of one level (joins are looked through)."""
    only_tables, tables, others = True, set(), set()
    pending = list(from_clause)
    while pending:
        ((kind, node),) = pending.pop().items()
        alias = node.get("alias", {}).get("aliasname")
        if kind == "JoinExpr":
            pending.extend(node[side] for side in ("larg", "rarg") if side in node)
            if alias:
                others.add(alias)
        elif kind == "RangeVar" and node.get("schemaname") and "catalogname" not in node:
            tables.add(alias or node["relname"])
        else:
            only_tables = False
            if kind == "RangeVar":
                others.add(alias or node["relname"])
            elif alias:
                others.add(alias)
            if kind == "RangeFunction":  # without an alias, a function in FROM is named after itself
                others.update(_function_names(node, aliased=bool(alias)))
    return FromItems(only_tables, frozenset(tables), frozenset(others))


def _function_names(range_function: dict, *, aliased: bool) -> set[str]:
    """The names an unaliased function in FROM goes by; an expression there (CAST, COALESCE...) needs an alias.

    PostgreSQL names ``FROM coalesce(x)`` after the expression; the guard would not know that name, and a
    qualified column ``coalesce.coalesce`` could then pass for a column of an outer table of that name.
    """
    names: set[str] = set()
    for item in range_function.get("functions", ()):
        parts = item.get("List", {}).get("items", ())
        expression = parts[0] if parts else None
        call = expression.get("FuncCall") if expression else None
        if call:
            names.update(n["String"]["sval"] for n in call.get("funcname", ()) if "String" in n)
        elif expression is not None and not aliased:
            raise QueryRejected(
                "an expression in FROM that is not a function call needs an alias: "
                "write FROM expression AS name",
                reason=RefusalReason.CONSTRUCT,
            )
    return names


def _row_parts(operand: dict | None) -> list[dict | None]:
    if operand is not None and "RowExpr" in operand:
        return list(operand["RowExpr"].get("args", ()))
    return [operand]


def _is_row(operand: dict | None) -> bool:
    return operand is not None and "RowExpr" in operand


def _pairs(name: str, left: dict | None, right: dict | None, scope: Scope | None) -> list[OperatorSite]:
    """An operator applied to two operands; ``ROW(...) op ROW(...)`` applies it element by element.

    Only two row constructors are compared pairwise (PostgreSQL's row comparison); with one row the
    operator takes a ``record`` operand (``ROW(x) || 'y'`` concatenates the row's text).
    """
    if not (_is_row(left) and _is_row(right)):
        return [OperatorSite(name, (left, right), scope)]
    lefts, rights = _row_parts(left), _row_parts(right)
    if len(lefts) != len(rights):
        # PostgreSQL refuses it too; refusing here keeps the check linear (no pair of every element).
        raise QueryRejected(
            f"ROW(...) {name} ROW(...) compares rows of {len(lefts)} and {len(rights)} fields: "
            "rows compared must have the same number of fields",
            reason=RefusalReason.CONSTRUCT,
        )
    return [OperatorSite(name, (a, b), scope) for a, b in zip(lefts, rights)]


def expression_sites(kind: str, node: dict, name: str | None, scope: Scope | None) -> list[OperatorSite]:
    """The operator applications of an ``A_Expr`` whose operator name is ``name``."""
    left = node.get("lexpr")
    right = node.get("rexpr")
    items = right["List"].get("items", ()) if isinstance(right, dict) and "List" in right else None
    if kind in _BETWEEN_OPERATORS:
        return [site for bound in items or () for operator in _BETWEEN_OPERATORS[kind]
                for site in (OperatorSite(operator, (left, bound), scope), OperatorSite(operator, (bound, left), scope))]
    operator = "=" if kind in _EQUALITY_KINDS else (name or "=")
    if kind == "AEXPR_IN":
        return [site for item in items or () for site in _pairs(operator, left, item, scope)]
    if kind in ("AEXPR_OP_ANY", "AEXPR_OP_ALL"):
        return [OperatorSite(operator, (left, right), scope, element_of_right=True)]
    if left is None:
        return [OperatorSite(operator, (right,), scope)]
    if right is not None and "SubLink" in right and "RowExpr" in left:  # (a, b) = (SELECT x, y)
        return [OperatorSite(operator, (part, None), scope) for part in _row_parts(left)]
    return _pairs(operator, left, right, scope)


def sublink_sites(node: dict, name: str | None, scope: Scope | None) -> list[OperatorSite]:
    """``x IN (SELECT ...)``, ``x op ANY/ALL (SELECT ...)``, ``(a, b) op (SELECT ...)``."""
    if node.get("subLinkType") not in ("ANY_SUBLINK", "ALL_SUBLINK", "ROWCOMPARE_SUBLINK"):
        return []
    return [OperatorSite(name or "=", (part, None), scope) for part in _row_parts(node.get("testexpr"))]


def case_sites(node: dict, scope: Scope | None) -> list[OperatorSite]:
    """``CASE x WHEN v THEN ...`` compares x = v for each WHEN."""
    if "arg" not in node:
        return []
    return [site for when in node.get("args", ()) for site in _pairs("=", node["arg"], when["CaseWhen"]["expr"], scope)]


def join_sites(node: dict, scope: Scope | None) -> list[OperatorSite]:
    """``JOIN ... USING (c)`` and ``NATURAL JOIN`` compare same-named columns with ``=``."""
    if node.get("usingClause") or node.get("isNatural"):
        return [OperatorSite("=", (None, None), scope)]
    return []


def output_columns(select: dict, renames: list[str]) -> frozenset[str]:
    """Names certainly among the columns of a sub-select or CTE body (``renames``: its alias's column list).

    A select-list item counts when named (``AS x``) or a column reference (its last name); ``VALUES``
    columns are ``column1``...; the alias's names replace the first ones. After a ``*`` positions are
    unknown, so only the alias's names count then.
    """
    while select.get("op", "SETOP_NONE") != "SETOP_NONE" and isinstance(select.get("larg"), dict):
        select = select["larg"].get("SelectStmt", select["larg"])
    names: list[str | None] = []
    if select.get("valuesLists"):
        first = select["valuesLists"][0].get("List", {}).get("items", ())
        names = [f"column{i + 1}" for i in range(len(first))]
    for target in select.get("targetList", ()):
        result = target.get("ResTarget", {})
        fields = result.get("val", {}).get("ColumnRef", {}).get("fields", ())
        if fields and "A_Star" in fields[-1]:
            return frozenset(renames)
        names.append(result.get("name") or (fields[-1].get("String", {}).get("sval") if fields else None))
    names[: len(renames)] = renames
    return frozenset(name for name in names if name)

