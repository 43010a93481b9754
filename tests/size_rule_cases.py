"""The size rules' test cases: calls of every function ``RULES`` names, casts and literals, each a SELECT of one
column whose value the guard bounds by a rule (or by the literal and cast paths of ``sizes.py``).

Calls are made for every overload the server has of each name (``pg_proc``), polymorphic ones instantiated,
with seeded random constants from ``size_rule_palette`` and the hints and hand-written worst cases of
``size_rule_hints``. Aggregates read ``VALUES`` lists or ``generate_series`` rows; window functions read
``VALUES`` in order; ordered-set aggregates take their direct arguments as constants. Nothing here checks
that the server accepts a case: the checker counts what it refuses.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from size_rule_hints import HINTS, WORST
from size_rule_palette import (
    ARRAY_ELEMENT_TYPES, CAST_NAMES, POLYMORPHIC_ELEMENTS, Palette, element_types, instantiate,
)
from size_rule_values import sql_literal

CALLS_PER_OVERLOAD = 40
"""Random calls per overload (duplicates dropped); several hundred overloads make some twenty thousand cases."""
CALLS_PER_ELEMENT_TYPE = 6
"""Calls of a polymorphic overload per element type (``to_json`` of text, of jsonb, of arrays...)."""
CALLS_OF_ANY = 120
"""Calls of an overload taking ``"any"`` (``concat``, ``format``, ``json_build_object``): each argument's type
is drawn apart."""
AGGREGATE_ROWS = (1, 2, 5, 30)
SERIES_ROWS = (1, 3, 50, 300)
TYPMOD_CASTS = (("character varying(5)", "text"), ("character(100)", "text"), ("character(3000)", "text"),
                ("numeric(10,2)", "numeric"), ("numeric(1000,500)", "numeric"), ("bit(8)", "bit"),
                ("bit varying(5)", "bit"), ("timestamp(0) with time zone", "timestamp with time zone"),
                ("interval(2)", "interval"), ("time(1) with time zone", "time with time zone"))
"""Casts with a type modifier, and the type whose texts they read."""
RECORD_COLUMNS = "(a text, b jsonb, c numeric)"
"""The column definition list of a set-returning function that returns ``record``."""


@dataclass(frozen=True)
class Case:
    """One SELECT of one column; ``rule`` is the rule it checks (a function name, ``cast:<type>``,
    ``literal:<type>``, ``rows:<name>``)."""

    rule: str
    sql: str


@dataclass(frozen=True)
class Overload:
    """One ``pg_proc`` entry of a size-ruled name."""

    name: str
    kind: str
    """``f`` function, ``a`` aggregate, ``w`` window function."""
    returns_set: bool
    arguments: tuple[str, ...]
    variadic: str | None
    """The element type of a VARIADIC last argument."""
    defaults: int
    returns_record: bool
    """True when it returns ``record`` without OUT parameters (a call in FROM needs a column list)."""
    aggregate_kind: str
    """``n`` normal, ``o`` ordered-set, ``h`` hypothetical-set; empty for a function."""
    direct_arguments: int

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Overload:
        name, kind, returns_set, arguments, variadic, defaults, returns_record, aggregate_kind, direct = row
        return cls(name, kind, returns_set, tuple(arguments), variadic, defaults, returns_record, aggregate_kind,
                   direct)


OVERLOADS_SQL = """
SELECT p.proname, p.prokind, p.proretset,
       ARRAY(SELECT format_type(a.t, NULL) FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, n) ORDER BY a.n),
       CASE WHEN p.provariadic <> 0 THEN format_type(p.provariadic, NULL) END, p.pronargdefaults,
       p.prorettype = 'record'::regtype AND p.proallargtypes IS NULL, coalesce(g.aggkind::text, ''),
       coalesce(g.aggnumdirectargs, 0)
  FROM pg_proc p LEFT JOIN pg_aggregate g ON g.aggfnoid = p.oid
 WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname = ANY(%s)
 ORDER BY p.proname, p.oid
