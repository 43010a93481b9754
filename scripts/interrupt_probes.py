"""What a probe of scripts/interrupt_audit.py is, and the input shapes the catalogue builds them from.

A probe is a SQL expression whose inputs are built inside the query (``repeat``,
``array_fill``, ``generate_series`` ...) exactly as a token holder could build
them through GetData. Sizes enter as placeholders ``{n0}``, ``{n1}`` ...: the
digit is the 0-based position of the argument (or operand) of the probed
function or operator that the size grows, so the audit can grow one argument
at a time to find which one drives the cost. Every other brace in a template
is SQL (array and JSON literals) and is left alone.

The builders below write those inputs once. They use repeat, array_fill and
range_agg, which build in far less time than the limit, so that a cancel that
arrives during the build does not hide the call behind it.
"""

from __future__ import annotations

import enum
import re

import attrs

PLACEHOLDER = re.compile(r"\{n(\d)\}")


class Family(enum.Enum):
    """The groups of built-ins the audit covers (issue 8 names all but OTHER)."""

    TEXT = "text"
    BYTEA = "bytea"
    BITSTRING = "bitstring"
    ARRAYS = "arrays"
    JSON = "json"
    FULLTEXT = "fulltext"
    XML = "xml"
    GEOMETRY = "geometry"
    RANGES = "ranges"
    NUMERIC = "numeric"
    OTHER = "other"


REQUIRED_FAMILIES = frozenset(Family) - {Family.OTHER}
"""The families the audit must probe; OTHER holds date/time formatting and aggregates."""


@attrs.frozen
class Probe:
    """One built-in (or a few sharing one C function), timed at doubling sizes."""

    family: Family
    """The group it belongs to (and the --families option selects by)."""
    name: str
    """A unique identifier, used by --probes and in the findings."""
    template: str
    """A SQL expression with size placeholders ``{n<argument>}``; the audit runs ``SELECT (<it>) IS NULL``."""
    functions: tuple[str, ...]
    """The pg_catalog functions it exercises, as regprocedure text (``arrayoverlap(anyarray,anyarray)``)."""
    operators: tuple[str, ...] = ()
    """The operator names the template writes for those functions (``&&``), if any."""
    syntax: str = ""
    """SQL syntax that reaches the functions without naming them (``LIKE``, ``XMLTABLE``), if any."""
    unit: str = "characters"
    """What a size counts."""
    start: int = 1000
    """The first size tried."""
    max_size: int = 1 << 22
    """The largest size tried."""
    small: int = 1
    """The size of the other arguments while one argument is grown alone."""
    harmless: str = ""
    """Why the guard may accept this probe although it overruns, with the evidence (empty: it may not; issue 19)."""

    @property
    def varied_arguments(self) -> tuple[int, ...]:
        """The argument positions whose size the template grows."""
        return tuple(sorted({int(digit) for digit in PLACEHOLDER.findall(self.template)}))

    def expression(self, sizes: dict[int, int]) -> str:
        """The template with each argument's placeholder replaced by its size."""
        return PLACEHOLDER.sub(lambda match: str(sizes[int(match.group(1))]), self.template)


LINEAR_MAX = 1 << 26
"""The largest input of probes expected to be linear: 64 Mi units keeps the audit's memory modest."""

# -- input builders: the shapes an attacker types, written once ------------------------------------


def run_of(unit: str, last: str, argument: int, factor: str = "") -> str:
    """``repeat(unit, n) || last`` as text: a long run with a different tail."""
    tail = f" || '{last}'" if last else ""
    return f"repeat('{unit}', {factor}{{n{argument}}}){tail}"


def as_bytea(text: str) -> str:
    return f"convert_to({text}, 'UTF8')"


def jsonb_array(element: str, last: str, argument: int) -> str:
    """A jsonb array of n copies of ``element`` followed by ``last``."""
    return f"('[' || repeat('{element},', {{n{argument}}}) || '{last}]')::jsonb"


def distinct_words(argument: int, separator: str) -> str:
    """The words w1 .. wn joined by ``separator``, built with generate_series."""
    return f"(SELECT string_agg('w' || i, '{separator}') FROM generate_series(1, {{n{argument}}}) i)"


def and_chain(word: str, last: str, argument: int) -> str:
    """The tsquery ``word & word & ... & last``, built by to_tsquery (tsquery's own input is itself slow to stop)."""
    return f"to_tsquery('simple', repeat('{word} & ', {{n{argument}}}) || '{last}')"


def xml_document(argument: int) -> str:
    """``<a><b/><b/>...</a>`` with n ``<b/>`` elements."""
    return f"('<a>' || repeat('<b/>', {{n{argument}}}) || '</a>')::xml"


def point_list(kind: str, point: str, last: str, argument: int) -> str:
    """A polygon (or open path) of n copies of ``point`` followed by the points in ``last``."""
    opening, closing = ("(", ")") if kind == "polygon" else ("[", "]")
    return f"('{opening}' || repeat('{point},', {{n{argument}}}) || '{last}{closing}')::{kind}"


def multirange_of(argument: int, offset: int) -> str:
    """An int4multirange of n disjoint ranges [2i+offset, 2i+offset+1), built with range_agg."""
    return (
        f"(SELECT range_agg(int4range(2 * i + {offset}, 2 * i + {offset} + 1)) "
        f"FROM generate_series(1, {{n{argument}}}) i)"
    )


def random_digits(argument: int, seed: str) -> str:
    """A numeric of 32n pseudo-random decimal digits (md5 blocks with the hex letters mapped to digits)."""
    return (
        f"(SELECT translate(string_agg(md5(i::text || '{seed}'), ''), 'abcdef', '123456') "
        f"FROM generate_series(1, {{n{argument}}}) i)::numeric"
    )
