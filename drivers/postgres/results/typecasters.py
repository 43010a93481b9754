"""psycopg2 typecasters that turn PostgreSQL's text output into values orjson writes as the contract says.

The contract's GetData "Values" list decides what each type becomes in JSON.
psycopg2's defaults make ``Decimal``, ``datetime``, ``timedelta``, ``memoryview``,
``dict``, ``UUID`` and range objects, and floats that orjson writes as
``null`` when they are NaN; none of that may reach the encoder. The casters
here are registered on each gateway connection only (``register_json_casters``),
never globally, so other code in the process keeps psycopg2's defaults.

Decisions (PostgreSQL text output as the sessions are configured:
DateStyle=ISO, TimeZone=UTC, IntervalStyle=iso_8601, extra_float_digits=3):

- int2, int4, int8, oid: JSON numbers (psycopg2's C casters).
- numeric: a string, exactly as PostgreSQL prints it (``"1.50"``, ``"NaN"``).
- real, double precision: numbers; NaN, Infinity, -Infinity become the strings
  ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (JSON has no such numbers).
- boolean: true/false. text, varchar, char, name: strings.
- date, time: PostgreSQL's text, already ISO 8601 (``2024-01-02``, ``03:04:05.5``).
- timestamp, timestamptz: the space becomes ``T`` and a ``+hh`` offset becomes
  ``+hh:00``: ``2024-01-02T03:04:05.123+00:00``. timetz: ``03:04:05+00:00``.
  ``infinity``, ``-infinity`` and BC values (``0044-03-15 12:00:00+00 BC``) are
  kept as PostgreSQL prints them, because ISO 8601 has no spelling for them
  that a reader would expect.
- interval: the ISO 8601 duration PostgreSQL prints (``P1Y2M3DT4H5M6S``).
- uuid, inet, cidr, macaddr, macaddr8, money, bytea (``\\x0102`` hex), ranges:
  PostgreSQL's text form as a string.
- json, jsonb: ``orjson.Fragment`` of the database's text, embedded as written once a strict parse
  (orjson) accepts it; text no strict parser takes (a lone surrogate escape ``"\\ud800"``, a number
  beyond a double such as ``1e400``) becomes a JSON string of that text. jsonb is printed by
  PostgreSQL from its parsed form, so only a number beyond a double (309 characters or more) can be
  such text: only jsonb values that long are parsed to check.
- arrays (any number of dimensions) of all of the above: nested JSON arrays.
  Arrays of types without a caster here (enums, user types, extension types)
  become arrays of strings once ``adopt_result_types`` has seen them; arrays
  whose element type uses a delimiter other than a comma (``box[]``) stay
  PostgreSQL's text form, because psycopg2's array parser only splits on commas.
- domains: PostgreSQL describes a result column of a domain type by its base
  type, so values and type names are those of the base type (``integer``).
- anything else (enums, point, tsvector, hstore, composite types ...):
  PostgreSQL's text form, which is psycopg2's default for unknown types.

``TypeNameCache`` names result columns' types with ``format_type(oid, NULL)``
(``integer``, ``timestamp with time zone``, ``integer[]``, ``shop.mood``) and
remembers which OIDs are arrays, reading each OID from the catalog once per pool.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import orjson
import psycopg2
import psycopg2.extensions as pg_ext

Caster = Any
"""A psycopg2 typecaster object (callable as ``caster(text, cursor)``)."""

TEXT_CASTER: Caster = psycopg2.STRING
"""psycopg2's C caster that decodes the value's text into ``str``: no Python frame per value.

