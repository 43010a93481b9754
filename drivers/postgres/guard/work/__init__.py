"""The work a query makes the server do without checking for interrupts, and the memory it holds.

``costs.py`` (with the data of ``cost_rules.py``) prices one call at its
arguments' bounded sizes; ``conversions.py`` prices output and input
functions by type; ``planner.py`` prices the planner's selectivity estimates;
``levels.py`` says how many times a pulled-up sub-select's expression runs per
row; ``charges.py`` charges each expression of a level; ``budget.py`` sums it all for the statement and refuses what passes the
limits.
"""
