"""Which function or operator a call resolves to, as PostgreSQL's ``parse_func.c`` and ``parse_oper.c`` decide.

``Resolver.function`` is ``func_get_detail`` (with ``FuncnameGetCandidates``
and ``func_select_candidate``): the exact match first, then a function-style
cast, then the candidates the arguments can reach by implicit coercion,
narrowed by PostgreSQL's heuristics (most exact matches, preferred types,
the category of unknown literals, one known type for all unknowns).
``Resolver.operator`` is ``oper``/``left_oper`` (``binary_oper_exact`` and
``oper_select_candidate``). Only ``pg_catalog`` is searched: GetData
sessions run with ``search_path=pg_catalog``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import attrs

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.coercion import Coercions, Context, Path
from drivers.postgres.guard.model.types import RECORD, UNKNOWN, FunctionInfo, OperatorInfo


class Outcome(enum.Enum):
    """``FuncDetailCode``."""

    NOT_FOUND = "not found"
    MULTIPLE = "multiple"
    NORMAL = "normal"
    AGGREGATE = "aggregate"
    WINDOW = "window"
    PROCEDURE = "procedure"
    COERCION = "coercion"


@attrs.frozen
class Candidate:
    """One way a call could be read (``_FuncCandidateList``)."""

    function: FunctionInfo | None
    """The function; None when two functions give the same effective signature (ambiguous)."""
    arguments: tuple[int, ...]
    """The parameter type at each argument position of the call (variadic expanded, named reordered)."""
    variadic_count: int = 0
    """How many call arguments feed the variadic parameter (``nvargs``)."""
    defaulted: int = 0
    """How many trailing parameters take their defaults (``ndargs``)."""
    argument_numbers: tuple[int, ...] | None = None
    """For a named call: the parameter number of each call argument, then of each defaulted parameter."""


@attrs.frozen
class FunctionChoice:
    """What ``func_get_detail`` answers."""

    outcome: Outcome
    """Found (and what kind), not found, ambiguous, or a function-style cast."""
    function: FunctionInfo | None = None
    """The chosen function."""
    declared: tuple[int, ...] = ()
    """The declared parameter types at the call's positions, defaulted parameters appended."""
    variadic_count: int = 0
    """Arguments gathered into the variadic array."""
    cast_target: int = 0
    """For a function-style cast: the type cast to."""


_KINDS = {"a": Outcome.AGGREGATE, "f": Outcome.NORMAL, "p": Outcome.PROCEDURE, "w": Outcome.WINDOW}


