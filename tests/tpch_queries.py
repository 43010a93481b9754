"""TPC-H: the eight tables and the 22 queries with their validation parameters (TPC-H 3.0.1, section 2.4).

The texts live in ``tests/corpora/tpch/`` (see its SOURCE.md for the two
changes the gateway requires); this module keeps the names other tests import.
"""

from __future__ import annotations

from query_corpora import load_queries, schema_sql

TPCH_TABLES_SQL = schema_sql("tpch")
"""CREATE SCHEMA tpch and its eight tables, without data."""

TPCH_TABLES = ("region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem")

TPCH_QUERIES = {int(query_id): sql for query_id, sql in load_queries("tpch")}
"""Query number -> text, with the validation parameters of the specification."""
