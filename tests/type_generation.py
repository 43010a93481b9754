"""Thousands of SELECT statements, deterministic for a seed, whose result types the guard's model must know.

``generate(connection)`` reads the live catalog of a database that holds the fixture schema
(``type_fixture.sql``): ``pg_proc``, ``pg_operator``, ``pg_type``, ``pg_cast``, ``pg_range`` and the
fixture's columns (a ``Palette``), and asks each construct family's maker for its statements. A maker gets
its own ``random.Random`` seeded from the seed and the family's name, so one family's change leaves the
others' statements as they were. A statement's ``id`` is its family and a hash of its text: ids stay put
when statements are added or reordered, so ``type_disagreements.toml`` can name one.

Many statements are errors on the server (no such function, not unique, cannot be matched): they are kept
on purpose, since the model must say that they are errors too.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import psycopg2.extensions

from type_palette import Palette

DEFAULT_SEED = 19
"""The seed of the statements the test compares; another seed gives another, equally covering, set."""


@dataclass(frozen=True)
class Generated:
    """One generated statement and the construct family it exercises."""

    family: str
    sql: str

    @property
    def id(self) -> str:
        """``family:hash``: stable while the statement's text is."""
        return f"{self.family}:{hashlib.sha1(self.sql.encode()).hexdigest()[:10]}"


Maker = Callable[[Palette, random.Random], list[str]]


def makers() -> dict[str, Maker]:
    """Every construct family, in report order, with the function that writes its statements."""
    import type_generation_aggregates as aggregates
    import type_generation_calls as calls
    import type_generation_exprs as exprs
    import type_generation_queries as queries

    return {
        "function": calls.functions,
        "polymorphic": calls.polymorphic,
        "variadic_named_default": calls.variadic_named_default,
        "function_cast": calls.function_casts,
        "operator": calls.operators,
        "predicate": exprs.predicates,
        "conditional": exprs.conditionals,
        "array_row": exprs.arrays_and_rows,
        "cast": exprs.casts,
        "special_syntax": exprs.special_syntax,
        "set_operation": queries.set_operations,
        "from_clause": queries.from_clauses,
        "subquery": queries.subqueries,
        "aggregate": aggregates.aggregates,
        "ordered_set": aggregates.ordered_sets,
        "window": aggregates.windows,
        "scope": queries.scopes,
    }


def generate(
    connection: psycopg2.extensions.connection, seed: int = DEFAULT_SEED, families: Sequence[str] | None = None
) -> list[Generated]:
    """The statements of every family (or of ``families``), each text once, in family order."""
    palette = Palette.read(connection)
    return generate_from(palette, seed, families)


def generate_from(palette: Palette, seed: int = DEFAULT_SEED, families: Sequence[str] | None = None) -> list[Generated]:
    """``generate`` over a palette already read."""
    all_makers = makers()
    unknown = set(families or ()) - set(all_makers)
    if unknown:
        raise ValueError(f"no such construct family: {sorted(unknown)}; there are {list(all_makers)}")
    seen: set[str] = set()
    statements: list[Generated] = []
    for family, maker in all_makers.items():
        if families is not None and family not in families:
            continue
        for sql in maker(palette, random.Random(f"{seed}:{family}")):
            if sql not in seen:
                seen.add(sql)
                statements.append(Generated(family, sql))
    return statements