It is a caster for text's OIDs; other types that keep their text (numeric, uuid, enums ...) get the same
object under their own OIDs in the connection's ``string_types`` (``keep_text``). Registered through
``new_type`` instead, it would become a Python-level caster calling the C one, which costs a call and a
second decode per value (about 40 ms per million numeric values over this)."""


def _float_value(text: str | None, cursor: Any) -> float | str | None:
    if text is None:
        return None
    # PostgreSQL spells the non-finite values NaN, Infinity, -Infinity: the last
    # letter tells them apart from every finite number without a parse.
    last = text[-1]
    if last == "N" or last == "y":
        return text
    return float(text)


def _timestamp_value(text: str | None, cursor: Any) -> str | None:
    if text is None:
        return None
    last = text[-1]
    if last == "y" or last == "C":  # infinity, -infinity, ... BC: kept as printed
        return text
    return text.replace(" ", "T", 1)


def _timestamptz_value(text: str | None, cursor: Any) -> str | None:
    if text is None:
        return None
    last = text[-1]
    if last == "y" or last == "C":
        return text
    text = text.replace(" ", "T", 1)
    # PostgreSQL prints a whole-hour offset as +hh; ISO 8601 readers expect +hh:mm.
    return text + ":00" if text[-3] in "+-" else text


def _timetz_value(text: str | None, cursor: Any) -> str | None:
    if text is None:
        return None
    return text + ":00" if text[-3] in "+-" else text


def _json_value(text: str | None, cursor: Any) -> orjson.Fragment | str | None:
    if text is None:
        return None
    try:
        # PostgreSQL's json keeps its input text, also what no strict parser takes ('"\ud800"', '1e400',
        # beyond a double): embedded unparsed it would make the whole body unreadable to such parsers,
        # so such a value goes as a string.
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    return orjson.Fragment(text)


def _jsonb_value(text: str | None, cursor: Any) -> orjson.Fragment | str | None:
    if text is None:
        return None
    # jsonb is written out by PostgreSQL from its parsed form: no lone surrogate, no syntax it did not
    # make; only a number beyond a double's range (jsonb keeps numerics exactly) would trouble a strict
    # parser, and such a number has at least 309 characters. Parsing every value to find that one
    # would cost a second per million rows.
    if len(text) < 309:
        return orjson.Fragment(text)
    return _json_value(text, cursor)


_ROWID_CASTER: Caster = pg_ext.string_types.get(26, pg_ext.INTEGER)
"""psycopg2's C caster for ``oid`` (``ROWID``): values as ``int``."""

_TYPECASTER_CLASS = type(pg_ext.INTEGER)

# (caster name, scalar OIDs, scalar caster, array OIDs, array element caster).
# Built-in OIDs are fixed across PostgreSQL versions, so no catalog lookup is
# needed for these. Where psycopg2's own C caster already yields a JSON value
# it is registered as is: a wrapper around it would cost a Python-level call.
_BUILTIN_TYPES: tuple[tuple[str, tuple[int, ...], Caster, tuple[int, ...], Caster], ...] = (
    ("DBGW_INTEGER", (21, 23), pg_ext.INTEGER, (1005, 1007), pg_ext.INTEGER),
    ("DBGW_OID", (26,), _ROWID_CASTER, (1028,), _ROWID_CASTER),
    ("DBGW_BIGINT", (20,), pg_ext.LONGINTEGER, (1016,), pg_ext.LONGINTEGER),
    ("DBGW_BOOLEAN", (16,), pg_ext.BOOLEAN, (1000,), pg_ext.BOOLEAN),
    # text, varchar, bpchar, name, "char"
    ("DBGW_STRING", (25, 1043, 1042, 19, 18), TEXT_CASTER, (1009, 1015, 1014, 1003, 1002), TEXT_CASTER),
    ("DBGW_FLOAT", (700, 701), _float_value, (1021, 1022), _float_value),
    ("DBGW_JSON", (114,), _json_value, (199,), _json_value),
    ("DBGW_JSONB", (3802,), _jsonb_value, (3807,), _jsonb_value),
    ("DBGW_TIMESTAMP", (1114,), _timestamp_value, (1115,), _timestamp_value),
    ("DBGW_TIMESTAMPTZ", (1184,), _timestamptz_value, (1185,), _timestamptz_value),
    ("DBGW_TIMETZ", (1266,), _timetz_value, (1270,), _timetz_value),
    (
        "DBGW_TEXT_FORM",
        (
            1700, 790,  # numeric, money
            1082, 1083, 1186, 704,  # date, time, interval, reltime (before PG 12)
            2950, 869, 650, 829, 774,  # uuid, inet, cidr, macaddr, macaddr8
            17, 142, 1560, 1562, 4072,  # bytea, xml, bit, varbit, jsonpath
            3904, 3906, 3908, 3910, 3912, 3926,  # built-in ranges
        ),
        TEXT_CASTER,
        (
            1231, 791,
            1182, 1183, 1187, 1024,
            2951, 1041, 651, 1040, 775,
            1001, 143, 1561, 1563, 4073,
            3905, 3907, 3909, 3911, 3913, 3927,
            1006, 1013,  # int2vector[], oidvector[]: elements are "1 2", not numbers
        ),
        TEXT_CASTER,
    ),
)  # fmt: skip


