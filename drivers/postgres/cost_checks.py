"""The guard's catalog checks of cost-bounded calls, casts and type names (``query_checks.py`` runs them).

Wherever a cost-bounded function (``cost_bounded_functions.py``) may run, called by name, behind an
operator, reading a cast's or a column definition list's text, or in a function-style cast, its
cost-driving arguments must be bounded (``plain_arguments.py``). The type-name check lives here too,
because a function-style cast ``typename(x)`` names a type.
"""

from __future__ import annotations

from drivers.postgres.catalog_snapshot import FunctionOverload
from drivers.postgres.expression_types import ExpressionTypes, call_arguments, unwrap
from drivers.postgres.plain_arguments import ArgumentBounds
from drivers.postgres.query_policy import QueryPolicy
from drivers.postgres.query_sites import OperatorSite, Scope
from drivers.postgres.sql_names import builtin_name_of, display_name
from drivers.postgres.type_matching import ANY, ANY_TYPE, TypeSet
from drivers.postgres.type_rules import CATALOG_LOOKUP_TYPES, PLUMBING_TYPES, REFUSED_TO_NAME
from gateway.errors import QueryRejected, RefusalReason


def check_type_name(type_name: dict, policy: QueryPolicy) -> None:
    written = [item.get("String", {}).get("sval", "?") for item in type_name.get("names", ())]
    name = builtin_name_of(type_name.get("names", ())) or "?"
    if policy.nameable_type(name, len(type_name.get("arrayBounds", ()))) is not None:
        return
    info = policy.catalog.type_named(name)
    if info is None:
        why = "it is not a built-in data type of schema pg_catalog"
    elif info.is_array and info.element in policy.catalog.types:
        element = policy.catalog.types[info.element]
        why = f"it is an array of {element.name}, which may not be named either"
    elif info.relation:
        why = "it is the row type of a catalog relation, whose fields carry catalog references"
    elif info.name in CATALOG_LOOKUP_TYPES:
        why = "it looks catalog objects up by name"
    elif info.name in REFUSED_TO_NAME:
        why = "a cast to xml parses text with libxml2, which PostgreSQL cannot interrupt"
    elif info.name in PLUMBING_TYPES or info.kind == "p":
        why = "it is internal plumbing, not a data type"
    else:
        why = "only plain built-in data types may be named"
    raise QueryRejected(f"type {display_name(*written)} is not allowed: {why}", reason=RefusalReason.TYPE)


def possible_operand_types(site: OperatorSite, types: ExpressionTypes) -> tuple[TypeSet, ...]:
    found = [ANY_TYPE if operand is None else types.of(operand) for operand in site.operands]
    if site.element_of_right:
        found[-1] = _elements(types.policy, found[-1])
    return tuple(found)


def _elements(policy: QueryPolicy, arrays: TypeSet) -> TypeSet:
    elements: set[int] = set()
    for oid in arrays:
        info = policy.catalog.types.get(oid)
        if oid < 0 or info is None:
            elements.add(oid if oid < 0 else ANY)
        elif info.is_array:
            elements.add(info.element)
    return frozenset(elements) or ANY_TYPE


def check_call_costs(
    call: dict, scope: Scope | None, policy: QueryPolicy, types: ExpressionTypes, bounds: ArgumentBounds
) -> None:
    named = any("NamedArgExpr" in argument for argument in call.get("args", ()))
    arguments = [unwrap(a)[1]["arg"] if "NamedArgExpr" in a else a for a in call_arguments(call)]
    for overload in types.possible_overloads(call) or ():
        positions = policy.cost_bounded.get(overload.oid)
        if positions is None:
            continue
        for where, argument in _cost_arguments(overload, positions, arguments, named, bool(call.get("func_variadic"))):
            reason = bounds.unbounded_reason(argument, scope)
            if reason:
                _refuse_cost(policy, f"function {display_name(overload.name)}", overload, positions, where, reason)


def _cost_arguments(
    overload: FunctionOverload, positions: tuple[int, ...], arguments: list[dict], named: bool, variadic_call: bool
) -> list[tuple[str, dict]]:
    """(how a message names it, expression) for each argument that drives the overload's cost."""
    if named:  # names may put any argument anywhere: every one is checked
        return [(f"argument {i + 1}", argument) for i, argument in enumerate(arguments)]
    last = len(overload.arguments) - 1
    found = []
    for position in positions:
        if overload.variadic and not variadic_call and position == last and len(arguments) > last:
            # The trailing arguments become one VARIADIC array: bounded together.
            found.append((f"arguments {last + 1} and after", {"A_ArrayExpr": {"elements": arguments[last:]}}))
        elif position < len(arguments):
            found.append((f"argument {position + 1}", arguments[position]))
    return found


