"""Which types convert to which, as PostgreSQL's ``parse_coerce.c`` decides it.

``Coercions`` answers the questions function, operator and common-type
resolution ask: can a value of type A be coerced to type B in a context
(``can_coerce``), how (``pathway``: a cast function, a relabelling, an I/O
conversion, an element-wise array coercion), which type a list of types
unifies to (``common_type``, the rules of UNION, CASE, ARRAY, VALUES), and
how polymorphic parameters resolve (``check_polymorphic``,
``resolve_polymorphic``). Each method follows the C function it is named
after; the manual describes the rules in chapter "Type Conversion".
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from drivers.postgres.guard.errors import AnalysisError
from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.types import (
    ANY,
    ANYARRAY,
    ANYCOMPATIBLE,
    ANYCOMPATIBLEARRAY,
    ANYCOMPATIBLEMULTIRANGE,
    ANYCOMPATIBLENONARRAY,
    ANYCOMPATIBLERANGE,
    ANYELEMENT,
    ANYENUM,
    ANYMULTIRANGE,
    ANYNONARRAY,
    ANYRANGE,
    INT2VECTOR,
    INTERNAL,
    OIDVECTOR,
    POLYMORPHIC,
    POLYMORPHIC_FAMILY_1,
    RECORD,
    RECORD_ARRAY,
    TEXT,
    TEXT_ARRAY,
    UNKNOWN,
)


class Context(enum.IntEnum):
    """``CoercionContext``: which casts a conversion may use (ordered: explicit allows the most)."""

    IMPLICIT = 0
    ASSIGNMENT = 1
    EXPLICIT = 3


class Path(enum.Enum):
    """``CoercionPathType``."""

    NONE = "none"
    FUNCTION = "function"
    RELABEL = "relabel"
    ARRAY = "array"
    IO = "io"


_CAST_CONTEXTS = {"i": Context.IMPLICIT, "a": Context.ASSIGNMENT, "e": Context.EXPLICIT}


class Coercions:
    """Coercion rules over one catalog, with the pathway answers remembered."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._paths: dict[tuple[int, int, Context], tuple[Path, int]] = {}

    def pathway(self, target: int, source: int, context: Context) -> tuple[Path, int]:
        """``find_coercion_pathway``: how ``source`` becomes ``target``, and the cast function's OID (or 0)."""
        key = (target, source, context)
        found = self._paths.get(key)
        if found is None:
            found = self._paths[key] = self._pathway(target, source, context)
        return found

    def _pathway(self, target: int, source: int, context: Context) -> tuple[Path, int]:
        catalog = self.catalog
        source = catalog.base_type(source) if source else source
        target = catalog.base_type(target) if target else target
        if source == target:
            return Path.RELABEL, 0
        cast = catalog.cast(source, target)
        if cast is not None:
            if context >= _CAST_CONTEXTS.get(cast.context, Context.EXPLICIT):
                if cast.method == "f":
                    return Path.FUNCTION, cast.function
                if cast.method == "i":
                    return Path.IO, 0
                return Path.RELABEL, 0
            return Path.NONE, 0
        if target not in (OIDVECTOR, INT2VECTOR):
            target_element = catalog.element_type(target)
            source_element = catalog.element_type(source)
            if target_element and source_element:
                if self.pathway(target_element, source_element, context)[0] is not Path.NONE:
                    return Path.ARRAY, 0
        if context >= Context.ASSIGNMENT and catalog.category(target) == "S":
            return Path.IO, 0
        if context >= Context.EXPLICIT and catalog.category(source) == "S":
            return Path.IO, 0
        return Path.NONE, 0

    def can_coerce(self, inputs: Sequence[int], targets: Sequence[int], context: Context = Context.IMPLICIT) -> bool:
        """``can_coerce_type``: every input can become its target (polymorphic targets checked together)."""
        catalog = self.catalog
        generic = False
        for source, target in zip(inputs, targets):
            if source == target or target == ANY:
                continue
            if target in POLYMORPHIC:
                generic = True
                continue
            if source == UNKNOWN:
                if target == INTERNAL:  # PostgreSQL 15.20 no longer reads a literal as "internal"
                    return False
                continue
            if self.pathway(target, source, context)[0] is not Path.NONE:
                continue
            if source == RECORD and catalog.is_complex(target):
                continue
            if target == RECORD and catalog.is_complex(source):
                continue
            if target == RECORD_ARRAY and catalog.is_complex(catalog.element_type(source)):
                continue
            return False
        return not generic or self.check_polymorphic(inputs, targets)

    def is_binary_coercible(self, source: int, target: int) -> bool:
        """``IsBinaryCoercible``: the value can be used as ``target`` without any conversion."""
        catalog = self.catalog
        if source == target or target in (ANY, ANYELEMENT, ANYCOMPATIBLE):
            return True
        source = catalog.base_type(source) if source else source
        if source == target:
            return True
        is_array = catalog.element_type(source) != 0
        if target in (ANYARRAY, ANYCOMPATIBLEARRAY) and is_array:
            return True
        if target in (ANYNONARRAY, ANYCOMPATIBLENONARRAY) and not is_array:
            return True
        info = catalog.type(source)
        kind = info.kind if info is not None else ""
        if target == ANYENUM and kind == "e":
            return True
        if target in (ANYRANGE, ANYCOMPATIBLERANGE) and kind == "r":
            return True
        if target in (ANYMULTIRANGE, ANYCOMPATIBLEMULTIRANGE) and kind == "m":
            return True
        if target == RECORD and kind == "c":
            return True
        if target == RECORD_ARRAY and catalog.is_complex(catalog.element_type(source)):
            return True
        cast = catalog.cast(source, target)
        return cast is not None and cast.method == "b" and cast.context == "i"

    def common_type(self, types: Sequence[int], context: str | None) -> int:
        """``select_common_type``: the type a list of types unifies to (unknown alone gives text).

        With ``context`` None, answers 0 where PostgreSQL would raise "... types X and Y cannot be matched".
        """
        catalog = self.catalog
        first = types[0]
        if first != UNKNOWN and all(t == first for t in types[1:]):
            return first
        ptype = catalog.base_type(first)
        pcategory, ppreferred = catalog.category(ptype), catalog.is_preferred(ptype)
        for oid in types[1:]:
            ntype = catalog.base_type(oid)
            if ntype == UNKNOWN or ntype == ptype:
                continue
            ncategory, npreferred = catalog.category(ntype), catalog.is_preferred(ntype)
            if ptype == UNKNOWN:
                ptype, pcategory, ppreferred = ntype, ncategory, npreferred
            elif ncategory != pcategory:
                if context is None:
                    return 0
                raise AnalysisError(f"{context} types {catalog.type_display(ptype)} and "
                                    f"{catalog.type_display(ntype)} cannot be matched")
            elif (not ppreferred and self.can_coerce((ptype,), (ntype,))
                  and not self.can_coerce((ntype,), (ptype,))):
                ptype, pcategory, ppreferred = ntype, ncategory, npreferred
        return TEXT if ptype == UNKNOWN else ptype

    def verify_common_type(self, common: int, types: Sequence[int]) -> bool:
        """``verify_common_type``: every type coerces implicitly to ``common``."""
        return all(self.can_coerce((oid,), (common,)) for oid in types)

    def check_polymorphic(self, actual: Sequence[int], declared: Sequence[int]) -> bool:
        """``check_generic_type_consistency``: could these arguments feed these polymorphic parameters?"""
        try:
            self._polymorphic(list(actual), list(declared), 0, check_only=True)
        except _Inconsistent:
            return False
        return True

    def resolve_polymorphic(self, actual: Sequence[int], declared: list[int], result: int) -> int:
        """``enforce_generic_type_consistency``: resolve ``declared`` in place and answer the result type."""
        try:
            return self._polymorphic(list(actual), declared, result, check_only=False)
        except _Inconsistent as error:
            raise AnalysisError(str(error)) from None

    def _polymorphic(self, actual: list[int], declared: list[int], result: int, *, check_only: bool) -> int:
        catalog = self.catalog
        state = _PolymorphicState(result)
        for decl, act in zip(declared, actual):
            state.collect(catalog, decl, act)
        if not check_only and not state.poly_args and not state.has_anycompatible:
            return result
        element = state.element
        if state.poly_args or check_only:
            element = self._family_one(state, check_only=check_only)
        common = array_common = range_common = multirange_common = 0
        if state.has_anycompatible or check_only:
            common, array_common, range_common, multirange_common = self._family_two(state, check_only=check_only)
        if check_only:
            return 0
        for position, decl in enumerate(declared):
            if decl in (ANYCOMPATIBLE, ANYCOMPATIBLENONARRAY):
                declared[position] = common
            elif decl == ANYCOMPATIBLEARRAY:
                declared[position] = array_common
            elif decl == ANYCOMPATIBLERANGE:
                declared[position] = range_common
            elif decl == ANYCOMPATIBLEMULTIRANGE:
                declared[position] = multirange_common
        if state.poly_unknowns:
            for position, (decl, act) in enumerate(zip(list(declared), actual)):
                if act != UNKNOWN:
                    continue
                if decl in (ANYELEMENT, ANYNONARRAY, ANYENUM):
                    declared[position] = element
                elif decl == ANYARRAY:
                    if not state.array:
                        state.array = catalog.array_type(element)
                        if not state.array:
                            raise AnalysisError(f"could not find array type for data type "
                                                f"{catalog.type_display(element)}")
                    declared[position] = state.array
                elif decl == ANYRANGE:
                    if not state.range:
                        raise AnalysisError("could not determine polymorphic type anyrange because input "
                                            "has type unknown")
                    declared[position] = state.range
                elif decl == ANYMULTIRANGE:
                    if not state.multirange:
                        raise AnalysisError("could not determine polymorphic type anymultirange because input "
                                            "has type unknown")
                    declared[position] = state.multirange
        return self._resolved_result(state, result, element, common, array_common, range_common, multirange_common)

    def _resolved_result(self, state: _PolymorphicState, result: int, element: int, common: int,
                         array_common: int, range_common: int, multirange_common: int) -> int:
        catalog = self.catalog
        if result in (ANYELEMENT, ANYNONARRAY, ANYENUM):
            return element
        if result == ANYARRAY:
            if not state.array:
                state.array = catalog.array_type(element)
                if not state.array:
                    raise AnalysisError(f"could not find array type for data type {catalog.type_display(element)}")
            return state.array
        if result == ANYRANGE:
            return state.range
        if result == ANYMULTIRANGE:
            return state.multirange
        if result in (ANYCOMPATIBLE, ANYCOMPATIBLENONARRAY):
            return common
        if result == ANYCOMPATIBLEARRAY:
            return array_common
        if result == ANYCOMPATIBLERANGE:
            return range_common
        if result == ANYCOMPATIBLEMULTIRANGE:
            return multirange_common
        return result

    def _family_one(self, state: _PolymorphicState, *, check_only: bool) -> int:
        catalog = self.catalog
        element = state.element
        if state.array:
            if state.array == ANYARRAY:
                array_element = ANYELEMENT
            else:
                array_element = catalog.element_type(state.array)
                if not array_element:
                    raise _Inconsistent(f"argument declared anyarray is not an array but type "
                                        f"{catalog.type_display(state.array)}")
            if not element:
                element = array_element
            elif array_element != element:
                raise _Inconsistent('argument declared anyarray is not consistent with argument declared anyelement')
        if state.multirange:
            multirange_range = catalog.types[state.multirange].multirange_range \
                if state.multirange in catalog.types else 0
            if not multirange_range:
                raise _Inconsistent(f"argument declared anymultirange is not a multirange type but type "
                                    f"{catalog.type_display(state.multirange)}")
            if not state.range:
                state.range = multirange_range
            elif multirange_range != state.range:
                raise _Inconsistent("argument declared anymultirange is not consistent with argument declared "
                                    "anyrange")
        elif state.has_anymultirange and state.range and not check_only:
            info = catalog.type(state.range)
            state.multirange = info.multirange if info is not None else 0
        if state.range:
            info = catalog.type(state.range)
            subtype = info.range_subtype if info is not None else 0
            if not subtype:
                raise _Inconsistent(f"argument declared anyrange is not a range type but type "
                                    f"{catalog.type_display(state.range)}")
            if not element:
                element = subtype
            elif subtype != element:
                raise _Inconsistent("argument declared anyrange is not consistent with argument declared anyelement")
        if not element:
            if check_only:
                if state.has_anyenum:  # type_is_enum(InvalidOid) is false
                    raise _Inconsistent("type matched to anyenum is not an enum type")
                return 0
            raise _Inconsistent("could not determine polymorphic type because input has type unknown")
        if state.has_anynonarray and element != ANYELEMENT and catalog.is_array_domain(element):
            raise _Inconsistent(f"type matched to anynonarray is an array type: {catalog.type_display(element)}")
        if state.has_anyenum and element != ANYELEMENT:
            info = catalog.type(element)
            if info is None or info.kind != "e":
                raise _Inconsistent(f"type matched to anyenum is not an enum type: {catalog.type_display(element)}")
        return element

    def _family_two(self, state: _PolymorphicState, *, check_only: bool) -> tuple[int, int, int, int]:
        catalog = self.catalog
        actual = state.anycompatible_types
        if state.anycompatible_multirange:
            if state.anycompatible_range:
                if state.anycompatible_multirange_range != state.anycompatible_range:
                    raise _Inconsistent("argument declared anycompatiblemultirange is not consistent with "
                                        "argument declared anycompatiblerange")
            else:
                state.anycompatible_range = state.anycompatible_multirange_range
                info = catalog.type(state.anycompatible_range)
                state.anycompatible_range_subtype = info.range_subtype if info is not None else 0
                if not state.anycompatible_range_subtype:
                    raise _Inconsistent("argument declared anycompatiblemultirange is not a multirange type")
                state.has_anycompatible_range = True
                actual.append(state.anycompatible_range_subtype)
        elif state.has_anycompatible_multirange and state.anycompatible_range and not check_only:
            info = catalog.type(state.anycompatible_range)
            state.anycompatible_multirange = info.multirange if info is not None else 0
        if not actual:
            if check_only:
                return 0, 0, 0, 0
            if state.has_anycompatible_range or state.has_anycompatible_multirange:
                kind = "anycompatiblerange" if state.has_anycompatible_range else "anycompatiblemultirange"
                raise _Inconsistent(f"could not determine polymorphic type {kind} because input has type unknown")
            return TEXT, TEXT_ARRAY, 0, 0
        common = self.common_type(actual, None if check_only else "argument")
        if not common or not self.verify_common_type(common, actual):
            raise _Inconsistent("arguments declared \"anycompatible\" are not all alike")
        array_common = 0
        if state.has_anycompatible_array and not check_only:
            array_common = catalog.array_type(common)
            if not array_common:
                raise _Inconsistent(f"could not find array type for data type {catalog.type_display(common)}")
        if state.has_anycompatible_range and not check_only and not state.anycompatible_range:
            raise _Inconsistent("could not determine polymorphic type anycompatiblerange because input has type "
                                "unknown")
        if state.anycompatible_range_subtype and state.anycompatible_range_subtype != common:
            raise _Inconsistent("argument declared anycompatiblerange is not consistent with the other arguments")
        if state.has_anycompatible_multirange and not check_only and not state.anycompatible_multirange:
            raise _Inconsistent("could not determine polymorphic type anycompatiblemultirange because input has "
                                "type unknown")
        if state.has_anycompatible_nonarray and catalog.is_array_domain(common):
            raise _Inconsistent(f"type matched to anycompatiblenonarray is an array type: "
                                f"{catalog.type_display(common)}")
        return common, array_common, state.anycompatible_range, state.anycompatible_multirange