class Resolver:
    """Function and operator resolution over one catalog."""

    def __init__(self, catalog: Catalog, coercions: Coercions) -> None:
        self.catalog = catalog
        self.coercions = coercions

    # Functions -----------------------------------------------------------------------------------------

    def candidates(self, name: str, count: int, names: Sequence[str], *, expand_variadic: bool) -> list[Candidate]:
        """``FuncnameGetCandidates`` over pg_catalog (defaults always expanded, OUT arguments never)."""
        found: list[Candidate] = []
        any_special = False
        for function in self.catalog.functions_by_name.get(name, ()):
            parameters = function.arguments
            declared = len(parameters)
            numbers: tuple[int, ...] | None = None
            variadic = False
            if names:
                if function.variadic and expand_variadic:
                    continue
                use_defaults = declared > count
                if use_defaults and count + function.defaults < declared:
                    continue
                if declared != count and not use_defaults:
                    continue
                numbers = _match_named_call(function, count, names)
                if numbers is None:
                    continue
                any_special = True
            else:
                if declared <= count and expand_variadic and function.variadic:
                    variadic = True
                    any_special = True
                use_defaults = declared > count
                if use_defaults:
                    if count + function.defaults < declared:
                        continue
                    any_special = True
                if declared != count and not variadic and not use_defaults:
                    continue
            effective = max(declared, count)
            if numbers is not None:
                arguments = [parameters[n] for n in numbers]
            else:
                arguments = list(parameters)
            variadic_count = 0
            if variadic:
                variadic_count = effective - declared + 1
                arguments = arguments[: declared - 1] + [function.variadic] * variadic_count
            candidate = Candidate(function, tuple(arguments), variadic_count,
                                  declared - count if use_defaults else 0, numbers)
            found = _merge_candidate(found, candidate, any_special)
        return found

    def function(self, name: str, argument_types: Sequence[int], names: Sequence[str], *,
                 expand_variadic: bool, first_is_literal: bool) -> FunctionChoice:
        """``func_get_detail``: which function ``name(arguments)`` calls, or why none."""
        count = len(argument_types)
        types = tuple(argument_types)
        raw = self.candidates(name, count, names, expand_variadic=expand_variadic)
        best = next((c for c in raw if c.arguments[:count] == types), None)
        if best is None:
            if count == 1 and not names:
                target = self._function_style_cast(name, types[0], first_is_literal)
                if target:
                    return FunctionChoice(Outcome.COERCION, cast_target=target)
            if raw:
                matching = [c for c in raw if self.coercions.can_coerce(types, c.arguments[:count])]
                if len(matching) == 1:
                    best = matching[0]
                elif len(matching) > 1:
                    best = self.select_candidate(types, matching)
                    if best is None:
                        return FunctionChoice(Outcome.MULTIPLE)
        if best is None:
            return FunctionChoice(Outcome.NOT_FOUND)
        if best.function is None:
            return FunctionChoice(Outcome.MULTIPLE)
        if names and not expand_variadic and count and best.argument_numbers is not None \
                and best.argument_numbers[count - 1] != count - 1:
            return FunctionChoice(Outcome.NOT_FOUND)
        function = best.function
        declared = list(best.arguments)
        if best.defaulted:
            # The default expressions' types: built-in defaults are written in their parameter's type.
            if best.argument_numbers is not None:
                declared = declared[:count] + [function.arguments[n] for n in best.argument_numbers[count:]]
        return FunctionChoice(_KINDS.get(function.kind, Outcome.NORMAL), function, tuple(declared),
                              best.variadic_count)

    def _function_style_cast(self, name: str, source: int, first_is_literal: bool) -> int:
        """The type ``name(x)`` casts to when it is read as a cast (``FuncNameAsType`` and its rules), or 0."""
        target_info = self.catalog.types_by_name.get(name)
        if target_info is None or target_info.relation:  # FuncNameAsType: no relation's row type
            return 0
        target = target_info.oid
        if source == UNKNOWN and first_is_literal:
            return target
        path, _ = self.coercions.pathway(target, source, Context.EXPLICIT)
        if path is Path.RELABEL:
            return target
        if path is Path.IO:
            if (source == RECORD or self.catalog.is_complex(source)) and self.catalog.category(target) == "S":
                return 0
            return target
        return 0

    def select_candidate(self, inputs: Sequence[int], candidates: list[Candidate]) -> Candidate | None:
        """``func_select_candidate``: PostgreSQL's heuristics to pick one of several candidates, or None."""
        catalog = self.catalog
        count = len(inputs)
        bases = [UNKNOWN if t == UNKNOWN else catalog.base_type(t) for t in inputs]
        unknowns = bases.count(UNKNOWN)

        def keep_best(score: object) -> list[Candidate]:
            best, kept = -1, []
            for candidate in candidates:
                value = score(candidate)  # type: ignore[operator]
                if value > best:
                    best, kept = value, [candidate]
                elif value == best:
                    kept.append(candidate)
            return kept

        candidates = keep_best(lambda c: sum(1 for i in range(count)
                                             if bases[i] != UNKNOWN and c.arguments[i] == bases[i]))
        if len(candidates) == 1:
            return candidates[0]
        categories = [catalog.category(t) for t in bases]
        candidates = keep_best(lambda c: sum(
            1 for i in range(count) if bases[i] != UNKNOWN and (
                c.arguments[i] == bases[i]
                or (catalog.is_preferred(c.arguments[i]) and catalog.category(c.arguments[i]) == categories[i]))))
        if len(candidates) == 1:
            return candidates[0]
        if unknowns == 0:
            return None
        slot_category: dict[int, str] = {}
        slot_preferred: dict[int, bool] = {}
        resolved = True
        for i in range(count):
            if bases[i] != UNKNOWN:
                continue
            category, preferred, conflict = "", False, False
            for candidate in candidates:
                current, current_preferred = catalog.category(candidate.arguments[i]), \
                    catalog.is_preferred(candidate.arguments[i])
                if not category:
                    category, preferred = current, current_preferred
                elif current == category:
                    preferred |= current_preferred
                elif current == "S":
                    category, preferred = current, current_preferred
                else:
                    conflict = True
            if conflict and category != "S":
                resolved = False
                break
            slot_category[i], slot_preferred[i] = category, preferred
        if resolved:
            kept = [c for c in candidates if all(
                catalog.category(c.arguments[i]) == slot_category[i]
                and (not slot_preferred[i] or catalog.is_preferred(c.arguments[i]))
                for i in slot_category)]
            if kept:
                candidates = kept
            if len(candidates) == 1:
                return candidates[0]
        if unknowns < count:
            known = {t for t in bases if t != UNKNOWN}
            if len(known) == 1:
                (only,) = known
                assumed = (only,) * count
                matching = [c for c in candidates if self.coercions.can_coerce(assumed, c.arguments[:count])]
                if len(matching) == 1:
                    return matching[0]
        return None

    # Operators -----------------------------------------------------------------------------------------

    def operator(self, name: str, left: int | None, right: int) -> tuple[OperatorInfo | None, Outcome]:
        """``oper`` (``left`` given) or ``left_oper`` (``left`` None): the operator, or why none."""
        catalog = self.catalog
        operators = catalog.operators_by_name.get((name, "b" if left is not None else "l"), ())
        if left is None:
            exact = next((o for o in operators if o.right == right), None)
            if exact is not None:
                return exact, Outcome.NORMAL
            return self._select_operator((right,), [(o, (o.right,)) for o in operators])
        exact = self._binary_exact(operators, left, right)
        if exact is not None:
            return exact, Outcome.NORMAL
        return self._select_operator((left, right), [(o, (o.left, o.right)) for o in operators])

    def _binary_exact(self, operators: Sequence[OperatorInfo], left: int, right: int) -> OperatorInfo | None:
        was_unknown = False
        if left == UNKNOWN and right:
            left, was_unknown = right, True
        elif right == UNKNOWN and left:
            right, was_unknown = left, True
        found = next((o for o in operators if o.left == left and o.right == right), None)
        if found is None and was_unknown:
            base = self.catalog.base_type(left)
            if base != left:
                found = next((o for o in operators if o.left == base and o.right == base), None)
        return found

    def _select_operator(self, inputs: tuple[int, ...], operators: list[tuple[OperatorInfo, tuple[int, ...]]]
                         ) -> tuple[OperatorInfo | None, Outcome]:
        if not operators:
            return None, Outcome.NOT_FOUND
        by_candidate = {}
        candidates = []
        for operator, arguments in operators:
            candidate = Candidate(None, arguments)
            candidates.append(candidate)
            by_candidate[id(candidate)] = operator
        matching = [c for c in candidates if self.coercions.can_coerce(inputs, c.arguments)]
        if not matching:
            return None, Outcome.NOT_FOUND
        if len(matching) == 1:
            return by_candidate[id(matching[0])], Outcome.NORMAL
        chosen = self.select_candidate(inputs, matching)
        if chosen is None:
            return None, Outcome.MULTIPLE
        return by_candidate[id(chosen)], Outcome.NORMAL


