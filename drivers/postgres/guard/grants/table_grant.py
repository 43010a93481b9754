"""What one token's grant of one relation narrows: its columns, its rows."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

Relation = tuple[str, str]
"""(schema, name), as PostgreSQL resolves them."""


@attrs.frozen
class TableGrant:
    """A grant narrower than the whole relation."""

    columns: tuple[str, ...] | None = None
    """The granted columns (None: every column), as the relation names them."""
    row_filter: str | None = None
    """A boolean expression over the relation's own columns, as ``row_filters.normalized_filter`` wrote it
    (None: every row)."""

    @property
    def narrows(self) -> bool:
        """True unless the grant is the whole relation."""
        return self.columns is not None or self.row_filter is not None


Narrowing = Mapping[Relation, TableGrant]
"""The narrowed relations of one token, with what each grant narrows (whole grants left out)."""


def narrowing_key(narrowing: Narrowing) -> tuple[tuple[Relation, TableGrant], ...]:
    """A hashable, ordered form of ``narrowing`` (for caches)."""
    return tuple(sorted((relation, grant) for relation, grant in narrowing.items() if grant.narrows))
