"""Upper bounds on sizes, numbers and row counts, in terms of the query's constants and the administrator's data.

A ``Bound`` says: at most ``fixed + stored + data x D``.

- ``fixed``: bytes (or a count) the query's own constants make: a literal, ``repeat('a', 1000)``;
- ``stored``: bytes of stored values whose type bounds them (an integer column prints at most 20
  characters): the administrator's data, of a known size;
- ``data``: how many times the value may hold ``D``, the administrator's data of unknown size (a text
  column, an aggregate over a table, a table's row count): trusted, never capped, but never multiplied
  by more than the query says;
- ``unknown``: no rule bounds the value: it may be as large as PostgreSQL allows any value (1 GiB).

A product of two amounts of the administrator's data stays the administrator's data (``D x D = D``, ``D x
stored = D``, ``stored x stored`` the larger stored): the data bounds the data. (Numbers and row counts used
as numbers are the exception: ``counts.number_product``.) What the query multiplies it by (``fixed x D``) is
what the guard counts and caps.
"""

from __future__ import annotations

from typing import Final

MAX_VALUE: Final = 1 << 30
"""The largest value PostgreSQL builds (``MaxAllocSize``, 1 GiB): every size is at most this."""
MAX_NUMBER: Final = 1 << 63
"""The largest magnitude a number used as a count can have."""
_CEILING: Final = 1 << 64


def _clip(value: int) -> int:
    return value if value < _CEILING else _CEILING


class Bound:
    """At most ``fixed + stored + data x D`` (bytes, a magnitude or rows), or ``unknown``."""

    __slots__ = ("fixed", "data", "unknown", "stored")

    def __init__(self, fixed: int = 0, data: int = 0, unknown: bool = False, stored: int = 0) -> None:
        self.fixed = _clip(max(0, fixed))
        self.data = _clip(max(0, data))
        self.unknown = unknown
        self.stored = _clip(max(0, stored))

    def __repr__(self) -> str:
        if self.unknown:
            return "Bound(unknown)"
        return f"Bound({self.fixed} + stored {self.stored} + {self.data}D)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bound) and (self.fixed, self.stored, self.data, self.unknown) == (
            other.fixed, other.stored, other.data, other.unknown)

    def __hash__(self) -> int:
        return hash((self.fixed, self.stored, self.data, self.unknown))

    def __add__(self, other: Bound) -> Bound:
        return Bound(self.fixed + other.fixed, self.data + other.data, self.unknown or other.unknown,
                     self.stored + other.stored)

    def __mul__(self, other: Bound) -> Bound:
        # (f1 + s1 + d1 D)(f2 + s2 + d2 D): the query's constants times anything are the query's doing;
        # the administrator's data times the administrator's data is the administrator's data.
        f1, s1, d1 = self.fixed, self.stored, self.data
        f2, s2, d2 = other.fixed, other.stored, other.data
        admin = 1 if (d1 and (d2 or s2)) or (d2 and s1) else 0
        return Bound(f1 * f2 + f1 * s2 + s1 * f2, f1 * d2 + f2 * d1 + admin * max(d1, d2),
                     self.unknown or other.unknown, max(s1, s2) if s1 and s2 else 0)

    def scaled(self, factor: int, plus: int = 0) -> Bound:
        """``factor x self + plus``: the query multiplies every part of it."""
        return Bound(self.fixed * factor + plus, self.data * factor, self.unknown, self.stored * factor)

    def divided(self, divisor: int) -> Bound:
        """``self / divisor``, rounded up."""
        return Bound(-(-self.fixed // divisor), -(-self.data // divisor), self.unknown, -(-self.stored // divisor))

    def at_most(self, limit: int) -> Bound:
        """This bound where a type's own ``limit`` is lower (the query's part counted first)."""
        if self.unknown:
            return Bound(limit)
        if not self.data and self.fixed + self.stored <= limit:
            return self
        if self.fixed >= limit:
            return Bound(limit)
        if self.data and limit > 4096:  # a large limit: the data term is the tighter bound at nominal sizes
            return Bound(self.fixed, self.data, False, min(self.stored, limit - self.fixed))
        return Bound(self.fixed, 0, False, limit - self.fixed)

    def value(self, data_size: int) -> int:
        """The bound with ``D`` taken as ``data_size``; ``MAX_VALUE`` when unknown."""
        if self.unknown:
            return MAX_VALUE
        return min(self.fixed + self.stored + self.data * data_size, _CEILING)

    @property
    def is_constant(self) -> bool:
        """True when the bound depends on no stored data."""
        return not self.unknown and self.data == 0 and self.stored == 0


ZERO: Final = Bound()
DATA: Final = Bound(0, 1)
UNKNOWN: Final = Bound(MAX_VALUE, 0, True)


def stored(limit: int) -> Bound:
    """A stored value whose type bounds it to ``limit`` bytes."""
    return Bound(0, 0, False, limit)


def maximum(bounds: list[Bound]) -> Bound:
    """A bound on the largest of several values."""
    if not bounds:
        return ZERO
    return Bound(max(b.fixed for b in bounds), max(b.data for b in bounds), any(b.unknown for b in bounds),
                 max(b.stored for b in bounds))


def total(bounds: list[Bound]) -> Bound:
    """A bound on the sum."""
    result = ZERO
    for bound in bounds:
        result = result + bound
    return result


def constant(value: int) -> Bound:
    """A bound known exactly from the query."""
    return Bound(abs(value))
