"""What a query may run at all: the function allowlist and the types no value may have.

``function_policy.py`` builds the allowlist from the catalog (immutable or
stable built-ins of plain signatures, minus a denylist grouped by reason, plus
the operator's options); ``type_rules.py`` says which types a query may name
and which look catalog objects up or are internal plumbing; ``allowed.py``
holds every expression of the analysed tree to both.
"""
