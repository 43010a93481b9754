"""Whether an argument of a cost-bounded function is bounded in size by the query text or stored data.

A cost-bounded function (``cost_bounded_functions.py``) runs without checking
for interrupts for a time that grows with the product of its inputs' sizes.
Bounding one input is not enough: with one factor at N bytes, the other can
be ``repeat('a', 10^9)``, built in a fraction of a second, and N x 10^9
steps are minutes. So every cost-driving argument must be *bounded*:

- a literal (also cast, in an ARRAY or ROW) whose text totals at most
  ``max_bounded_literal_bytes``; a type modifier counts too (``char(n)``
  pads to n), and a number's exponent counts as the digits it stands for;
- a column that certainly belongs to a table of the database (granted, or
  the query is refused anyway): a stored value, whose size the database's
  owner controls, not the query. At most one column per argument, or the
  query could multiply a stored value's size by repeating it;
- a function of ``SIZE_BOUNDED_BY_ARGUMENTS`` (lower, substr, ||...) over
  bounded arguments, COALESCE/CASE/GREATEST/NULLIF choosing between bounded
  values, an element or field of a bounded value;
- any expression whose type is certainly fixed-length (a count, a length, a
  boolean, a date, a point): a few bytes, however it was computed.

Anything else (repeat, lpad, string_agg, array_agg, jsonb_agg, a sub-select,
a CTE's or sub-select's column, format, replace...) is computed in the query
and unbounded.
"""

from __future__ import annotations

import re

import attrs

from drivers.postgres.expression_types import ExpressionTypes, call_arguments, unwrap
from drivers.postgres.sql_names import builtin_name_of
from drivers.postgres.query_policy import QueryPolicy
from drivers.postgres.query_sites import Scope

_NUMBER_WITH_EXPONENT = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)[eE]\+?(\d+)\s*")
_CHOICES = frozenset({"CoalesceExpr", "MinMaxExpr", "CaseExpr"})
_SUMS = frozenset({"A_ArrayExpr", "RowExpr"})
_PASS_THROUGH = frozenset({"CollateClause", "NamedArgExpr", "A_Indirection"})


@attrs.frozen
class Bound:
    """An upper bound of a bounded expression's size."""

    literal_bytes: int
    """Bytes of literal text (type modifiers and exponents included)."""
    columns: int
    """Column references whose stored values the value may hold together."""


def literal_bytes(text: str) -> int:
    """The size a literal's value can reach: its bytes, plus a number's exponent in digits."""
    size = len(text.encode("utf-8"))
    match = _NUMBER_WITH_EXPONENT.fullmatch(text)
    return size + min(int(match.group(1)), 1 << 30) if match else size