def _build_builtin_casters() -> tuple[tuple[Caster, ...], frozenset[int], frozenset[int]]:
    """The typecasters to register, the OIDs they and ``TEXT_CASTER`` cover, and the OIDs that keep their text."""
    casters: list[Caster] = []
    oids: set[int] = set()
    kept_as_text: set[int] = set()
    for name, scalar_oids, scalar_caster, array_oids, element_caster in _BUILTIN_TYPES:
        if isinstance(scalar_caster, _TYPECASTER_CLASS) and set(scalar_caster.values) == set(scalar_oids):
            scalar = scalar_caster  # psycopg2's C caster for exactly these OIDs
        elif scalar_caster is TEXT_CASTER:
            scalar = None  # keep_text: the C caster under these OIDs, no Python frame per value
            kept_as_text.update(scalar_oids)
        else:
            scalar = pg_ext.new_type(scalar_oids, name, scalar_caster)
        # psycopg2's array parser wants a typecaster object for the elements;
        # it calls a C one directly, without a Python frame per element.
        element = element_caster if isinstance(element_caster, _TYPECASTER_CLASS) else scalar
        if scalar is not None:
            casters.append(scalar)
        casters.append(pg_ext.new_array_type(array_oids, f"{name}_ARRAY", element))
        oids.update(scalar_oids, array_oids)
    return tuple(casters), frozenset(oids), frozenset(kept_as_text)


_BUILTIN_CASTERS, BUILTIN_OIDS, _TEXT_FORM_OIDS = _build_builtin_casters()

PYTHON_CASTS: dict[int, Callable[[str | None, Any], Any]] = {
    oid: caster
    for _, scalar_oids, caster, _, _ in _BUILTIN_TYPES
    if not isinstance(caster, _TYPECASTER_CLASS)
    for oid in scalar_oids
}
"""The scalar types whose values a Python function makes from their text (float, json, timestamps ...):
``deferred_casts`` may read them as text and call the same function later."""


def keep_text(raw_connection: Any, oid: int) -> None:
    """Make this connection (or cursor) return values of type ``oid`` as PostgreSQL's text, through psycopg2's C caster.

    psycopg2 looks a column's caster up by OID in the cursor's, then the connection's ``string_types``
    and calls a C caster's function without checking which OIDs it was made for,
    so ``TEXT_CASTER`` serves any type whose text form is the value.
    """
    raw_connection.string_types[oid] = TEXT_CASTER


@functools.lru_cache(maxsize=4096)
def text_array_caster(oid: int) -> Caster:
    """A caster that makes values of array type ``oid`` (nested) lists of strings."""
    return pg_ext.new_array_type((oid,), f"DBGW_TEXT_ARRAY_{oid}", TEXT_CASTER)


