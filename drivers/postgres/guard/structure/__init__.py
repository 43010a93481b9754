"""Pass 1 of the guard: the raw parse tree (pglast), before any name is resolved.

``walk.py`` holds the statement to one plain SELECT of allowed node kinds
(``node_kinds.py``), collects every relation (schema-qualified, three-part
names refused) and every function, operator, type and collation name, which
must be built in; ``names.py`` reads names from the tree and writes them into
messages.
"""
