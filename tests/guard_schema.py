"""The tables the guard's unit tests name, typed as those tests mean them (the type model reads the catalog).

``GUARD_SCHEMA_SQL`` builds them in a scratch database; ``conftest.guard_database`` holds one for the whole
run, and the ``policy`` fixture reads its catalog as a pool does. Columns of ``s.t`` and ``s.u`` are named
for their types (``poly_col``, ``doc``, ``tags``...) so that a test's query says what it compares.
"""

from __future__ import annotations

from repository_scripts import script
from tpch_queries import TPCH_TABLES_SQL

GUARD_SCHEMA_SQL = TPCH_TABLES_SQL + script("interrupt_statements").AUDIT_TABLES_SQL + """
CREATE SCHEMA sales;
CREATE SCHEMA "Sales";
CREATE SCHEMA hr;
CREATE SCHEMA s;
CREATE SCHEMA pub;
CREATE TYPE sales.address AS (street text, city text, zip text);
CREATE TYPE s.pair AS (field text, amount integer);
CREATE TABLE sales.customers (id integer PRIMARY KEY, customer_id integer, name text, code text, email text,
    note text, created timestamptz, total numeric(12, 2));
CREATE TABLE sales.orders (id integer PRIMARY KEY, customer_id integer, clerk_id integer, total numeric(12, 2),
    status text, note text, created timestamptz, items jsonb, tags text[], address sales.address,
    a integer, b integer, version integer, name text, body text, doc jsonb, qty integer, price numeric);
CREATE TABLE sales.secrets (id integer, secret text);
CREATE TABLE sales.secret (id integer, secret text);
CREATE TABLE sales.items (id integer, note text, name text);
CREATE TABLE "Sales"."Order Lines" ("Qty" integer, "Price" numeric, id integer);
CREATE TABLE "Sales"."Secret Lines" (id integer);
CREATE TABLE public.items (id integer, order_id integer, name text, body text, qty integer);
CREATE TABLE public.docs (id integer PRIMARY KEY, body text, doc jsonb);
CREATE TABLE hr.employees (id integer PRIMARY KEY, manager_id integer, name text, salary numeric, note text);
CREATE TABLE hr.salaries (id integer, amount numeric);
CREATE TABLE pub.items (id integer, note text, name text);
CREATE TABLE pub.parted (id integer, note text, name text) PARTITION BY RANGE (id);
CREATE TABLE pub.parted_low PARTITION OF pub.parted FOR VALUES FROM (MINVALUE) TO (100);
CREATE TABLE s.t (id integer, a text, b text, c text, d text, x integer, y integer, p1 polygon, p2 polygon,
    path1 path, path2 path, point_col point, poly_col polygon, path_col path, box_col box, circle_col circle,
    price numeric, qty integer, doc jsonb, tags text[], during tstzrange, body text, col text, name text,
    flag boolean, rec s.pair, ints integer[], n numeric, i8 bigint, f8 double precision, ts timestamptz,
    d1 date, j json, bits bit varying, bin bytea, tsv tsvector, ranges int4multirange);
CREATE SCHEMA shop;
CREATE SCHEMA sec;
CREATE TABLE shop.items (id integer, name text, note text, price numeric);
CREATE TABLE public.orders (id serial PRIMARY KEY, customer_id integer, note text);
CREATE TABLE public.secrets (id integer, secret text);
CREATE TABLE hr.orders (id integer);
CREATE VIEW hr.salary_view AS SELECT * FROM hr.salaries;
CREATE TABLE sec.items_child () INHERITS (pub.items);
CREATE TABLE pub.other (id integer, note text);
CREATE VIEW pub.items_view AS SELECT * FROM pub.items;
CREATE TABLE s.u (id integer, a text, b text, c text, d text, code text, name text, up1 polygon, ints integer[],
    doc jsonb, tags text[]);
"""
"""The guard tests' schema."""