def check_cast_cost(
    cast: dict, scope: Scope | None, policy: QueryPolicy, types: ExpressionTypes, bounds: ArgumentBounds
) -> None:
    _check_reading_cost(types.cast_type(cast["typeName"]), cast.get("arg"), scope, policy, bounds)


def _check_reading_cost(
    target: frozenset[int], value: dict | None, scope: Scope | None, policy: QueryPolicy, bounds: ArgumentBounds,
    what: str = "a cast to",
) -> None:
    """A cast may read its value's text with the target type's input function: bound it if that is costly."""
    for oid in target:
        info = policy.catalog.types.get(oid)
        if info is None:
            continue
        reader = policy.catalog.types.get(info.element, info) if info.is_array else info
        for overload in policy.catalog.overloads.get(reader.input_function, ()):
            positions = policy.cost_bounded.get(overload.oid)
            reason = bounds.unbounded_reason(value, scope) if positions else None
            if positions and reason:
                where = "the value cast" if what == "a cast to" else "each argument of the function"
                _refuse_cost(policy, f"{what} {policy.catalog.type_name(oid)}", overload, positions, where, reason)


def check_column_definitions(
    expression: dict, type_names: list[dict], scope: Scope | None, policy: QueryPolicy, types: ExpressionTypes,
    bounds: ArgumentBounds,
) -> None:
    """``f(...) AS r(c type)`` reads text out of f's arguments with each type's input function: like a cast.

    Where that input function is cost-bounded (tsquery, multiranges), every argument of f must be bounded.
    """
    kind, node = unwrap(expression)
    values = [unwrap(a)[1]["arg"] if "NamedArgExpr" in a else a for a in call_arguments(node)] \
        if kind == "FuncCall" else [expression]
    for type_name in type_names:
        for value in values:
            _check_reading_cost(types.cast_type(type_name), value, scope, policy, bounds,
                                what="a column definition of type")


def check_function_style_cast(
    call: dict, scope: Scope | None, policy: QueryPolicy, types: ExpressionTypes, bounds: ArgumentBounds
) -> None:
    """``typename(x)`` is a cast when no overload of that name takes x's type exactly: check it as one too.

    PostgreSQL then reads x's text with the type's input function (for an
    untyped literal, a string or anything it converts through text).
    """
    arguments = call.get("args", ())
    name = builtin_name_of(call.get("funcname", ()))
    info = policy.catalog.type_named(name or "")
    if info is None or len(arguments) != 1 or "NamedArgExpr" in arguments[0] or call.get("func_variadic"):
        return
    argument_types = types.of(arguments[0])
    exact = {overload.arguments for overload in policy.catalog.overloads.get(name or "", ())}
    if len(argument_types) == 1 and (next(iter(argument_types)),) in exact:
        return
    if info.oid not in policy.nameable:
        check_type_name({"names": call["funcname"]}, policy)
    _check_reading_cost(frozenset({info.oid}), arguments[0], scope, policy, bounds)


def check_operator_costs(
    site: OperatorSite, policy: QueryPolicy, types: ExpressionTypes, bounds: ArgumentBounds
) -> None:
    operand_types = possible_operand_types(site, types)
    costly = policy.costly_operators(site.name, operand_types)
    if not costly:
        return
    implementations = policy.possible_operators(site.name, operand_types)
    sides = ("operand",) if len(site.operands) == 1 else ("left operand", "right operand")
    for implementation in costly:
        positions = policy.cost_bounded[implementation.function]
        overload = policy.catalog.functions.get(implementation.function)
        if overload is None:
            continue
        for position in positions:
            if position >= len(site.operands):
                continue
            reason = bounds.unbounded_reason(site.operands[position], site.scope)
            if reason:
                verb = "runs" if len(implementations) == 1 else "could run"
                _refuse_cost(policy, f'operator "{site.name}" ({verb} {overload.name})', overload, positions,
                             f"its {sides[position]}", reason)


def _refuse_cost(
    policy: QueryPolicy, what: str, overload: FunctionOverload, positions: tuple[int, ...], where: str, reason: str
) -> None:
    growth = "with the product of its inputs' sizes" if len(positions) > 1 else "faster than its input's size"
    raise QueryRejected(
        f"{what} is not allowed here: PostgreSQL cannot interrupt {overload.name} while it runs and its time "
        f"grows {growth}; write {where} as a literal of at most {policy.max_bounded_literal_bytes} bytes "
        f"or a column of a granted table ({reason})",
        reason=RefusalReason.OPERATOR if what.startswith("operator") else RefusalReason.FUNCTION,
    )
