"""Coercing analysed expressions (``coerce_type``, ``coerce_to_target_type`` and friends of ``parse_coerce.c``).

Where ``coercion.py`` answers whether and how one type becomes another, this
module rewrites the expression: an untyped literal becomes a constant of the
target type (read by that type's input function at parse analysis, which the
checks look at), a cast function becomes a ``Cast`` node naming it, an I/O
conversion or element-wise array coercion is marked as such, and a typmod
(``varchar(20)``, ``numeric(10, 2)``) adds the type's length coercion.
"""

from __future__ import annotations

from drivers.postgres.guard.errors import AnalysisError
from drivers.postgres.guard.model.base import AnalyzerBase
from drivers.postgres.guard.model.coercion import Context, Path
from drivers.postgres.guard.model.ir import Cast, Collate, Const, Expr, Param, Row
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
    BOOL,
    INTERVAL,
    RECORD,
    RECORD_ARRAY,
    UNKNOWN,
)

_PASS_THROUGH = frozenset({ANY, ANYELEMENT, ANYNONARRAY, ANYCOMPATIBLE, ANYCOMPATIBLENONARRAY})
_CONTAINER_PSEUDO = frozenset({ANYARRAY, ANYENUM, ANYRANGE, ANYMULTIRANGE, ANYCOMPATIBLEARRAY,
                               ANYCOMPATIBLERANGE, ANYCOMPATIBLEMULTIRANGE})