"""


class CaseMaker:
    """Makes the cases of each rule, deterministically from one seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.palette = Palette(self.rng)

    # Calls -----------------------------------------------------------------------------------------------

    def call_cases(self, overloads: list[Overload], row_rules: set[str]) -> list[Case]:
        """Calls of every overload; those of a set-returning function with a row rule also in FROM
        (``rows:<name>``), where the rows it makes are what the query reads."""
        cases: list[Case] = []
        for overload in overloads:
            for element, count in self._plan(overload):
                seen: set[str] = set()
                for _ in range(count * 2):
                    sql = self._call(overload, element)
                    if sql is not None and sql not in seen:
                        seen.add(sql)
                        cases.extend(self._cases_of(overload, sql, row_rules))
                    if len(seen) >= count:
                        break
        for name, expressions in WORST.items():
            cases.extend(Case(name, e if e.startswith("SELECT ") else f"SELECT {e}") for e in expressions)
        return cases

    @staticmethod
    def _plan(overload: Overload) -> list[tuple[str | None, int]]:
        """How many calls to make with which element type."""
        arguments = overload.arguments
        if POLYMORPHIC_ELEMENTS.intersection(arguments):
            return [(element, CALLS_PER_ELEMENT_TYPE) for element in element_types(arguments)]
        if '"any"' in arguments:
            return [(None, CALLS_OF_ANY)]
        return [(None, CALLS_PER_OVERLOAD)]

    @staticmethod
    def _cases_of(overload: Overload, sql: str, row_rules: set[str]) -> list[Case]:
        """The call in the select list (its size rule); in FROM too where a row rule bounds its rows."""
        found = [] if overload.returns_record else [Case(overload.name, sql)]
        if overload.returns_set and overload.name in row_rules:
            columns = RECORD_COLUMNS if overload.returns_record else ""
            found.append(Case(f"rows:{overload.name}", f"SELECT 1 FROM {sql.removeprefix('SELECT ')} AS f{columns}"))
        return found

    def _call(self, overload: Overload, element: str | None = None) -> str | None:
        rng = self.rng
        types = instantiate(overload.arguments, rng, element)
        if types is None:
            return None
        variadic_array = None
        if overload.variadic is not None and types:
            if rng.random() < 0.2 and overload.variadic != '"any"':
                variadic_array = types[-1]  # VARIADIC '{...}'::text[]
                types = types[:-1]
            else:
                spread = instantiate((overload.variadic,) * rng.choice((0, 1, 2, 3, 5)), rng) or ()
                types = types[:-1] + spread
        elif overload.defaults and rng.random() < 0.4:
            types = types[:len(types) - rng.randint(1, overload.defaults)]
        arguments = [self._argument(overload.name, position, type_name) for position, type_name in enumerate(types)]
        if variadic_array is not None:
            values = self.palette.values(variadic_array)
            arguments.append("VARIADIC " + rng.choice(values) if values else None)
        if any(argument is None for argument in arguments):
            return None
        return self._render(overload, [a for a in arguments if a is not None])

    def _argument(self, name: str, position: int, type_name: str) -> str | None:
        hint = HINTS.get(name, {}).get(position)
        if hint is not None and type_name not in ("unknown", "record"):
            return Palette.constant(self.rng.choice(hint), type_name)
        values = self.palette.values(type_name)
        return self.rng.choice(values) if values else None

    def _render(self, overload: Overload, arguments: list[str]) -> str | None:
        function = f"pg_catalog.{overload.name}"
        if overload.kind == "f":
            return f"SELECT {function}({', '.join(arguments)})"
        if overload.kind == "w":
            return self._window(overload, function, arguments)
        if overload.aggregate_kind == "o":
            direct, ordered = arguments[:overload.direct_arguments], arguments[overload.direct_arguments:]
            rows = self._rows_of(ordered, overload)
            columns = ", ".join(f"t.c{i + 1}" for i in range(len(ordered)))
            return f"SELECT {function}({', '.join(direct)}) WITHIN GROUP (ORDER BY {columns}) FROM {rows}"
        if overload.aggregate_kind == "n":
            if self.rng.random() < 0.4:
                return (f"SELECT {function}({', '.join(arguments)}) "
                        f"FROM generate_series(1, {self.rng.choice(SERIES_ROWS)})")
            columns = ", ".join(f"t.c{i + 1}" for i in range(len(arguments)))
            return f"SELECT {function}({columns}) FROM {self._rows_of(arguments, overload)}"
        return None

    def _rows_of(self, first: list[str], overload: Overload) -> str:
        """``(VALUES ...) AS t(c1, ...)``: the first row is ``first``, the others fresh values of the same types."""
        if not first:
            return "(VALUES (1)) AS t(c0)"
        types = [_type_of(value) for value in first]
        rows = [first] + [[self._value_like(value, type_name, overload.name, i) for i, (value, type_name) in
                           enumerate(zip(first, types))] for _ in range(self.rng.choice(AGGREGATE_ROWS) - 1)]
        body = ", ".join("(" + ", ".join(row) + ")" for row in rows)
        return f"(VALUES {body}) AS t({', '.join(f'c{i + 1}' for i in range(len(first)))})"

    def _value_like(self, value: str, type_name: str | None, name: str, position: int) -> str:
        if type_name is None:
            return value
        found = self._argument(name, position, type_name)
        return found if found is not None else value

    def _window(self, overload: Overload, function: str, arguments: list[str]) -> str | None:
        if not arguments:
            return None
        type_name = _type_of(arguments[0])
        values = [arguments[0]] + [self._value_like(arguments[0], type_name, overload.name, 0)
                                   for _ in range(self.rng.choice(AGGREGATE_ROWS) - 1)]
        body = ", ".join(f"({n}, {value})" for n, value in enumerate(values))
        rest = "".join(f", {a}" for a in arguments[1:])
        return f"SELECT {function}(t.c1{rest}) OVER (ORDER BY t.n) FROM (VALUES {body}) AS t(n, c1)"

    # Casts and literals ----------------------------------------------------------------------------------

    def literal_cases(self) -> list[Case]:
        """Every palette text as a literal of its type and as text cast to it; arrays, typmods, bare numbers."""
        cases: list[Case] = []
        palette = self.palette
        for type_name, texts in palette.texts.items():
            cast = CAST_NAMES.get(type_name, type_name)
            for text in texts:
                cases.append(Case(f"literal:{type_name}", f"SELECT {Palette.constant(text, type_name)}"))
                cases.append(Case(f"cast:{type_name}", f"SELECT CAST({sql_literal(text)}::text AS {cast})"))
        for element in ARRAY_ELEMENT_TYPES + ("json",):
            for value in palette.values(f"{element}[]"):
                cases.append(Case(f"literal:{element}[]", f"SELECT {value}"))
                text = value.rsplit("::", 1)[0]
                cases.append(Case(f"cast:{element}[]", f"SELECT CAST({text}::text AS {value.rsplit('::', 1)[1]})"))
            scalars = [v for v in palette.values(element) if not v.startswith("NULL")]
            for count in (1, 2, 5, 20):
                items = ", ".join(self.rng.choice(scalars) for _ in range(count))
                cases.append(Case("array-constructor", f"SELECT ARRAY[{items}]"))
                cases.append(Case("array-constructor", f"SELECT ARRAY[ARRAY[{items}], ARRAY[{items}]]"))
        for text in palette.texts["numeric"]:
            if re.fullmatch(r"\d+(\.\d*)?(e-?\d+)?", text):
                cases.append(Case("literal:numeric", f"SELECT {text}"))
        for target, source in TYPMOD_CASTS:
            for text in palette.texts[source]:
                cases.append(Case(f"cast:{target}", f"SELECT CAST({sql_literal(text)}::text AS {target})"))
        for text in ("0", "7", "2147483647", "2147483648", "9223372036854775807", "9223372036854775808"):
            cases.append(Case("literal:integer", f"SELECT {text}"))
        for record in palette.records:
            cases.append(Case("row-constructor", f"SELECT {record}"))
        return cases


def _type_of(value: str) -> str | None:
    """The type a palette constant is cast to (``'x'::text`` -> ``text``), None for other forms."""
    match = re.search(r"::([\w\" ]+(?:\[\])?)$", value)
    return match.group(1) if match else None
