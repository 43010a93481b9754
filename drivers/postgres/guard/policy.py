"""``GuardPolicy``: everything the guard decides from one database's catalog and the operator's settings.

Built once per pool (and once in the child process that checks long texts):
the catalog snapshot, the coercion rules over it (their answers remembered
across queries), the function allowlist, the types a query may name, which
built-ins cost the product of their inputs, and the limits of the size and
cost model (``GuardLimits``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import attrs

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.coercion import Coercions
from drivers.postgres.guard.rules.function_policy import FunctionPolicy
from drivers.postgres.guard.rules.type_rules import nameable_types
from drivers.postgres.guard.work.costs import cost_positions

DEFAULT_MAX_BUILT_VALUE_BYTES: Final = 8 * 1024 * 1024
DEFAULT_MAX_EXPRESSION_MILLISECONDS: Final = 1000
DEFAULT_MAX_EXPRESSION_MEMORY_BYTES: Final = 256 * 1024 * 1024
DEFAULT_ASSUMED_DATA_VALUE_BYTES: Final = 64 * 1024
DEFAULT_MAX_DATA_AMPLIFICATION: Final = 4096


@attrs.frozen
class GuardLimits:
    """The operator's limits of the size and cost model (``[drivers.postgres]``; docs/security.md)."""

    max_built_value_bytes: int = DEFAULT_MAX_BUILT_VALUE_BYTES
    """The largest value a query may build from its own constants (``repeat``, ``array_fill``, ...)."""
    max_expression_milliseconds: int = DEFAULT_MAX_EXPRESSION_MILLISECONDS
    """The most uninterruptible work one row's evaluation may take, in estimated milliseconds."""
    max_expression_memory_bytes: int = DEFAULT_MAX_EXPRESSION_MEMORY_BYTES
    """The most memory the values of one row's evaluation may take."""
    assumed_data_value_bytes: int = DEFAULT_ASSUMED_DATA_VALUE_BYTES
    """How large the administrator's data counts where the query multiplies it (a stored value, an
    aggregate of one): the data itself is never capped."""
    max_data_amplification: int = DEFAULT_MAX_DATA_AMPLIFICATION
    """How many times over a query may multiply the administrator's data in one value."""


@attrs.frozen(eq=False, repr=False)
class GuardPolicy:
    """What GetData queries against one database may do, decided from its catalog."""

    catalog: Catalog
    """The database's catalog snapshot."""
    functions: FunctionPolicy
    """The function allowlist (built-in rules plus the operator's options)."""
    limits: GuardLimits = GuardLimits()
    """The size and cost model's limits."""
    coercions: Coercions = attrs.field(init=False)
    """Coercion rules over the catalog, answers remembered."""
    nameable: frozenset[int] = attrs.field(init=False)
    """OIDs of the types a query may name (``type_rules.nameable_types``)."""
    products: Mapping[int, tuple[int, ...]] = attrs.field(init=False)
    """Function OID -> argument positions whose sizes multiply into its time (``cost_rules.py``)."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "coercions", Coercions(self.catalog))
        object.__setattr__(self, "nameable", nameable_types(self.catalog))
        object.__setattr__(self, "products", cost_positions(self.catalog))

    @classmethod
    def from_catalog(cls, catalog: Catalog, *, allow: Iterable[str] = (), deny: Iterable[str] = (),
                     limits: GuardLimits | None = None) -> GuardPolicy:
        """The policy for one database: its catalog plus the operator's options."""
        functions = FunctionPolicy.from_catalog(catalog, allow=allow, deny=deny)
        return cls(catalog, functions, limits or GuardLimits())

    def nameable_type(self, name: str, array_depth: int = 0) -> int | None:
        """The OID a query's type name resolves to when the query may name it, else None."""
        info = self.catalog.types_by_name.get(name)
        if info is None or info.oid not in self.nameable:
            return None
        oid = info.oid
        if array_depth and not info.is_array:
            oid = info.array
        return oid if oid in self.nameable else None