class Coercing(AnalyzerBase):
    """Expression coercion, a part of the analyser."""

    def coerce(self, expr: Expr, target: int, typmod: int = -1, context: Context = Context.IMPLICIT,
               *, explicit: bool = False) -> Expr:
        """``coerce_type``: ``expr`` as type ``target`` (the caller has checked that it can be)."""
        source = expr.type
        if source == target:
            return expr
        if target in _PASS_THROUGH:
            return expr
        catalog = self.catalog
        if target in _CONTAINER_PSEUDO and source != UNKNOWN:
            base = catalog.base_type(source)
            return Cast(base, -1, expr, "relabel", explicit=explicit) if base != source else expr
        if source == UNKNOWN and isinstance(expr, Param):
            return self._deduce_parameter(expr, target)
        if source == UNKNOWN and isinstance(expr, Const):
            base, base_typmod = catalog.base_type_and_typmod(target, typmod)
            constant = Const(base, expr.text, expr.literal, expr.location,
                             typmod=base_typmod if base == INTERVAL else -1, parsed_as=base)
            if base == target:
                return constant
            return self._to_domain(constant, base, base_typmod, target, explicit)
        if isinstance(expr, Collate):
            inner = self.coerce(expr.arg, target, typmod, context, explicit=explicit)
            info = catalog.type(target)
            return Collate(inner, expr.collation, expr.location) if info is not None and info.collatable else inner
        path, function_oid = self.coercions.pathway(target, source, context)
        if path is not Path.NONE:
            return self._build(expr, source, target, typmod, context, path, function_oid, explicit)
        if source == RECORD and catalog.is_complex(target):
            return self._record_to_composite(expr, target, context, explicit)
        if target == RECORD and catalog.is_complex(source):
            return expr
        if target == RECORD_ARRAY and catalog.is_complex(catalog.element_type(source)):
            return expr
        raise AnalysisError(f"failed to find conversion function from {catalog.type_display(source)} to "
                            f"{catalog.type_display(target)}")

    def _deduce_parameter(self, param: Param, target: int) -> Param:
        """``variable_coerce_param_hook``: the first coercion of an untyped ``$n`` gives ``$n`` its type; a later
        reference of the still untyped parameter must be coerced to the same one."""
        deduced = self.parameter_types[param.number - 1]
        if deduced == UNKNOWN:
            self.parameter_types[param.number - 1] = target
        elif deduced != target:
            raise AnalysisError(f"inconsistent types deduced for parameter ${param.number}",
                                hint=f"{self.catalog.type_display(deduced)} versus "
                                     f"{self.catalog.type_display(target)}")
        deduced_param = Param(target, param.number, param.unread, param.location)
        deduced_param.value_read = param.value_read
        return deduced_param

    def _build(self, expr: Expr, source: int, target: int, typmod: int, context: Context, path: Path,
               function_oid: int, explicit: bool) -> Expr:
        catalog = self.catalog
        base, base_typmod = catalog.base_type_and_typmod(target, typmod)
        if path is Path.ARRAY:
            source_element = catalog.element_type(catalog.base_type(source))
            target_element = catalog.element_type(base)
            placeholder = Expr(source_element)
            element = self.coerce(placeholder, target_element, -1, context, explicit=explicit)
            result: Expr = Cast(base, -1, expr, "array", explicit=explicit,
                                element=element if isinstance(element, Cast) else None)
        elif path is Path.FUNCTION:
            function = catalog.functions.get(function_oid)
            result = Cast(base, -1, expr, "function", function=function, explicit=explicit)
        elif path is Path.IO:
            result = Cast(base, -1, expr, "io", explicit=explicit)
        else:
            result = Cast(base, expr.typmod if base == catalog.base_type(source) else -1, expr, "relabel",
                          explicit=explicit)
        if base != target:
            return self._to_domain(result, base, base_typmod, target, explicit)
        return result

    def _to_domain(self, expr: Expr, base: int, base_typmod: int, domain: int, explicit: bool) -> Expr:
        if base_typmod >= 0:
            expr = self.coerce_typmod(expr, base, base_typmod, explicit=explicit)
        return Cast(domain, -1, expr, "domain", explicit=explicit)

    def _record_to_composite(self, expr: Expr, target: int, context: Context, explicit: bool) -> Expr:
        relation = self.catalog.relation_of_type(target)
        if isinstance(expr, Row) and relation is not None:
            if len(expr.args) != len(relation.columns):
                raise AnalysisError(f"cannot cast type record to {self.catalog.type_display(target)}")
            args = []
            for arg, column in zip(expr.args, relation.columns):
                coerced = self.coerce_to_target(arg, column.type, column.typmod, context)
                if coerced is None:
                    raise AnalysisError(f"cannot cast type {self.catalog.type_display(arg.type)} to "
                                        f"{self.catalog.type_display(column.type)}")
                args.append(coerced)
            return Row(target, args, [c.name for c in relation.columns], expr.location)
        return Cast(target, -1, expr, "row", explicit=explicit)

    def coerce_typmod(self, expr: Expr, target: int, typmod: int, *, explicit: bool = False) -> Expr:
        """``coerce_type_typmod``: apply the type's length coercion for ``typmod`` (``varchar(20)``...)."""
        if typmod == expr.typmod:
            return expr
        if typmod < 0:  # no coercion, but the expression exposes the typmod asked for
            return Cast(target, -1, expr, "relabel", explicit=explicit)
        catalog = self.catalog
        element = catalog.element_type(target)
        length_type = element if element and catalog.type(target) is not None else target
        cast = catalog.cast(length_type, length_type)
        result = Cast(target, typmod, expr, "relabel", explicit=explicit)
        if cast is not None and cast.function:
            result.length_function = catalog.functions.get(cast.function)
            result.path = "array" if element else "length"
        return result

    def coerce_to_target(self, expr: Expr, target: int, typmod: int = -1, context: Context = Context.IMPLICIT,
                         *, explicit: bool = False) -> Expr | None:
        """``coerce_to_target_type``: ``expr`` coerced to ``target(typmod)``, or None when it cannot be."""
        if not self.coercions.can_coerce((expr.type,), (target,), context):
            return None
        result = self.coerce(expr, target, typmod, context, explicit=explicit)
        return self.coerce_typmod(result, target, typmod, explicit=explicit)

    def coerce_to_boolean(self, expr: Expr, construct: str) -> Expr:
        """``coerce_to_boolean``: a condition (WHERE, AND, CASE WHEN...) must be boolean."""
        if expr.type != BOOL:
            coerced = self.coerce_to_target(expr, BOOL)
            if coerced is None:
                raise AnalysisError(f"argument of {construct} must be type boolean, not type "
                                    f"{self.catalog.type_display(expr.type)}")
            expr = coerced
        if getattr(expr, "returns_set", False):
            raise AnalysisError(f"argument of {construct} must not return a set")
        return expr

    def coerce_to_specific(self, expr: Expr, target: int, construct: str, typmod: int = -1) -> Expr:
        """``coerce_to_specific_type``: LIMIT's count, a frame offset..."""
        if expr.type != target:
            coerced = self.coerce_to_target(expr, target, typmod, Context.ASSIGNMENT)
            if coerced is None:
                raise AnalysisError(f"argument of {construct} must be type {self.catalog.type_display(target)}, "
                                    f"not type {self.catalog.type_display(expr.type)}")
            expr = coerced
        if getattr(expr, "returns_set", False):
            raise AnalysisError(f"argument of {construct} must not return a set")
        return expr

    def coerce_to_common(self, expr: Expr, target: int, construct: str) -> Expr:
        """``coerce_to_common_type``: one branch of a UNION, CASE, ARRAY... to the common type."""
        if expr.type == target:
            return expr
        if not self.coercions.can_coerce((expr.type,), (target,)):
            raise AnalysisError(f"{construct} could not convert type {self.catalog.type_display(expr.type)} "
                                f"to {self.catalog.type_display(target)}")
        return self.coerce(expr, target)

    def common_typmod(self, exprs: list[Expr], common: int) -> int:
        """``select_common_typmod``: the typmod all of ``exprs`` share, else -1."""
        result = None
        for expr in exprs:
            if expr.type != common:
                return -1
            if result is None:
                result = expr.typmod
            elif result != expr.typmod:
                return -1
        return -1 if result is None else result
