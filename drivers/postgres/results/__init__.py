"""The PostgreSQL driver's results: one checked query run through a cursor, and its rows made Python values.

Owns running the query and streaming its batches (``query_runner``:
``StreamingQuery``, ``run_query``), PostgreSQL's text made the contract's values
(``typecasters``, ``deferred_casts``, ``missed_arrays``), the memory bound on a
row and fetch sizes by bytes (``row_bounds``), and psycopg2's failures made the
gateway's errors (``query_errors``).

May import: ``gateway.errors``, ``gateway.contract`` and the driver's
``connections`` room; never the guard (a query reaches it already checked).
"""
