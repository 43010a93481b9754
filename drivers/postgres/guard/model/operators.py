"""Operator expressions (``transformAExpr*``, ``make_op``, ``make_scalar_array_op`` of PostgreSQL).

Every ``A_Expr`` kind becomes what PostgreSQL makes of it: ``a op b`` and
``op b`` an operator call; ``a op ANY/ALL (array)`` a scalar-array
operation; ``IS [NOT] DISTINCT FROM`` and ``NULLIF`` the ``=`` operator;
``IN (...)`` one ``= ANY (ARRAY[...])`` over the list's constants and an OR of
``=`` for the rest; ``BETWEEN`` the ``>=`` and ``<=`` pair; ``LIKE``,
``ILIKE`` and ``SIMILAR TO`` their operators; ``ROW(...) op ROW(...)`` a
pairwise comparison.
"""

from __future__ import annotations

from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.model.base import AnalyzerBase, Raw
from drivers.postgres.guard.model.expressions import string_value, unwrap
from drivers.postgres.guard.model.ir import Array, ArrayOp, BoolOp, Expr, OpCall, Row, RowCompare, SubLink, Var, walk
from drivers.postgres.guard.model.resolution import Outcome
from drivers.postgres.guard.model.scope import ParseState
from drivers.postgres.guard.model.types import BOOL, POLYMORPHIC, RECORD, UNKNOWN


def operator_name(parts: list[Raw]) -> str:
    """The pg_catalog operator an ``A_Expr`` names; other schemas are refused."""
    names = [string_value(part) for part in parts]
    if len(names) == 1 or len(names) == 2 and names[0] == "pg_catalog":
        return names[-1]
    raise Unsupported(f'operator "{".".join(names)}" is not allowed: only built-in operators (schema pg_catalog) '
                      "may be used")


def _has_local_vars(expr: Expr) -> bool:
    """``contain_vars_of_level(expr, 0)``."""
    return any(isinstance(node, Var) and node.levels_up == 0 for node in walk(expr))


def _raw_binary(name: str, left: Raw, right: Raw, location: int) -> Raw:
    return {"A_Expr": {"kind": "AEXPR_OP", "name": [{"String": {"sval": name}}], "lexpr": left, "rexpr": right,
                       "location": location}}


def _raw_bool(op: str, args: list[Raw], location: int) -> Raw:
    return {"BoolExpr": {"boolop": op, "args": args, "location": location}}


