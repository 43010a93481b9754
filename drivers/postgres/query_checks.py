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
   operator, or reading a cast's text), its cost-driving arguments are
   bounded (``plain_arguments.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from drivers.postgres.catalog_snapshot import FunctionOverload
from drivers.postgres.expression_types import ExpressionTypes, call_arguments, unwrap
from drivers.postgres.sql_names import builtin_name_of
from drivers.postgres.plain_arguments import ArgumentBounds
from drivers.postgres.query_policy import QueryPolicy
from drivers.postgres.type_matching import ANY, ANY_TYPE, UNKNOWN, UNKNOWN_TEXT, TypeSet
from drivers.postgres.query_sites import OperatorSite, Scope
from drivers.postgres.select_walker import SelectTreeWalker
from drivers.postgres.sql_names import display_name
from drivers.postgres.type_rules import CATALOG_LOOKUP_TYPES, PLUMBING_TYPES, REFUSED_TO_NAME, TEXT_SEARCH_LOOKUP_TYPES
from gateway.errors import QueryRejected, RefusalReason

_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNTYPED = frozenset({ANY, UNKNOWN, UNKNOWN_TEXT})


def check_against_catalog(walker: SelectTreeWalker, policy: QueryPolicy) -> None:
    """Raise ``QueryRejected`` unless what ``walker`` recorded keeps to ``policy``."""
    for type_name in walker.type_names:
        _check_type_name(type_name, policy)
    _check_function_names(walker, policy)
    types = ExpressionTypes(policy, frozenset(walker.other_names))
    bounds = ArgumentBounds(policy, types, walker.table_names, walker.other_names)
    for call, _ in walker.calls:
        _check_text_search_literals(call, policy, types)
    for site in walker.operator_sites:
        _check_operator(site, policy, types)
    for call, scope in walker.calls:
        # A cast first: typename(x) with no overload taking x exactly is a cast, whatever else it might be.
        _check_function_style_cast(call, scope, policy, types, bounds)
        _check_call_costs(call, scope, policy, types, bounds)
    for call, scope in walker.attribute_calls:
        if walker.is_known_column(call):
            continue
        if policy.catalog.overloads.get(_called_name(call)) or policy.catalog.type_named(_called_name(call)):
            # x.name may be name(x): checked as that call wherever x could have no such column.
            _check_call_costs(call, scope, policy, types, bounds)
            _check_function_style_cast(call, scope, policy, types, bounds)
    for cast, scope in walker.casts:
        _check_cast_cost(cast, scope, policy, types, bounds)
    for expression, type_names, scope in walker.column_definitions:
        _check_column_definitions(expression, type_names, scope, policy, types, bounds)
    for site in walker.operator_sites:
        _check_operator_costs(site, policy, types, bounds)


def _called_name(call: dict) -> str:
    return str(call["funcname"][-1]["String"]["sval"])


def _check_type_name(type_name: dict, policy: QueryPolicy) -> None:
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


def _operand_types(site: OperatorSite, types: ExpressionTypes) -> tuple[TypeSet, ...]:
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


def _check_operator(site: OperatorSite, policy: QueryPolicy, types: ExpressionTypes) -> None:
    operand_types = _operand_types(site, types)
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


def _check_call_costs(
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


def _check_cast_cost(
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


def _check_column_definitions(
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


def _check_function_style_cast(
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
        _check_type_name({"names": call["funcname"]}, policy)
    _check_reading_cost(frozenset({info.oid}), arguments[0], scope, policy, bounds)


def _check_operator_costs(
    site: OperatorSite, policy: QueryPolicy, types: ExpressionTypes, bounds: ArgumentBounds
) -> None:
    operand_types = _operand_types(site, types)
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