class _Inconsistent(Exception):
    """The arguments cannot feed the polymorphic parameters; the text is PostgreSQL's error."""


class _PolymorphicState:
    """What the arguments say about each polymorphic family (the locals of the C functions)."""

    def __init__(self, result: int) -> None:
        self.element = self.array = self.range = self.multirange = 0
        self.poly_args = 0
        self.poly_unknowns = False
        self.has_anynonarray = result == ANYNONARRAY
        self.has_anyenum = result == ANYENUM
        self.has_anymultirange = result == ANYMULTIRANGE
        self.has_anycompatible = False
        self.has_anycompatible_nonarray = result == ANYCOMPATIBLENONARRAY
        self.has_anycompatible_array = result == ANYCOMPATIBLEARRAY
        self.has_anycompatible_range = result == ANYCOMPATIBLERANGE
        self.has_anycompatible_multirange = result == ANYCOMPATIBLEMULTIRANGE
        self.anycompatible_types: list[int] = []
        self.anycompatible_range = self.anycompatible_range_subtype = 0
        self.anycompatible_multirange = self.anycompatible_multirange_range = 0

    def collect(self, catalog: Catalog, declared: int, actual: int) -> None:
        if declared in POLYMORPHIC_FAMILY_1:
            self.poly_args += 1
            self.has_anynonarray |= declared == ANYNONARRAY
            self.has_anyenum |= declared == ANYENUM
            self.has_anymultirange |= declared == ANYMULTIRANGE
            if actual == UNKNOWN:
                self.poly_unknowns = True
                return
            if declared in (ANYELEMENT, ANYNONARRAY, ANYENUM):
                self._same("element", actual, "anyelement")
            else:
                name = {ANYARRAY: "array", ANYRANGE: "range", ANYMULTIRANGE: "multirange"}[declared]
                self._same(name, catalog.base_type(actual), "any" + name)
            return
        if declared not in (ANYCOMPATIBLE, ANYCOMPATIBLENONARRAY, ANYCOMPATIBLEARRAY, ANYCOMPATIBLERANGE,
                            ANYCOMPATIBLEMULTIRANGE):
            return
        self.has_anycompatible = True
        self.has_anycompatible_nonarray |= declared == ANYCOMPATIBLENONARRAY
        self.has_anycompatible_array |= declared == ANYCOMPATIBLEARRAY
        self.has_anycompatible_range |= declared == ANYCOMPATIBLERANGE
        self.has_anycompatible_multirange |= declared == ANYCOMPATIBLEMULTIRANGE
        if actual == UNKNOWN:
            return
        if declared in (ANYCOMPATIBLE, ANYCOMPATIBLENONARRAY):
            self.anycompatible_types.append(actual)
        elif declared == ANYCOMPATIBLEARRAY:
            element = catalog.element_type(catalog.base_type(actual))
            if not element:
                raise _Inconsistent(f"argument declared anycompatiblearray is not an array but type "
                                    f"{catalog.type_display(actual)}")
            self.anycompatible_types.append(element)
        elif declared == ANYCOMPATIBLERANGE:
            actual = catalog.base_type(actual)
            if self.anycompatible_range:
                if self.anycompatible_range != actual:
                    raise _Inconsistent("arguments declared \"anycompatiblerange\" are not all alike")
                return
            info = catalog.type(actual)
            subtype = info.range_subtype if info is not None else 0
            if not subtype:
                raise _Inconsistent(f"argument declared anycompatiblerange is not a range type but type "
                                    f"{catalog.type_display(actual)}")
            self.anycompatible_range, self.anycompatible_range_subtype = actual, subtype
            self.anycompatible_types.append(subtype)
        else:
            actual = catalog.base_type(actual)
            if self.anycompatible_multirange:
                if self.anycompatible_multirange != actual:
                    raise _Inconsistent("arguments declared \"anycompatiblemultirange\" are not all alike")
                return
            info = catalog.type(actual)
            rng = info.multirange_range if info is not None else 0
            if not rng:
                raise _Inconsistent(f"argument declared anycompatiblemultirange is not a multirange type but "
                                    f"type {catalog.type_display(actual)}")
            self.anycompatible_multirange, self.anycompatible_multirange_range = actual, rng

    def _same(self, slot: str, actual: int, name: str) -> None:
        current = getattr(self, slot)
        if current and current != actual:
            raise _Inconsistent(f'arguments declared "{name}" are not all alike')
        setattr(self, slot, actual)
