"""The guard's checks that need a database's catalog: types, functions, operators, costs.

``check_against_catalog`` runs after the walk (``select_walker.py``) over
what it recorded, against one ``QueryPolicy``, and raises ``QueryRejected``
at the first rule broken, in this order:

1. every type named is a plain built-in data type (``type_rules.py``);
2. every function called by name is allowed, and so is every ``x.name``
   PostgreSQL could read as ``name(x)``;
3. a text search configuration or dictionary given as a literal is a bare
   name (a qualified one would reveal whether a schema exists);
4. every implementation PostgreSQL could pick for an operator is allowed;
5. wherever a cost-bounded function may run (called by name, behind an
   operator, reading a cast's or a column definition list's text, or as
   ``name(x)`` for ``x.name``), its cost-driving arguments are bounded
   (``plain_arguments.py``, checked in ``cost_checks.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from drivers.postgres.expression_types import ExpressionTypes, call_arguments, unwrap
from drivers.postgres.sql_names import builtin_name_of
from drivers.postgres.plain_arguments import ArgumentBounds
from drivers.postgres.query_policy import QueryPolicy
from drivers.postgres.type_matching import ANY, UNKNOWN, UNKNOWN_TEXT
from drivers.postgres.query_sites import OperatorSite
from drivers.postgres.select_walker import SelectTreeWalker
from drivers.postgres.cost_checks import (
    check_call_costs,
    check_cast_cost,
    check_column_definitions,
    check_function_style_cast,
    check_operator_costs,
    check_type_name,
    possible_operand_types,
)
from drivers.postgres.sql_names import display_name
from drivers.postgres.type_rules import TEXT_SEARCH_LOOKUP_TYPES
from gateway.errors import QueryRejected, RefusalReason

_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNTYPED = frozenset({ANY, UNKNOWN, UNKNOWN_TEXT})


def check_against_catalog(walker: SelectTreeWalker, policy: QueryPolicy) -> None:
    """Raise ``QueryRejected`` unless what ``walker`` recorded keeps to ``policy``."""
    for type_name in walker.type_names:
        check_type_name(type_name, policy)
    _check_function_names(walker, policy)
    types = ExpressionTypes(policy, frozenset(walker.other_names))
    bounds = ArgumentBounds(policy, types, walker.table_names, walker.other_names)
    for call, _ in walker.calls:
        _check_text_search_literals(call, policy, types)
    for site in walker.operator_sites:
        _check_operator(site, policy, types)
    for call, scope in walker.calls:
        # A cast first: typename(x) with no overload taking x exactly is a cast, whatever else it might be.
        check_function_style_cast(call, scope, policy, types, bounds)
        check_call_costs(call, scope, policy, types, bounds)
    for call, scope in walker.attribute_calls:
        if walker.is_known_column(call):
            continue
        if policy.catalog.overloads.get(_called_name(call)) or policy.catalog.type_named(_called_name(call)):
            # x.name may be name(x): checked as that call wherever x could have no such column.
            check_call_costs(call, scope, policy, types, bounds)
            check_function_style_cast(call, scope, policy, types, bounds)
    for cast, scope in walker.casts:
        check_cast_cost(cast, scope, policy, types, bounds)
    for expression, type_names, scope in walker.column_definitions:
        check_column_definitions(expression, type_names, scope, policy, types, bounds)
    for site in walker.operator_sites:
        check_operator_costs(site, policy, types, bounds)


def _called_name(call: dict) -> str:
    return str(call["funcname"][-1]["String"]["sval"])


def _check_function_names(walker: SelectTreeWalker, policy: QueryPolicy) -> None:
    functions = policy.functions
    refused = walker.functions - functions.allowed
    if refused:
        name = min(refused)
        raise QueryRejected(
            f"function {display_name(name)} is not allowed: {functions.refusal_reason(name)}",
            reason=RefusalReason.FUNCTION,
        )
    for name in sorted(walker.attribute_names - functions.allowed):
        if functions.refuses_attribute(name):
            raise QueryRejected(
                f"function {display_name(name)} is not allowed: "
                f'PostgreSQL calls it for ".{name}" when there is no such column',
                reason=RefusalReason.FUNCTION,
            )


def _check_text_search_literals(call: dict, policy: QueryPolicy, types: ExpressionTypes) -> None:
    """Where a possible overload takes regconfig/regdictionary, only a bare-name literal (or NULL) may go.

    The value is looked up in the catalog: a qualified name would tell whether
    a schema exists, a number (an implicit cast to regconfig) whether an OID
    is a text search configuration.
    """
    arguments = call_arguments(call)
    count = len(arguments)
    variadic_call = bool(call.get("func_variadic"))
    lookup_positions = {
        position
        for overload in types.possible_overloads(call) or ()
        for position in range(count)
        if any(policy.catalog.type_name(t) in TEXT_SEARCH_LOOKUP_TYPES
               for t in overload.parameter_types(position, count, variadic_call=variadic_call))
    }
    name = builtin_name_of(call.get("funcname", ())) or "?"
    named = any("NamedArgExpr" in argument for argument in arguments)
    for position in sorted(lookup_positions):
        kind, node = unwrap(arguments[position])
        if named:  # a name can put the configuration at any position
            raise QueryRejected(
                f"function {display_name(name)} takes a text search configuration: "
                "pass its arguments by position, not by name",
                reason=RefusalReason.FUNCTION,
            )
        text = node.get("sval", {}).get("sval") if kind == "A_Const" else None
        if kind == "A_Const" and (node.get("isnull") or text is not None and _BARE_NAME.fullmatch(text)):
            continue
        shown = repr(text) if text is not None else f"argument {position + 1}"
        raise QueryRejected(
            f"text search configuration {shown} of function {display_name(name)} is not allowed: give a built-in "
            "one as a literal bare name, such as 'english' (anything else would look other schemas or OIDs up)",
            reason=RefusalReason.FUNCTION,
        )


def _signature(policy: QueryPolicy, function_oid: int) -> str:
    overload = policy.catalog.functions.get(function_oid)
    if overload is None:
        return str(function_oid)
    return f"{overload.name}({', '.join(policy.catalog.type_name(t) for t in overload.arguments)})"


def _check_operator(site: OperatorSite, policy: QueryPolicy, types: ExpressionTypes) -> None:
    operand_types = possible_operand_types(site, types)
    refused = policy.refused_operator(site.name, operand_types)
    if refused is None:
        return
    implementations = policy.possible_operators(site.name, operand_types)
    overload = policy.catalog.functions.get(refused.function)
    name = overload.name if overload else str(refused.function)
    certain = len(implementations) == 1
    message = (
        f'operator "{site.name}" is not allowed here: it {"runs" if certain else "could run"} '
        f"{_signature(policy, refused.function)}, which is not allowed: {policy.functions.refusal_reason(name)}"
    )
    if not certain and any(t & _UNTYPED for t in operand_types):
        message += "; " + _cast_hint(site, policy, implementations)
    raise QueryRejected(message, reason=RefusalReason.OPERATOR)


def _cast_hint(site: OperatorSite, policy: QueryPolicy, implementations: Iterable) -> str:
    allowed = [op for op in implementations
               if policy.functions.allows(getattr(policy.catalog.functions.get(op.function), "name", ""))]
    example = f"::{policy.catalog.type_name(allowed[0].right)}" if allowed else "::point"
    return ("the guard cannot tell the operands' types apart, so cast an operand to the type you mean "
            f"(for example {example})")
