"""Whether a value of some possible types could be passed where a parameter of a given type is declared.

Possible types are sets of type OIDs plus three markers: ``ANY`` (a column or
an expression the guard cannot type: any type a query value can have),
``UNKNOWN`` (an untyped literal: PostgreSQL may read it as any type) and
``UNKNOWN_TEXT`` (an untyped literal whose text is no polygon or path).
``TypeMatching`` follows PostgreSQL's rules for function and operator
arguments: the same type, an implicit or binary cast (``pg_cast`` context
'i'), a domain over it, arrays of such, polymorphic parameters of the right
kind. It errs towards "could": never "cannot" where PostgreSQL could.
"""

from __future__ import annotations

from typing import Final

from drivers.postgres.catalog_snapshot import CatalogSnapshot

ANY: Final = -1
UNKNOWN: Final = -2
UNKNOWN_TEXT: Final = -3

TypeSet = frozenset[int]
ANY_TYPE: Final[TypeSet] = frozenset({ANY})

_LITERALS = frozenset({UNKNOWN, UNKNOWN_TEXT})
_POINT_LISTS = frozenset({"polygon", "path"})
_ALWAYS_MATCHING = frozenset({"any", "anyelement", "anycompatible"})
_NON_ARRAY = frozenset({"anynonarray", "anycompatiblenonarray"})
_ARRAY = frozenset({"anyarray", "anycompatiblearray"})
_RANGE = frozenset({"anyrange", "anycompatiblerange"})
_MULTIRANGE = frozenset({"anymultirange", "anycompatiblemultirange"})
POLYMORPHIC = _ALWAYS_MATCHING | _NON_ARRAY | _ARRAY | _RANGE | _MULTIRANGE | {"anyenum", "record", "_record"}


def is_literal(types: TypeSet) -> bool:
    """True for the possible types of an untyped literal."""
    return types <= _LITERALS


class TypeMatching:
    """Answers "could this feed that parameter?" for one catalog, remembering each answer."""

    def __init__(self, catalog: CatalogSnapshot, reachable: frozenset[int]) -> None:
        self.catalog = catalog
        self.reachable = reachable
        """OIDs of the types a value in an allowed query can have: what ``ANY`` stands for."""
        self._feeds_cache: dict[tuple[int, int], bool] = {}

    def type_feeds(self, source: int, parameter: int) -> bool:
        """True when a value of type ``source`` can be passed where ``parameter`` is declared."""
        key = (source, parameter)
        cached = self._feeds_cache.get(key)
        if cached is None:
            cached = self._feeds_cache[key] = self._type_feeds(source, parameter, 0)
        return cached

    def _type_feeds(self, source: int, parameter: int, depth: int) -> bool:
        types = self.catalog.types
        if source == parameter:
            return True
        target, value = types.get(parameter), types.get(source)
        if target is None or value is None or depth > 8:
            return False
        if value.kind == "d":
            return self._type_feeds(value.base, parameter, depth + 1)
        if target.kind == "p":
            return self._polymorphic_accepts(target.name, source)
        if (source, parameter) in self.catalog.implicit_casts:
            return True
        return value.is_array and target.is_array and self._type_feeds(value.element, target.element, depth + 1)

    def _polymorphic_accepts(self, pseudo: str, source: int) -> bool:
        value = self.catalog.types[source]
        if pseudo in _ALWAYS_MATCHING:
            return True
        if pseudo in _NON_ARRAY:
            return not value.is_array
        if pseudo in _ARRAY:
            return value.is_array
        if pseudo in _RANGE:
            return value.kind == "r"
        if pseudo in _MULTIRANGE:
            return value.kind == "m"
        if pseudo == "anyenum":
            return value.kind == "e"
        if pseudo == "record":
            return value.kind == "c" or value.name == "record"
        if pseudo == "_record":
            return value.is_array and self.catalog.types.get(value.element, value).kind in {"c", "p"}
        return False

    def feeds(self, types: TypeSet, parameter: int) -> bool:
        """True when some type of ``types`` could be passed where ``parameter`` is declared."""
        target = self.catalog.types.get(parameter)
        for source in types:
            if source == UNKNOWN:
                return True
            if source == UNKNOWN_TEXT:
                if target is None or target.name not in _POINT_LISTS:
                    return True
            elif source == ANY:
                if target is None or target.kind == "p" or self._any_feeds(parameter):
                    return True
            elif self.type_feeds(source, parameter):
                return True
        return False

    def _any_feeds(self, parameter: int) -> bool:
        key = (ANY, parameter)
        cached = self._feeds_cache.get(key)
        if cached is None:
            cached = self._feeds_cache[key] = any(self.type_feeds(t, parameter) for t in self.reachable)
        return cached
