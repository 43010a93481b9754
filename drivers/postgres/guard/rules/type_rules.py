"""Which pg_catalog types a query may name, and which may appear in an allowed function's signature.

Two catalog facts make types dangerous in a read-only query:

- **Catalog lookups.** ``regclass`` and the other ``reg*`` types turn a name
  into an OID by looking it up (``'sec.secrets'::regclass`` answers whether
  the table exists, and its OID); ``aclitem`` resolves role names. A value of
  such a type printed next to a number names any relation, type or function
  by OID.
- **Row types of catalog relations.** Every relation has a composite type of
  the same name, and its fields carry catalog types:
  ``(NULL::pg_catalog.pg_sequences).data_type`` is a ``regtype`` that prints
  the name of any relation by OID.

So a query may name only plain built-in data types (``nameable_types``) and an
allowed function takes and returns only those or polymorphic types
(``signature_refusal``). Everything else is refused by name, with the reason
in ``docs/security.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.types import FunctionInfo

CATALOG_LOOKUP_TYPES = frozenset({
    "regclass", "regcollation", "regconfig", "regdictionary", "regnamespace", "regoper",
    "regoperator", "regproc", "regprocedure", "regrole", "regtype", "aclitem",
})
"""Types whose text input looks catalog objects up by name (reg*) or resolves role names (aclitem)."""

TEXT_SEARCH_LOOKUP_TYPES = frozenset({"regconfig", "regdictionary"})
"""Lookup types an allowed function may *take*: ``to_tsvector('english', body)`` is everyday search.

The guard then requires the literal to be a bare name, which with
``search_path=pg_catalog`` finds built-in configurations only (see
``query_checks.py``); such a value never leaves the function.
"""

PLUMBING_TYPES = frozenset({
    # Not data: handlers, triggers, C strings and the executor's internal pointers.
    "internal", "cstring", "language_handler", "fdw_handler", "index_am_handler", "table_am_handler",
    "tsm_handler", "trigger", "event_trigger", "pg_ddl_command", "void", "unknown",
    # Catalog and statistics plumbing: only ever read out of system catalogs.
    "pg_node_tree", "pg_ndistinct", "pg_dependencies", "pg_mcv_list", "pg_brin_bloom_summary",
    "pg_brin_minmax_multi_summary", "int2vector", "oidvector", "gtsvector",
    # Snapshots of the server's transactions and cursor names: their functions are refused anyway.
    "pg_snapshot", "txid_snapshot", "refcursor",
})
"""Types no data query needs; a query may not name them and allowed functions do not use them."""

REFUSED_TO_NAME = frozenset({"xml"})
"""Data types a query may not name although functions may return them.

``xml``: a cast to xml parses the text with libxml2, which PostgreSQL cannot
interrupt; XML is built with ``xmlelement`` and friends instead.
"""

_NAMEABLE_KINDS = frozenset({"b", "r", "m", "e", "d"})


def nameable_types(catalog: Catalog) -> frozenset[int]:
    """OIDs of the pg_catalog types a query may name in a cast, typed literal or column definition.

    Base, range, multirange, enum and domain types that are no relation's row
    type and not a lookup or plumbing type, and the array types of those.
    """
    refused = CATALOG_LOOKUP_TYPES | PLUMBING_TYPES | REFUSED_TO_NAME

    def plain(oid: int, depth: int = 0) -> bool:
        info = catalog.types.get(oid)
        if info is None or info.schema != "pg_catalog" or depth > 8 or info.relation != 0 or info.name in refused:
            return False
        if info.kind == "d":
            return plain(info.base, depth + 1)
        if info.is_array:
            element = catalog.types.get(info.element)
            return element is not None and element.array == oid and element.kind != "p" and plain(element.oid, 1)
        return info.kind in _NAMEABLE_KINDS and info.category != "A"

    return frozenset(oid for oid in catalog.types if plain(oid))


def _signature_type_names(catalog: Catalog, oid: int) -> Iterable[str]:
    info = catalog.types.get(oid)
    if info is None:
        return ()
    element = catalog.types.get(info.element) if info.is_array else None
    return (info.name,) if element is None else (info.name, element.name)


def _is_relation_row_type(catalog: Catalog, oid: int) -> bool:
    info = catalog.types.get(oid)
    if info is not None and info.is_array:
        info = catalog.types.get(info.element)
    return info is not None and info.relation != 0


def output_types(overload: FunctionInfo) -> tuple[int, ...]:
    """The result type and the OUT arguments' types of ``overload``."""
    if overload.all_arguments == overload.arguments:
        return (overload.result,)
    outputs = Counter(overload.all_arguments) - Counter(overload.arguments)
    return (overload.result, *outputs.elements())


def signature_refusal(catalog: Catalog, overload: FunctionInfo) -> str | None:
    """Why the signature of ``overload`` disqualifies it, or None when it is plain."""
    inputs = set(overload.arguments)
    for oid in {*overload.all_arguments, overload.result}:
        if _is_relation_row_type(catalog, oid):
            return "it takes or returns the row type of a catalog relation"
        for name in _signature_type_names(catalog, oid):
            if name in PLUMBING_TYPES:
                return f"its signature uses the internal type {name}"
            if name in CATALOG_LOOKUP_TYPES:
                returned = oid in output_types(overload) or oid not in inputs
                if returned or name not in TEXT_SEARCH_LOOKUP_TYPES:
                    return f"it takes or returns {name}, a type that looks catalog objects up by name"
    return None
