"""Grants narrower than a table: some of its columns, the rows a filter passes (issue 22).

A token's narrowed grant of a relation is enforced on the SQL it writes, whatever its shape: the guard
checks the query against the token's own view of the catalog (``catalog_view.py``: the relation has the
granted columns only, and no system columns), then rewrites every reference to the relation as a fenced
sub-select that exposes those columns and keeps the rows the administrator's filter passes
(``rewrite.py``). Conditions of the query that are leakproof and read that relation alone are copied into
the sub-select, where they can use its indexes; every other condition runs after the filter
(``leakproof.py``), as PostgreSQL's security-barrier views do. ``row_filters.py`` checks a filter when it
is granted. ``table_grant.py`` holds what a grant narrows.
"""