def _match_named_call(function: FunctionInfo, count: int, names: Sequence[str]) -> tuple[int, ...] | None:
    """``MatchNamedCall``: the parameter number of each call argument (then of defaulted ones), or None."""
    if not function.argument_names:
        return None
    parameters = len(function.arguments)
    positional = count - len(names)
    input_names = function.input_names()
    given = [False] * parameters
    numbers = list(range(positional))
    for position in range(positional):
        given[position] = True
    for name in names:
        if name not in input_names:
            return None
        number = input_names.index(name)
        if number >= parameters or given[number]:
            return None
        given[number] = True
        numbers.append(number)
    if count < parameters:
        first_default = parameters - function.defaults
        for number in range(positional, parameters):
            if given[number]:
                continue
            if number < first_default:
                return None
            numbers.append(number)
    return tuple(numbers)


def _merge_candidate(found: list[Candidate], candidate: Candidate, any_special: bool) -> list[Candidate]:
    """Add ``candidate`` unless an earlier one has the same effective arguments (PostgreSQL's preferences)."""
    if not found or not any_special:
        return [*found, candidate]
    compared = len(candidate.arguments) - candidate.defaulted
    for index, previous in enumerate(found):
        if compared == len(previous.arguments) - previous.defaulted \
                and candidate.arguments[:compared] == previous.arguments[:compared]:
            break
    else:
        return [*found, candidate]
    if candidate.variadic_count and not previous.variadic_count:
        return found  # prefer foo(numeric) over foo(VARIADIC numeric[])
    if not candidate.variadic_count and previous.variadic_count:
        return found[:index] + found[index + 1:] + [candidate]
    found[index] = attrs.evolve(previous, function=None)  # cannot decide: ambiguous
    return found
