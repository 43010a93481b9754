"""Upper bounds on the size of every value, as PostgreSQL prints and holds it.

``bounds.py`` is the algebra (the query's constants, the administrator's
stored data of known and unknown size); ``size_model.py`` gives each
expression of the analysed tree its bound (``counts.py``: the numbers and row
counts its rules read), from literals at their printed
size (``literals.py``, ``jsonpath.py``, ``json_sizes.py``), what a type alone
allows and what text of one type becomes as another (``type_sizes.py``), and
the rules of functions by name (``rules.py``, ``rules_structured.py``,
``rules_fixed.py``, ``rules_sets.py`` for rows). A function with no rule is
unbounded.
"""