def register_json_casters(raw_connection: Any) -> None:
    """Make every value this psycopg2 connection returns one orjson encodes as the contract says.

    Call once per new connection (aiopg's ``on_connect`` hook, with ``conn.raw``).
    Besides the built-in types, anything some other code registered globally
    (``register_uuid()``, ``register_hstore(globally=True)`` ...) is overridden
    on this connection with the text form, since its objects may not be JSON.
    """
    for caster in _BUILTIN_CASTERS:
        pg_ext.register_type(caster, raw_connection)
    for oid in _TEXT_FORM_OIDS:
        keep_text(raw_connection, oid)
    for oid, global_caster in list(pg_ext.string_types.items()):
        if oid in BUILTIN_OIDS:
            continue
        # The global registry does not say which OIDs are arrays; psycopg2 and
        # psycopg2.extras name every array caster ``...ARRAY``.
        if str(getattr(global_caster, "name", "")).upper().endswith("ARRAY"):
            pg_ext.register_type(text_array_caster(oid), raw_connection)
        else:
            keep_text(raw_connection, oid)


def adopt_result_types(
    raw_connection: Any, oids: Iterable[int], is_text_array: Callable[[int], bool]
) -> dict[int, Caster]:
    """Register casters for result types this connection has none for yet.

    psycopg2 picks a column's caster when the statement completes, so rows
    already received with an unknown array type came back as ``'{a,b}'``
    strings. Returns ``{oid: caster}`` for exactly those columns; the caller
    converts the rows it holds with ``caster(text, cursor)``. Later statements
    on this connection get the new casters directly. Unknown scalar types need
    nothing: psycopg2's default for them is already the text.
    """
    registered = raw_connection.string_types
    missed: dict[int, Caster] = {}
    for oid in oids:
        if oid in registered:
            continue
        if is_text_array(oid):
            missed[oid] = text_array_caster(oid)
            pg_ext.register_type(missed[oid], raw_connection)
        elif oid in pg_ext.string_types:
            # Registered globally after this connection opened: its objects
            # may not be JSON, so keep the text from the next statement on.
            keep_text(raw_connection, oid)
    return missed


_TYPE_INFO_SQL = """
SELECT t.oid,
       pg_catalog.format_type(t.oid, NULL),
       COALESCE(t.typinput = 'pg_catalog.array_in'::pg_catalog.regproc
                AND element.typdelim = ',', false)
FROM pg_catalog.pg_type AS t
LEFT JOIN pg_catalog.pg_type AS element ON element.oid = t.typelem
WHERE t.oid = ANY (%s::pg_catalog.oid[])
"""


@attrs.frozen
class PgType:
    """What the gateway needs to know about one PostgreSQL type."""

    name: str
    """``pg_catalog.format_type(oid, NULL)``: ``integer``, ``timestamp with time zone``, ``integer[]``."""
    is_text_array: bool
    """An array type psycopg2 can split (comma-delimited elements); unknown element types become strings."""


class TypeNameCache:
    """Type names (and array-ness) by OID for one database, read from its catalog once per OID.

    One instance per pool: OIDs are per database. A type renamed after it was
    cached keeps its old name until the pool is reopened; types are seldom
    renamed and a stale name costs nothing but the label.
    """

    def __init__(self) -> None:
        self._types: dict[int, PgType] = {}

    async def names_for(self, cursor_or_conn: Any, oids: Sequence[int], *, timeout: float = 30.0) -> list[str]:
        """Type names for ``oids`` in order, querying the catalog only for OIDs not seen before.

        ``cursor_or_conn`` is an aiopg connection, or a cursor whose connection
        is used (with a new cursor, so the given cursor's rows stay intact).
        It may be inside an open transaction; the lookup is a plain SELECT.
        """
        unknown = sorted({oid for oid in oids if oid not in self._types})
        if unknown:
            connection = getattr(cursor_or_conn, "connection", cursor_or_conn)
            cursor = await connection.cursor(timeout=timeout)
            try:
                await cursor.execute(_TYPE_INFO_SQL, (unknown,))
                found = cursor.raw.fetchall()
            finally:
                cursor.close()
            for oid, name, is_text_array in found:
                self._types[oid] = PgType(name=name, is_text_array=bool(is_text_array))
        return [self._types[oid].name if oid in self._types else f"oid {oid}" for oid in oids]

    def is_text_array(self, oid: int) -> bool:
        """Whether ``oid`` is a comma-delimited array type (known after ``names_for`` saw it)."""
        found = self._types.get(oid)
        return found is not None and found.is_text_array
