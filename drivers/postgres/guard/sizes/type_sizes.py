"""What a value's type alone says about its size, and how much text of one type grows as another.

``type_bound`` is the most a value of a type prints or stores, where the
type itself limits it (an integer prints at most 20 characters, a numeric
at most 147 458, ``varchar(20)`` at most 80 bytes); None where only the value
says. ``parsed_bound`` is the most a value can print when read from text of
a given bound by the type's input function (a cast from text, an I/O
conversion): numbers in the constant part are counted at their longest
printed form, the administrator's data as it is stored.
"""

from __future__ import annotations

from typing import Final

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.sizes.bounds import DATA, MAX_VALUE, Bound, maximum, stored
from drivers.postgres.guard.sizes.literals import NUMERIC_MAX_PRINTED

PRINTED_MAX: Final = {
    "bool": 5, "char": 4, "int2": 6, "int4": 11, "int8": 20, "oid": 10, "xid": 10, "cid": 10, "xid8": 20,
    "float4": 15, "float8": 24, "money": 32, "date": 16, "time": 15, "timetz": 21, "timestamp": 32,
    "timestamptz": 38, "interval": 96, "uuid": 36, "macaddr": 17, "macaddr8": 23, "point": 51, "lseg": 105,
    "box": 103, "line": 77, "circle": 79, "tid": 19, "pg_lsn": 17, "name": 256, "inet": 49, "cidr": 49,
    "numeric": NUMERIC_MAX_PRINTED, "int4range": 25, "int8range": 43, "daterange": 35, "tsrange": 67,
    "tstzrange": 79, "numrange": 2 * NUMERIC_MAX_PRINTED + 3, "jsonpath": 0, "regconfig": 256,
    "regdictionary": 256, "bit": 0, "varbit": 0, "txid_snapshot": 0, "pg_snapshot": 0,
}
"""The most characters (or bytes) a value of each type prints or stores; 0 where the type does not bound it."""

_FIXED_LENGTH_DEFAULT: Final = 256
_VARHDRSZ: Final = 4
_NUMBER_EXPANSION: Final = 16384
"""The most characters one character of number text prints, its separator counted: ``1e131071`` (8
characters and a comma) prints 131 072 digits; shorter exponents print fewer (``9e99999``, 100 000 for 8), and
a numeric never prints more than ``NUMERIC_MAX_PRINTED``."""
_ARRAY_HELD: Final = 24 + 6 * 8
"""An array's header: 24 bytes with one dimension, eight more for each other (at most six)."""
_GROWING_FROM_TEXT: Final = {"numeric", "jsonb", "numrange", "nummultirange", "jsonpath"}
_STRING_LIKE: Final = {"text", "varchar", "bpchar", "name", "json", "xml", "char", "unknown"}


def type_bound(catalog: Catalog, type_oid: int, typmod: int = -1) -> Bound | None:
    """The most a value of this type (and typmod) prints or stores, when the type limits it."""
    base = catalog.base_type(type_oid)
    info = catalog.type(base)
    if info is None:
        return None
    name = info.name if info.schema == "pg_catalog" else ""
    if name in ("varchar", "bpchar") and typmod > _VARHDRSZ:
        return Bound(4 * (typmod - _VARHDRSZ))
    if name in ("bit", "varbit") and typmod > 0:
        return Bound(typmod + 4)  # its bits, and the 4-byte length word it holds before them
    if name == "numeric" and typmod > _VARHDRSZ:
        precision = ((typmod - _VARHDRSZ) >> 16) & 0xFFFF
        return Bound(precision + 3)
    limit = PRINTED_MAX.get(name)
    if limit:
        return Bound(limit)
    if info.kind == "e":
        return Bound(64 * 4)
    if info.length > 0:
        return Bound(_FIXED_LENGTH_DEFAULT)
    return None


def stored_bound(catalog: Catalog, type_oid: int, typmod: int) -> Bound:
    """A stored column's value: the administrator's data, of its type's size where the type limits it."""
    found = type_bound(catalog, type_oid, typmod)
    return stored(found.fixed) if found is not None else DATA


def value_bound(catalog: Catalog, type_oid: int, typmod: int = -1) -> Bound:
    """A computed value whose size no rule bounds: its type's limit, else unknown (up to 1 GiB)."""
    found = type_bound(catalog, type_oid, typmod)
    return found if found is not None else Bound(MAX_VALUE, 0, True)


def parsed_bound(catalog: Catalog, target: int, typmod: int, text: Bound) -> Bound:
    """The most a value of ``target`` prints when read from text of size ``text`` (I/O conversion, cast)."""
    limit = type_bound(catalog, target, typmod)
    base = catalog.base_type(target)
    info = catalog.type(base)
    name = info.name if info is not None and info.schema == "pg_catalog" else ""
    element = catalog.element_type(base)
    element_info = catalog.type(element) if element else None
    element_name = element_info.name if element_info is not None and element_info.schema == "pg_catalog" else ""
    if name in _GROWING_FROM_TEXT or element_name in _GROWING_FROM_TEXT:
        # The query's own text may be numbers that each print up to 16 384 characters per character written
        # (jsonb adds a space after each "," and ":"); the administrator's numbers print as stored.
        grown = Bound(text.fixed * 2 + (text.fixed + 1) * _NUMBER_EXPANSION, text.data * 8, text.unknown,
                      text.stored * 8)
        return grown.at_most(limit.fixed) if limit is not None else grown.at_most(MAX_VALUE)
    if limit is not None:
        return limit
    if name in _STRING_LIKE:
        return text
    if name == "bytea":
        return text.scaled(2, 2)
    if name == "tsvector":
        return text.scaled(4, 10)  # a lexeme holds a 4-byte entry: 'a' holds 9 bytes
    if name == "tsquery":
        return text.scaled(4, 2)
    if name in ("path", "polygon"):
        return text.scaled(13, 16)
    if name in ("bit", "varbit"):
        return text.scaled(4, 4)  # X'F' is four bits; and the length word before them
    if name in ("txid_snapshot", "pg_snapshot"):
        return text.scaled(2, 2)
    if element:
        # The array's header (with up to six dimensions) comes on top of the elements; an element of text
        # holds its length word and alignment: '{a,a}' (5 characters) holds 40 bytes.
        element_limit = type_bound(catalog, element, -1)
        if element_limit is not None:
            return text.scaled(element_limit.fixed + 1, 2 + _ARRAY_HELD)
        if element_name in _STRING_LIKE or element_name == "bytea":
            return text.scaled(4 if element_name != "bytea" else 6, 2 + _ARRAY_HELD)
    if info is not None and info.kind in ("r", "m"):
        return text.scaled(8, 8)
    return Bound(MAX_VALUE, 0, True)


def widest(bounds: list[Bound]) -> Bound:
    """The bound of a value that is any one of these."""
    return maximum(bounds)
