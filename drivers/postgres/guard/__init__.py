"""The SQL guard: whether one GetData query may run, decided before it reaches the database.

A query passes once through the passes of ``sql_guard.check_query``:

1. ``structure/``: the raw parse tree (one plain SELECT, allowed node kinds,
   schema-qualified relations, built-in names);
2. the grant check of the relations it reads (``sql_guard.py``);
3. ``model/``: every expression typed as PostgreSQL types it, against the
   database's catalog;
4. ``checks.py`` over the analysed tree: what runs is allowed (``rules/``),
   every value's size is bounded (``sizes/``) and within the caps, and the
   uninterruptible work and memory of the statement fit the budget
   (``work/``).

``policy.py`` holds what the checks decide from (the catalog, the allowlist,
the operator's limits); ``cache.py`` reuses decisions across numeric
constants; ``process.py`` and ``child.py`` check long texts in a child
process; ``inheritance.py`` rewrites an accepted query to read every table as
``ONLY``. docs/security.md, Layer 1, describes the model for a reviewer.
"""
