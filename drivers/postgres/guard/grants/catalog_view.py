"""The catalog as one token sees it: each narrowed relation with its granted columns only.

Analysing a query against this view gives the token exactly what the rewritten query will give it: ``*``
and ``t.*`` expand to the granted columns, a hidden column is unknown (the same error as a column that
does not exist, so a refusal tells nothing), a narrowed relation has no system columns (``ctid``...), and
its whole row is an anonymous record, as a sub-select's is.
"""

from __future__ import annotations

import functools

import attrs

from drivers.postgres.guard.grants.table_grant import Narrowing, TableGrant, narrowing_key
from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.types import RelationInfo
from drivers.postgres.guard.policy import GuardPolicy


def narrowed_relation(relation: RelationInfo, grant: TableGrant) -> RelationInfo:
    """``relation`` with the granted columns only, in the relation's order, seen as a sub-select."""
    granted = set(grant.columns) if grant.columns is not None else None
    columns = tuple(c for c in relation.columns if granted is None or c.name in granted)
    return attrs.evolve(relation, columns=columns, narrowed=True)


def narrowed_catalog(catalog: Catalog, narrowing: Narrowing) -> Catalog:
    """``catalog`` with every relation of ``narrowing`` narrowed (relations it does not know are left out)."""
    relations = dict(catalog.relations)
    for key, grant in narrowing.items():
        relation = relations.get(key)
        if relation is not None and grant.narrows:
            relations[key] = narrowed_relation(relation, grant)
    return attrs.evolve(catalog, relations=relations)


@functools.lru_cache(maxsize=64)
def _narrowed_policy(policy: GuardPolicy, key: tuple[tuple[tuple[str, str], TableGrant], ...]) -> GuardPolicy:
    return GuardPolicy(narrowed_catalog(policy.catalog, dict(key)), policy.functions, policy.limits)


def narrowed_policy(policy: GuardPolicy, narrowing: Narrowing) -> GuardPolicy:
    """The policy of ``policy``'s database as a token with ``narrowing`` sees it (the same object for the same
    narrowing, so the guard's decision caches keep working)."""
    key = narrowing_key(narrowing)
    return _narrowed_policy(policy, key) if key else policy
