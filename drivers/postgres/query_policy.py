"""``QueryPolicy``: everything the guard decides from one database's catalog, built once per pool.

It joins the catalog snapshot, the function allowlist, the types a query may
name, the cost-bounded functions and the literal bound, and answers the
questions the operator analysis asks (``query_checks.py``): could a value of
these possible types feed that parameter, which implementations of an
operator or overloads of a function could PostgreSQL pick.

Possible types are ``type_matching.TypeSet`` s. Every answer errs towards
"possible": an implementation is left out only when PostgreSQL certainly
cannot pick it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from drivers.postgres.catalog_snapshot import CatalogSnapshot, FunctionOverload, OperatorInfo
from drivers.postgres.cost_bounded_functions import COST_BOUNDED_FUNCTIONS, SIZE_BOUNDED_BY_ARGUMENTS
from drivers.postgres.function_policy import FunctionPolicy
from drivers.postgres.type_matching import ANY_TYPE, POLYMORPHIC, TypeMatching, TypeSet, is_literal
from drivers.postgres.type_rules import nameable_types, reachable_types

DEFAULT_MAX_BOUNDED_LITERAL_BYTES: Final = 1024
"""Default ``max_bounded_literal_bytes``: two 1 KiB inputs cost about a million steps (milliseconds)."""

_MAX_REMEMBERED = 50_000
"""Pseudo-types a parameter or result may have whose actual type depends on the arguments."""


def resolve_signatures(catalog: CatalogSnapshot, table: Mapping[str, tuple[int, ...]]) -> dict[int, tuple[int, ...]]:
    """Function OID -> positions, for every key of ``table`` (``name(type, ...)`` or ``name``) in the catalog."""
    resolved: dict[int, tuple[int, ...]] = {}
    for key, positions in table.items():
        name, _, rest = key.partition("(")
        overloads = catalog.overloads.get(name.strip(), ())
        if rest:
            wanted = tuple(_type_oid(catalog, part.strip()) for part in rest.rstrip(")").split(",") if part.strip())
            overloads = tuple(o for o in overloads if o.arguments == wanted)
        resolved.update((overload.oid, positions) for overload in overloads)
    return resolved


def with_shared_implementations(
    catalog: CatalogSnapshot, resolved: Mapping[int, tuple[int, ...]]
) -> dict[int, tuple[int, ...]]:
    """``resolved`` plus every overload implemented by the same C function (``prosrc``) as one in it.

    ``like(text, text)``, ``textlike`` and the operator ``~~`` all run ``textlike``: a rule keyed by one
    name must hold for every alias, or the alias escapes it.
    """
    # Keyed by symbol and argument count (the C code reads its arguments by position); aggregates all
    # share the placeholder aggregate_dummy, so only plain functions count.
    by_source: dict[tuple[str, int], set[int]] = {}
    for oid, positions in resolved.items():
        overload = catalog.functions.get(oid)
        if overload is not None and overload.source and overload.kind == "f":
            by_source.setdefault((overload.source, len(overload.arguments)), set()).update(positions)
    expanded = dict(resolved)
    for overload in catalog.functions.values():
        key = (overload.source, len(overload.arguments))
        if overload.kind == "f" and key in by_source and overload.oid not in expanded:
            expanded[overload.oid] = tuple(sorted(by_source[key]))
    return expanded


def _type_oid(catalog: CatalogSnapshot, name: str) -> int:
    if name.endswith("[]"):
        element = catalog.type_named(name[:-2])
        return element.array if element is not None else 0
    return catalog.type_oids.get(name, 0)


@attrs.frozen(eq=False, repr=False)
class QueryPolicy:
    """What GetData queries against one database may do, decided from its catalog."""

    catalog: CatalogSnapshot
    """The database's pg_catalog types, functions, operators and implicit casts."""
    functions: FunctionPolicy
    """The function allowlist (built-in rules plus the operator's options)."""
    max_bounded_literal_bytes: int = DEFAULT_MAX_BOUNDED_LITERAL_BYTES
    """The most bytes of literal text one cost-bounded argument may hold."""
    nameable: frozenset[int] = attrs.field(init=False)
    """OIDs of the types a query may name (``type_rules.nameable_types``)."""
    reachable: frozenset[int] = attrs.field(init=False)
    """OIDs of the types a value in an allowed query can have (``type_rules.reachable_types``)."""
    cost_bounded: Mapping[int, tuple[int, ...]] = attrs.field(init=False)
    """Function OID -> cost-driving argument positions (``COST_BOUNDED_FUNCTIONS``)."""
    size_bounded: Mapping[int, tuple[int, ...]] = attrs.field(init=False)
    """Function OID -> size-carrying argument positions (``SIZE_BOUNDED_BY_ARGUMENTS``)."""
    matching: TypeMatching = attrs.field(init=False, repr=False)
    """Whether possible types could feed a parameter (``type_matching.py``)."""
    _verdict_cache: dict[tuple[str, str, Any], Any] = attrs.field(init=False, factory=dict, repr=False)
    """Answers by (question, name, operand types); queries choose the keys, so it is emptied when large."""

    def __attrs_post_init__(self) -> None:
        catalog = self.catalog
        nameable = nameable_types(catalog)
        allowed = (o for name in self.functions.allowed for o in catalog.overloads.get(name, ()))
        object.__setattr__(self, "nameable", nameable)
        object.__setattr__(self, "reachable", reachable_types(catalog, nameable, allowed))
        object.__setattr__(self, "matching", TypeMatching(catalog, self.reachable))
        cost_bounded = with_shared_implementations(catalog, resolve_signatures(catalog, COST_BOUNDED_FUNCTIONS))
        object.__setattr__(self, "cost_bounded", cost_bounded)
        object.__setattr__(self, "size_bounded", resolve_signatures(catalog, SIZE_BOUNDED_BY_ARGUMENTS))

    @classmethod
    def from_catalog(
        cls,
        catalog: CatalogSnapshot,
        *,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        max_bounded_literal_bytes: int = DEFAULT_MAX_BOUNDED_LITERAL_BYTES,
    ) -> QueryPolicy:
        """The policy for one database: its catalog plus the operator's options."""
        functions = FunctionPolicy.from_catalog(catalog, allow=allow, deny=deny)
        return cls(catalog, functions, max_bounded_literal_bytes)

    def nameable_type(self, name: str, array_depth: int = 0) -> int | None:
        """The OID a query's type name resolves to when the query may name it, else None."""
        info = self.catalog.type_named(name)
        if info is None or info.oid not in self.nameable:
            return None
        oid = info.oid
        if array_depth and not info.is_array:
            oid = info.array
        return oid if oid in self.nameable else None

    def _remembered(self, key: tuple[str, str, Any], compute: Callable[[], Any]) -> Any:
        cache = self._verdict_cache
        if key not in cache:
            if len(cache) >= _MAX_REMEMBERED:
                cache.clear()
            cache[key] = compute()
        return cache[key]

    def possible_operators(self, name: str, operands: tuple[TypeSet, ...]) -> tuple[OperatorInfo, ...]:
        """The pg_catalog implementations of operator ``name`` PostgreSQL could pick for these operands."""

        def compute() -> tuple[OperatorInfo, ...]:
            candidates = self.catalog.operators.get((name, len(operands)), ())
            signatures = [((op.right,) if len(operands) == 1 else (op.left, op.right), op) for op in candidates]
            return self._narrow(signatures, operands)

        return self._remembered(("operators", name, operands), compute)

    def refused_operator(self, name: str, operands: tuple[TypeSet, ...]) -> OperatorInfo | None:
        """The first possible implementation whose function the policy refuses, if any."""

        def compute() -> OperatorInfo | None:
            refused = [op for op in self.possible_operators(name, operands) if not self._implemented_by_allowed(op)]
            return refused[0] if refused else None

        return self._remembered(("refused", name, operands), compute)

    def costly_operators(self, name: str, operands: tuple[TypeSet, ...]) -> tuple[OperatorInfo, ...]:
        """The possible implementations whose function is cost-bounded (``COST_BOUNDED_FUNCTIONS``)."""
        return self._remembered(("costly", name, operands), lambda: tuple(
            op for op in self.possible_operators(name, operands) if op.function in self.cost_bounded
        ))

    def _implemented_by_allowed(self, operator: OperatorInfo) -> bool:
        overload = self.catalog.functions.get(operator.function)
        return overload is not None and self.functions.allows(overload.name)

    def possible_overloads(
        self, name: str, arguments: Sequence[TypeSet], *, variadic_call: bool = False, named: bool = False
    ) -> tuple[FunctionOverload, ...]:
        """The overloads of pg_catalog function ``name`` PostgreSQL could pick for these arguments."""
        return self._remembered(
            ("overloads", name, (tuple(arguments), variadic_call, named)),
            lambda: self._possible_overloads(name, arguments, variadic_call, named),
        )

    def _possible_overloads(
        self, name: str, arguments: Sequence[TypeSet], variadic_call: bool, named: bool
    ) -> tuple[FunctionOverload, ...]:
        count = len(arguments)
        overloads = self.catalog.overloads.get(name, ())
        candidates = [o for o in overloads if o.accepts_argument_count(count, variadic_call=variadic_call)]
        if named or not candidates:
            return tuple(candidates or overloads)
        signatures = [
            (tuple(o.parameter_types(i, count, variadic_call=variadic_call) for i in range(count)), o)
            for o in candidates
        ]
        exact = self._exact([(tuple(c[0] for c in params), o) for params, o in signatures if all(
            len(c) == 1 for c in params)], tuple(arguments), operator=False)
        if exact:
            return exact
        possible = [o for params, o in signatures if all(
            any(self.matching.feeds(types, p) for p in choices) for types, choices in zip(arguments, params)
        )]
        if possible and all(is_literal(types) for types in arguments):
            possible = self._prefer_strings([(tuple(c[0] for c in s), o) for s, o in signatures if o in possible])
        return tuple(possible or candidates)

    def _exact(self, signatures: list, operands: tuple[TypeSet, ...], *, operator: bool) -> tuple | None:
        """PostgreSQL's first rule: a candidate whose parameters are exactly the operands' types wins.

        Applies only when every operand has one known type; for an operator an
        untyped literal beside a typed operand is taken to have that type.
        """
        concrete = [next(iter(t)) if len(t) == 1 and next(iter(t)) >= 0 else None for t in operands]
        if operator and len(operands) == 2 and concrete.count(None) == 1:
            known = concrete[0] if concrete[0] is not None else concrete[1]
            literal = operands[concrete.index(None)]
            if is_literal(literal):
                concrete = [known, known]
        known_types = [oid for oid in concrete if oid is not None]
        if len(known_types) != len(concrete):
            return None
        wanted = tuple(self._base_type(oid) for oid in known_types)
        exact = tuple(item for params, item in signatures if tuple(params) == wanted)
        return exact or None

    def _base_type(self, oid: int) -> int:
        info = self.catalog.types.get(oid)
        return info.base if info is not None and info.kind == "d" and info.base else oid

    def _narrow(self, signatures: list, operands: tuple[TypeSet, ...]) -> tuple:
        exact = self._exact(signatures, operands, operator=True)
        if exact:
            return exact
        possible = [(params, item) for params, item in signatures
                    if all(self.matching.feeds(types, p) for types, p in zip(operands, params))]
        if possible and all(is_literal(types) for types in operands):
            return tuple(self._prefer_strings(possible))
        return tuple(item for _, item in possible) or tuple(item for _, item in signatures)

    def _prefer_strings(self, possible: list) -> list:
        """PostgreSQL reads all-untyped arguments as strings where some candidate takes a string there."""
        types = self.catalog.types
        width = len(possible[0][0]) if possible else 0
        string_positions = [
            i for i in range(width)
            if any(types.get(params[i]) is not None and types[params[i]].category == "S" for params, _ in possible)
        ]
        preferred = [item for params, item in possible if all(
            types.get(params[i]) is not None and types[params[i]].category == "S" for i in string_positions
        )]
        return preferred or [item for _, item in possible]

    def result_types(self, results: Iterable[int]) -> TypeSet:
        """The possible types of a call's value, given its candidates' declared result types."""
        found: set[int] = set()
        for oid in results:
            info = self.catalog.types.get(oid)
            if info is None or (info.kind == "p" and info.name in POLYMORPHIC - {"record"}):
                return ANY_TYPE
            found.add(oid)
        return frozenset(found) or ANY_TYPE

    def is_fixed_length(self, types: TypeSet) -> bool:
        """True when every possible type is a fixed-length type (a number, date, boolean, point...)."""
        return bool(types) and all(
            oid in self.catalog.types and self.catalog.types[oid].length > 0 for oid in types
        )