class ArgumentBounds:
    """Decides, per expression of one parse tree, whether it is bounded (answers are remembered)."""

    def __init__(
        self, policy: QueryPolicy, types: ExpressionTypes, table_names: set[str], other_names: set[str]
    ) -> None:
        self.policy = policy
        self.types = types
        self._table_names = table_names - other_names
        self._known: dict[int, Bound | str] = {}

    def unbounded_reason(self, expression: dict | None, scope: Scope | None) -> str | None:
        """None when ``expression`` is bounded, else a few words saying why not."""
        if expression is None:
            return "a sub-select's column is computed in the query"
        bound = self._bound(expression, scope)
        if isinstance(bound, str):
            return bound
        limit = self.policy.max_bounded_literal_bytes
        if bound.literal_bytes > limit:
            return f"it holds {bound.literal_bytes} bytes of literal text"
        if bound.columns > 1:
            return f"it combines {bound.columns} columns"
        return None

    def _bound(self, expression: dict, scope: Scope | None) -> Bound | str:
        stack: list[tuple[dict, bool]] = [(expression, False)]
        while stack:
            current, children_done = stack.pop()
            if id(current) in self._known:
                continue
            kind, node = unwrap(current)
            children = self._children(kind, node, current)
            if children_done or not children:
                self._known[id(current)] = self._compute(kind, node, current, scope)
            else:
                stack.append((current, True))
                stack.extend((child, False) for child in children if id(child) not in self._known)
        return self._known[id(expression)]

    def _may_call(self, indirection: dict) -> bool:
        """True when some ``.name`` of ``(x).name`` names a pg_catalog function or type (then maybe ``name(x)``)."""
        catalog = self.policy.catalog
        names = [item["String"]["sval"] for item in indirection.get("indirection", ()) if "String" in item]
        return any(name in catalog.overloads or name in catalog.type_oids for name in names)

    def _fixed_length(self, expression: dict) -> bool:
        return self.policy.is_fixed_length(self.types.of(expression))

    def _children(self, kind: str, node: dict, expression: dict) -> list[dict]:
        if kind in ("A_Const", "ColumnRef") or self._fixed_length(expression):
            return []
        if kind in _SUMS:
            return list(node.get("elements" if kind == "A_ArrayExpr" else "args", ()))
        if kind in ("CoalesceExpr", "MinMaxExpr"):
            return list(node.get("args", ()))
        if kind == "CaseExpr":
            results = [when["CaseWhen"]["result"] for when in node.get("args", ())]
            return results + ([node["defresult"]] if "defresult" in node else [])
        if kind == "FuncCall" and self.types.maybe_column(node):
            return []
        if kind == "A_Indirection" and self._may_call(node):
            return []  # (x).name may be name(x), a value computed in the query
        if kind in _PASS_THROUGH or kind == "TypeCast":
            return [node["arg"]] if "arg" in node else []
        if kind == "A_Expr" and node.get("kind") == "AEXPR_NULLIF":
            return [node["lexpr"]]
        positions = self._size_positions(kind, node)
        if positions is None:
            return []
        arguments = self._arguments(kind, node)
        if -1 in positions:  # EVERY_ARGUMENT
            return arguments
        return [arguments[i] for i in sorted(positions) if i < len(arguments)]

    def _arguments(self, kind: str, node: dict) -> list[dict]:
        if kind == "FuncCall":
            return [unwrap(a)[1]["arg"] if "NamedArgExpr" in a else a for a in call_arguments(node)]
        return [operand for operand in (node.get("lexpr"), node.get("rexpr")) if operand is not None]

    def _size_positions(self, kind: str, node: dict) -> set[int] | None:
        """Positions carrying the result's size when every possible implementation is size-bounded."""
        if kind == "FuncCall":
            candidates = self.types.possible_overloads(node)
            oids = [o.oid for o in candidates or ()]
        elif kind == "A_Expr" and node.get("kind") == "AEXPR_OP" and "lexpr" in node:
            name = builtin_name_of(node.get("name", ()))
            if name is None:
                return None
            operand_types = (self.types.of(node["lexpr"]), self.types.of(node["rexpr"]))
            oids = [op.function for op in self.policy.possible_operators(name, operand_types)]
        else:
            return None
        if not oids or any(oid not in self.policy.size_bounded for oid in oids):
            return None
        return {position for oid in oids for position in self.policy.size_bounded[oid]}

    def _compute(self, kind: str, node: dict, expression: dict, scope: Scope | None) -> Bound | str:
        if self._fixed_length(expression):
            return Bound(0, 0)
        if kind == "A_Const":
            value: object = next(iter(node.values()), None)
            text = next(iter(value.values()), "") if isinstance(value, dict) else ""
            return Bound(literal_bytes(str(text)), 0)
        if kind == "ColumnRef":
            return self._column(node, scope)
        if kind == "TypeCast":
            modifiers = node["typeName"].get("typmods", ())
            sizes = [int(unwrap(m)[1].get("ival", {}).get("ival", 0)) for m in modifiers if "A_Const" in m]
            if len(sizes) != len(modifiers):
                return "its type modifier is computed in the query"
            cast = self._combine([node["arg"]], sum)
            return cast if isinstance(cast, str) else Bound(cast.literal_bytes + sum(sizes), cast.columns)
        if kind == "A_Indirection" and any("A_Star" in item for item in node.get("indirection", ())):
            return "(x).* is computed in the query"
        if kind == "A_Indirection" and self._may_call(node):
            return "(x).name may call function name(x), computed in the query"
        if kind == "FuncCall" and self.types.maybe_column(node):
            return "f(x) may be column x.f of a sub-select, CTE or function in FROM, computed in the query"
        children = self._children(kind, node, expression)
        if kind in _CHOICES:
            return self._combine(children, max)
        if children or kind in _SUMS:
            return self._combine(children, sum)
        return f"{_describe(kind, node)} computes a value in the query"

    def _combine(self, children: list[dict], how: object) -> Bound | str:
        bounds = [self._known[id(child)] for child in children]
        for bound in bounds:
            if isinstance(bound, str):
                return bound
        sizes = [b.literal_bytes for b in bounds if isinstance(b, Bound)]
        columns = [b.columns for b in bounds if isinstance(b, Bound)]
        if how is max:
            return Bound(max(sizes, default=0), max(columns, default=0))
        return Bound(sum(sizes), sum(columns))

    def _column(self, node: dict, scope: Scope | None) -> Bound | str:
        fields = node.get("fields", ())
        names = [field.get("String", {}).get("sval") for field in fields]
        if not names or None in names:
            return "a whole-row or starred reference is computed in the query"
        if node.get("row") and len(names) == 1 and names[0] in self._table_names:
            return Bound(0, 1)  # the whole row of a table of the database (x in x.name)
        if len(names) == 1:
            certain = scope is not None and scope.only_tables
        else:
            certain = len(names) in (2, 3) and names[-2] in self._table_names
        if not certain:
            return (f"column {'.'.join(names)} may not be a stored column of a table "
                    "(it could come from a sub-select, CTE, VALUES list or function in FROM)")
        return Bound(0, 1)


def _describe(kind: str, node: dict) -> str:
    if kind == "FuncCall":
        return f"{builtin_name_of(node.get('funcname', ())) or 'the function'}()"
    if kind == "A_Expr":
        return f"operator {builtin_name_of(node.get('name', ())) or ''}".rstrip()
    if kind == "SubLink":
        return "a sub-select"
    return {"A_ArrayExpr": "ARRAY[...]", "RowExpr": "ROW(...)"}.get(kind, kind)
