"""Pass 3 of the guard: the type model, every expression typed as PostgreSQL's parse analysis types it.

``catalog.py`` reads one database's catalog (``CATALOG_SQL``) into a
``Catalog`` of ``types.py`` rows; ``analysis.py`` assembles the ``Analyzer``
from its parts (``selects.py``, ``from_clause.py``, ``clauses.py``,
``expressions.py``, ``columns.py``, ``calls.py``, ``operators.py``,
``coerce.py``, declared in ``base.py``), which resolve names in their
scopes (``scope.py``), functions and operators (``resolution.py``) and casts
(``coercion.py``), and build the analysed tree of ``ir.py``. ``render.py``
writes an expression back as short SQL for messages. What PostgreSQL would
refuse raises ``errors.AnalysisError`` with PostgreSQL's words.
"""
