"""What the parts of the analyser share: the catalog, and the methods each part offers the others.

The analyser (``analysis.Analyzer``) is one class assembled from parts, one
module each: expressions, calls, operators, coercion, FROM items and SELECT
levels. Each part subclasses ``AnalyzerBase``, which declares the methods the
parts call across module boundaries; the part that implements one overrides
its declaration here.
"""

from __future__ import annotations

from typing import Any

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.coercion import Coercions, Context
from drivers.postgres.guard.model.ir import Expr, Query, RangeEntry, SortItem, Target, Window
from drivers.postgres.guard.model.resolution import Resolver
from drivers.postgres.guard.model.scope import NamespaceItem, ParseState

Raw = dict[str, Any]
"""A node of pglast's JSON parse tree."""


class AnalyzerBase:
    """The catalog and the cross-part methods of the analyser."""

    catalog: Catalog
    coercions: Coercions
    resolver: Resolver
    value_locations: set[int]
    parameter_values: tuple[str | None, ...]
    """The values sent beside the query for ``$1``..``$n`` (text, or None for NULL)."""
    parameter_types: list[int]
    """The type deduced for each ``$n`` so far (``unknown`` until a coercion says)."""

    # expressions.py
    def expr(self, node: Raw | None, state: ParseState) -> Expr:
        raise NotImplementedError

    def exprs(self, nodes: list[Raw] | None, state: ParseState) -> list[Expr]:
        raise NotImplementedError

    def array_expr(self, body: Raw, state: ParseState, array_type: int, element_type: int, typmod: int) -> Expr:
        raise NotImplementedError

    def subscripts(self, container: Expr, indices: list[Raw], state: ParseState) -> Expr:
        raise NotImplementedError

    # coerce.py
    def coerce(self, expr: Expr, target: int, typmod: int = -1, context: Context = Context.IMPLICIT,
               *, explicit: bool = False) -> Expr:
        raise NotImplementedError

    def coerce_to_target(self, expr: Expr, target: int, typmod: int = -1, context: Context = Context.IMPLICIT,
                         *, explicit: bool = False) -> Expr | None:
        raise NotImplementedError

    def coerce_to_boolean(self, expr: Expr, construct: str) -> Expr:
        raise NotImplementedError

    def coerce_to_specific(self, expr: Expr, target: int, construct: str, typmod: int = -1) -> Expr:
        raise NotImplementedError

    def coerce_to_common(self, expr: Expr, target: int, construct: str) -> Expr:
        raise NotImplementedError

    def coerce_typmod(self, expr: Expr, target: int, typmod: int, *, explicit: bool = False) -> Expr:
        raise NotImplementedError

    def common_typmod(self, exprs: list[Expr], common: int) -> int:
        raise NotImplementedError

    # columns.py
    def column_ref(self, body: Raw, state: ParseState) -> Expr:
        raise NotImplementedError

    def item_for(self, state: ParseState, schema: str | None, name: str) -> tuple[NamespaceItem, int] | None:
        raise NotImplementedError

    # calls.py
    def function_call(self, body: Raw, state: ParseState) -> Expr:
        raise NotImplementedError

    def function_or_column(self, name: str, arg: Expr, state: ParseState) -> Expr | None:
        raise NotImplementedError

    def unknown_attribute(self, arg: Expr, name: str) -> str:
        raise NotImplementedError

    def row_fields(self, expr: Expr) -> list[tuple[str, int, int]] | None:
        raise NotImplementedError

    # operators.py
    def operator_expr(self, body: Raw, state: ParseState) -> Expr:
        raise NotImplementedError

    def binary_operator(self, name: str, left: Expr, right: Expr, location: int = -1) -> Expr:
        raise NotImplementedError

    def row_comparison(self, name: str, left: list[Expr], right: list[Expr], location: int = -1) -> Expr:
        raise NotImplementedError

    # selects.py
    def sub_select(self, node: Raw, state: ParseState) -> Query:
        raise NotImplementedError

    def target_expressions(self, nodes: list[Raw] | None, state: ParseState) -> list[Expr]:
        raise NotImplementedError

    def figure_name(self, node: Raw | None) -> str:
        raise NotImplementedError

    # from_clause.py
    def from_clause(self, items: list[Raw], state: ParseState, query_entries: list[RangeEntry]) -> list[RangeEntry]:
        raise NotImplementedError

    # clauses.py
    def window_reference(self, over: Raw, state: ParseState) -> Window:
        raise NotImplementedError

    def window_definition(self, definition: Raw, state: ParseState) -> Window:
        raise NotImplementedError

    def target_list(self, nodes: list[Raw] | None, state: ParseState) -> list[Target]:
        raise NotImplementedError

    def target_entry(self, node: Raw, targets: list[Target], state: ParseState, construct: str,
                     *, sql99: bool = False) -> Expr:
        raise NotImplementedError

    def resolve_unknown_targets(self, targets: list[Target]) -> None:
        raise NotImplementedError

    def where_clause(self, node: Raw | None, state: ParseState, construct: str) -> Expr | None:
        raise NotImplementedError

    def sort_clause(self, items: list[Raw] | None, targets: list[Target], state: ParseState,
                    *, sql99: bool = False) -> list[SortItem]:
        raise NotImplementedError

    def group_clause(self, items: list[Raw] | None, targets: list[Target], state: ParseState) -> list[Expr]:
        raise NotImplementedError

    def limit_clause(self, node: Raw | None, state: ParseState, construct: str) -> Expr | None:
        raise NotImplementedError
