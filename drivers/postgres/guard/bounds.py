"""Upper bounds on sizes, numbers and row counts, in terms of constants and the administrator's data.

A ``Bound`` says: at most ``fixed + data x D``, where ``D`` stands for the
administrator's data (a stored value, a column's values aggregated, a table's
row count): trusted, unknown and never capped, but never multiplied by more
than the query says. ``unknown`` marks a value no rule bounds: it may be as
large as PostgreSQL allows any value to be (1 GiB). Products of two data terms
stay data terms (``D x D = D``): the data bounds the data, and what the
query multiplies it by is what the guard counts.
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
    """At most ``fixed + data x D`` (bytes, a magnitude or rows), or ``unknown``."""

    __slots__ = ("fixed", "data", "unknown")

    def __init__(self, fixed: int = 0, data: int = 0, unknown: bool = False) -> None:
        self.fixed = _clip(max(0, fixed))
        self.data = _clip(max(0, data))
        self.unknown = unknown

    def __repr__(self) -> str:
        return "Bound(unknown)" if self.unknown else f"Bound({self.fixed} + {self.data}D)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bound) and (self.fixed, self.data, self.unknown) == (
            other.fixed, other.data, other.unknown)

    def __hash__(self) -> int:
        return hash((self.fixed, self.data, self.unknown))

    def __add__(self, other: Bound) -> Bound:
        return Bound(self.fixed + other.fixed, self.data + other.data, self.unknown or other.unknown)

    def __mul__(self, other: Bound) -> Bound:
        return Bound(self.fixed * other.fixed,
                     self.fixed * other.data + other.fixed * self.data + self.data * other.data,
                     self.unknown or other.unknown)

    def scaled(self, factor: int, plus: int = 0) -> Bound:
        """``factor x self + plus``."""
        return Bound(self.fixed * factor + plus, self.data * factor, self.unknown)

    def at_most(self, limit: int) -> Bound:
        """This bound where a type's own ``limit`` is lower: a small limit replaces a data term outright."""
        if self.unknown or self.fixed >= limit or (self.data and limit <= 4096):
            return Bound(limit)
        return Bound(self.fixed, self.data)

    def value(self, data_size: int) -> int:
        """The bound with ``D`` taken as ``data_size``; ``MAX_VALUE`` when unknown."""
        if self.unknown:
            return MAX_VALUE
        return min(self.fixed + self.data * data_size, _CEILING)

    @property
    def is_constant(self) -> bool:
        """True when the bound depends on no data."""
        return not self.unknown and self.data == 0


ZERO: Final = Bound()
DATA: Final = Bound(0, 1)
UNKNOWN: Final = Bound(MAX_VALUE, 0, True)


def maximum(bounds: list[Bound]) -> Bound:
    """A bound on the largest of several values."""
    if not bounds:
        return ZERO
    return Bound(max(b.fixed for b in bounds), max(b.data for b in bounds), any(b.unknown for b in bounds))


def total(bounds: list[Bound]) -> Bound:
    """A bound on the sum."""
    result = ZERO
    for bound in bounds:
        result = result + bound
    return result


def constant(value: int) -> Bound:
    """A bound known exactly from the query."""
    return Bound(abs(value))