class Operators(AnalyzerBase):
    """Operator expressions, a part of the analyser."""

    def operator_expr(self, body: Raw, state: ParseState) -> Expr:
        kind = body.get("kind", "AEXPR_OP")
        location = body.get("location", -1)
        name = operator_name(body.get("name", [{"String": {"sval": "="}}]))
        if kind in ("AEXPR_BETWEEN", "AEXPR_NOT_BETWEEN", "AEXPR_BETWEEN_SYM", "AEXPR_NOT_BETWEEN_SYM"):
            return self.expr(self._between(kind, body, location), state)
        if kind == "AEXPR_IN":
            return self._in_list(name, body, state, location)
        left_raw, right_raw = body.get("lexpr"), body.get("rexpr")
        if kind in ("AEXPR_OP", "AEXPR_LIKE", "AEXPR_ILIKE", "AEXPR_SIMILAR"):
            if left_raw is not None and "RowExpr" in left_raw and right_raw is not None and "SubLink" in right_raw \
                    and right_raw["SubLink"].get("subLinkType", "EXPR_SUBLINK") == "EXPR_SUBLINK":
                sublink = dict(right_raw["SubLink"], subLinkType="ROWCOMPARE_SUBLINK", testexpr=left_raw,
                               operName=body.get("name"))
                return self.expr({"SubLink": sublink}, state)
            left = self.expr(left_raw, state) if left_raw is not None else None
            right = self.expr(right_raw, state)
            if isinstance(left, Row) and isinstance(right, Row) and left_raw is not None and "RowExpr" in left_raw \
                    and right_raw is not None and "RowExpr" in right_raw:
                return self.row_comparison(name, left.args, right.args, location)
            if left is None:
                return self.prefix_operator(name, right, location)
            return self.binary_operator(name, left, right, location)
        left = self.expr(left_raw, state)
        right = self.expr(right_raw, state)
        if kind in ("AEXPR_OP_ANY", "AEXPR_OP_ALL"):
            return self.array_operator(name, left, right, kind == "AEXPR_OP_ANY", location)
        if kind in ("AEXPR_DISTINCT", "AEXPR_NOT_DISTINCT"):
            if isinstance(left, Row) and isinstance(right, Row):
                result = self.row_distinct(left.args, right.args, location)
            else:
                result = self._distinct(left, right, location)
            return BoolOp("NOT", [result], location) if kind == "AEXPR_NOT_DISTINCT" else result
        if kind == "AEXPR_NULLIF":
            comparison = self.binary_operator(name, left, right, location)
            assert isinstance(comparison, OpCall)
            if comparison.type != BOOL:
                raise AnalysisError("NULLIF requires = operator to yield boolean")
            if getattr(comparison.function, "returns_set", False):
                raise AnalysisError("NULLIF must not return a set")
            comparison.form = "nullif"
            comparison.type = comparison.args[0].type
            return comparison
        raise Unsupported(f"operator expression {kind} is not supported")

    def _between(self, kind: str, body: Raw, location: int) -> Raw:
        """``transformAExprBetween``: BETWEEN as the comparisons PostgreSQL writes for it."""
        a = body["lexpr"]
        b, c = body["rexpr"]["List"]["items"]
        if kind == "AEXPR_BETWEEN":
            return _raw_bool("AND_EXPR", [_raw_binary(">=", a, b, location), _raw_binary("<=", a, c, location)],
                             location)
        if kind == "AEXPR_NOT_BETWEEN":
            return _raw_bool("OR_EXPR", [_raw_binary("<", a, b, location), _raw_binary(">", a, c, location)],
                             location)
        if kind == "AEXPR_BETWEEN_SYM":
            first = _raw_bool("AND_EXPR", [_raw_binary(">=", a, b, location), _raw_binary("<=", a, c, location)],
                              location)
            second = _raw_bool("AND_EXPR", [_raw_binary(">=", a, c, location), _raw_binary("<=", a, b, location)],
                               location)
            return _raw_bool("OR_EXPR", [first, second], location)
        first = _raw_bool("OR_EXPR", [_raw_binary("<", a, b, location), _raw_binary(">", a, c, location)], location)
        second = _raw_bool("OR_EXPR", [_raw_binary("<", a, c, location), _raw_binary(">", a, b, location)], location)
        return _raw_bool("AND_EXPR", [first, second], location)

    def _in_list(self, name: str, body: Raw, state: ParseState, location: int) -> Expr:
        """``transformAExprIn``."""
        use_or = name != "<>"
        left = self.expr(body.get("lexpr"), state)
        items = body["rexpr"]["List"]["items"] if "List" in body.get("rexpr", {}) else body.get("rexpr", [])
        rights = [self.expr(item, state) for item in items]
        with_vars = [r for r in rights if _has_local_vars(r)]
        without_vars = [r for r in rights if not _has_local_vars(r)]
        result: Expr | None = None
        remaining = rights
        if len(without_vars) > 1:
            every = [left, *without_vars]
            common = self.coercions.common_type([e.type for e in every], None)
            if common and not self.coercions.verify_common_type(common, [e.type for e in every]):
                common = 0
            array = self.catalog.array_type(common) if common and common != RECORD else 0
            if array:
                elements = [self.coerce_to_common(r, common, "IN") for r in without_vars]
                result = self.array_operator(name, left, Array(array, common, elements, False), use_or, location)
                remaining = with_vars
        for right in remaining:
            if isinstance(left, Row) and isinstance(right, Row):
                comparison = self.row_comparison(name, left.args, right.args, location)
            else:
                comparison = self.binary_operator(name, left, right, location)
            comparison = self.coerce_to_boolean(comparison, "IN")
            result = comparison if result is None else BoolOp("OR" if use_or else "AND", [result, comparison],
                                                              location)
        assert result is not None
        return result

    def _resolve(self, name: str, left: Expr | None, right: Expr) -> Expr:
        operator, outcome = self.resolver.operator(name, left.type if left is not None else None, right.type)
        if operator is None:
            shown = (f"{self.catalog.type_display(left.type)} {name} " if left is not None else f"{name} ") + \
                self.catalog.type_display(right.type)
            if outcome is Outcome.MULTIPLE:
                raise AnalysisError(f"operator is not unique: {shown}",
                                    hint="Could not choose a best candidate operator. You might need to add "
                                         "explicit type casts.")
            raise AnalysisError(f"operator does not exist: {shown}",
                                hint="No operator matches the given name and argument types. You might need to add "
                                     "explicit type casts.")
        if not operator.function:
            raise AnalysisError(f"operator is only a shell: {name}")
        args = [left, right] if left is not None else [right]
        declared = [operator.left, operator.right] if left is not None else [operator.right]
        result_type = self.coercions.resolve_polymorphic([a.type for a in args], declared, operator.result)
        coerced = [self.coerce(a, d) if a.type != d else a for a, d in zip(args, declared)]
        function = self.catalog.functions.get(operator.function)
        return OpCall(result_type, operator, function, coerced)

    def binary_operator(self, name: str, left: Expr, right: Expr, location: int = -1) -> Expr:
        """``make_op`` for ``left name right``."""
        result = self._resolve(name, left, right)
        result.location = location
        return result

    def prefix_operator(self, name: str, right: Expr, location: int = -1) -> Expr:
        """``make_op`` for ``name right``."""
        result = self._resolve(name, None, right)
        result.location = location
        return result

    def array_operator(self, name: str, left: Expr, array: Expr, use_or: bool, location: int = -1) -> Expr:
        """``make_scalar_array_op``: ``left name ANY/ALL (array)``."""
        catalog = self.catalog
        if array.type == UNKNOWN:
            element = UNKNOWN
        else:
            element = catalog.base_element_type(array.type)
            if not element:
                raise AnalysisError("op ANY/ALL (array) requires array on right side")
        operator, outcome = self.resolver.operator(name, left.type, element)
        if operator is None:
            shown = f"{catalog.type_display(left.type)} {name} {catalog.type_display(element)}"
            if outcome is Outcome.MULTIPLE:
                raise AnalysisError(f"operator is not unique: {shown}")
            raise AnalysisError(f"operator does not exist: {shown}")
        declared = [operator.left, operator.right]
        result_type = self.coercions.resolve_polymorphic([left.type, element], declared, operator.result)
        if result_type != BOOL:
            raise AnalysisError("op ANY/ALL (array) requires operator to yield boolean")
        function = catalog.functions.get(operator.function)
        if function is not None and function.returns_set:
            raise AnalysisError("op ANY/ALL (array) requires operator not to return a set")
        if declared[1] in POLYMORPHIC:
            array_target = array.type
        else:
            array_target = catalog.array_type(declared[1])
            if not array_target:
                raise AnalysisError(f"could not find array type for data type {catalog.type_display(declared[1])}")
        left = self.coerce(left, declared[0]) if left.type != declared[0] else left
        array = self.coerce(array, array_target) if array.type != array_target else array
        return ArrayOp(operator, function, [left, array], use_or, location)

    def _distinct(self, left: Expr, right: Expr, location: int) -> Expr:
        result = self.binary_operator("=", left, right, location)
        if result.type != BOOL:
            raise AnalysisError("IS DISTINCT FROM requires = operator to yield boolean")
        assert isinstance(result, OpCall)
        result.form = "distinct"
        return result

    def row_distinct(self, left: list[Expr], right: list[Expr], location: int) -> Expr:
        """``make_row_distinct_op``."""
        if len(left) != len(right):
            raise AnalysisError("unequal number of entries in row expressions")
        pairs = [self._distinct(a, b, location) for a, b in zip(left, right)]
        return pairs[0] if len(pairs) == 1 else BoolOp("OR", pairs, location)

    def row_comparison(self, name: str, left: list[Expr], right: list[Expr], location: int = -1) -> Expr:
        """``make_row_comparison_op``."""
        if len(left) != len(right):
            raise AnalysisError("unequal number of entries in row expressions")
        comparisons = []
        for a, b in zip(left, right):
            comparison = self.binary_operator(name, a, b, location)
            if comparison.type != BOOL:
                raise AnalysisError(f"row comparison operator must yield type boolean, not type "
                                    f"{self.catalog.type_display(comparison.type)}")
            if getattr(comparison, "returns_set", False):
                raise AnalysisError("row comparison operator must not return a set")
            comparisons.append(comparison)
        if len(comparisons) == 1:
            return comparisons[0]
        if name == "=":
            return BoolOp("AND", comparisons, location)
        if name == "<>":
            return BoolOp("OR", comparisons, location)
        operators = [c.operator for c in comparisons if isinstance(c, OpCall)]
        functions = [c.function for c in comparisons if isinstance(c, OpCall)]
        return RowCompare(operators, functions, [c.args[0] for c in comparisons if isinstance(c, OpCall)],
                          [c.args[1] for c in comparisons if isinstance(c, OpCall)], location)


__all__ = ["Operators", "operator_name", "SubLink", "unwrap"]
