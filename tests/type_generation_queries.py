"""Statement makers for query structure: UNION/INTERSECT/EXCEPT and VALUES, FROM items (CTEs, sub-selects,
set-returning functions, joins), sub-queries in expressions and name scoping.
"""

from __future__ import annotations

import random

from type_generation_exprs import related
from type_palette import Palette

# -- set operations and VALUES --------------------------------------------------------------------------------
SET_OPERATORS = ("UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL")


def _branch(values: list[str]) -> str:
    uses_table = any("t." in value or value == "t" for value in values)
    return f"SELECT {', '.join(values)}" + (" FROM tf.t" if uses_table else "")


def set_operations(palette: Palette, rng: random.Random) -> list[str]:
    """Two and three branches, nested with parentheses, one to three columns; VALUES lists of mixed rows."""
    statements: list[str] = []
    for _ in range(260):
        width = rng.choice([1, 1, 2, 3])
        branches = [[] for _ in range(rng.choice([2, 2, 3]))]
        for _ in range(width):
            for branch, value in zip(branches, related(rng, len(branches), same=0.9)):
                branch.append(value)
        if rng.random() < 0.05:
            branches[-1].append("1")  # a column too many
        texts = [_branch(branch) for branch in branches]
        first, second = rng.choice(SET_OPERATORS), rng.choice(SET_OPERATORS)
        if len(texts) == 2:
            statement = f"{texts[0]} {first} {texts[1]}"
        elif rng.random() < 0.5:
            statement = f"({texts[0]} {first} {texts[1]}) {second} {texts[2]}"
        else:
            statement = f"{texts[0]} {first} ({texts[1]} {second} {texts[2]})"
        if rng.random() < 0.15:
            statement += " ORDER BY 1"
        statements.append(statement)
    for _ in range(120):
        width = rng.choice([1, 2, 3])
        rows = rng.choice([1, 2, 3])
        columns = [related(rng, rows) for _ in range(width)]
        literal = [[value for value in column] for column in columns]
        body = ", ".join("(" + ", ".join(column[row] for column in literal) + ")" for row in range(rows))
        if any("t." in value for column in columns for value in column):
            statements.append(f"SELECT v.* FROM tf.t, LATERAL (VALUES {body}) AS v")
        elif rng.random() < 0.5:
            statements.append(f"VALUES {body}")
        else:
            aliases = ", ".join(f"c{index}" for index in range(width))
            statements.append(f"SELECT * FROM (VALUES {body}) AS v({aliases})")
    statements += [
        "SELECT 'a' UNION SELECT 'b'", "SELECT NULL UNION SELECT NULL", "SELECT 1 UNION SELECT 'a'",
        "SELECT 'a' UNION SELECT 1", "SELECT NULL UNION SELECT 1.5", "VALUES (1), ('2'), (3.5)",
        "SELECT c_varchar_20 FROM tf.t UNION SELECT c_varchar_20 FROM tf.t",
        "SELECT c_varchar_20 FROM tf.t UNION SELECT c_text FROM tf.u",
        "SELECT c_numeric_10_2 FROM tf.t UNION ALL SELECT c_numeric_10_2 FROM tf.u",
        "SELECT c_posint FROM tf.t UNION SELECT c_posint FROM tf.t", "SELECT c_posint FROM tf.t UNION SELECT 1",
        "SELECT c_label FROM tf.t UNION SELECT 'x'", "SELECT 1 AS a UNION SELECT 2 AS b ORDER BY a",
        "SELECT 1 AS a UNION SELECT 2 AS b ORDER BY b", "VALUES (1, 'a') UNION VALUES (2.5, NULL)",
        "SELECT c_char_5 FROM tf.t UNION SELECT 'abc'", "SELECT c_time_3 FROM tf.t INTERSECT SELECT c_time_3 FROM tf.t",
        "(SELECT 1 UNION SELECT 2) UNION (SELECT 3.5 EXCEPT SELECT NULL)", "VALUES (ARRAY[1]), (ARRAY[1.5])",
        "VALUES (ROW(1, 'a')), (ROW(2, 'b'))", "SELECT t FROM tf.t UNION SELECT t FROM tf.t",
        "SELECT c_pair FROM tf.t UNION SELECT ROW(1, 'a')", "VALUES ('{1}'), (ARRAY[2])",
    ]
    return statements


# -- FROM items -----------------------------------------------------------------------------------------------
FROM_CLAUSES = (
    "WITH s AS (SELECT c_int4, c_text FROM tf.t) SELECT * FROM s",
    "WITH s(a, b) AS (SELECT c_int4, c_text FROM tf.t) SELECT a, b FROM s",
    "WITH s(a) AS (SELECT c_int4, c_text FROM tf.t) SELECT * FROM s",
    "WITH s(a, b, c) AS (SELECT c_int4, c_text FROM tf.t) SELECT * FROM s",
    "WITH s AS (SELECT 'a' AS u, NULL AS n, 1.5 AS m) SELECT * FROM s",
    "WITH s AS MATERIALIZED (SELECT c_varchar_20 FROM tf.t) SELECT s.c_varchar_20 FROM s",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1.5 FROM r WHERE n < 3) SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1::numeric UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 'a' UNION ALL SELECT n || 'a' FROM r WHERE length(n) < 3) SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 'a'::text UNION ALL SELECT n || 'a' FROM r WHERE length(n) < 3) SELECT * FROM r",
    "WITH RECURSIVE r(n, p) AS (SELECT 1, ARRAY[1] UNION ALL SELECT n + 1, p || n FROM r WHERE n < 3) SELECT * FROM r",
    "WITH RECURSIVE r(v) AS (SELECT c_varchar_20 FROM tf.t UNION SELECT v FROM r) SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SEARCH DEPTH FIRST BY n SET o SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) CYCLE n SET c USING p SELECT * FROM r",
    "SELECT * FROM (SELECT c_int4, c_text FROM tf.t) s", "SELECT s.* FROM (SELECT c_int4 + 1, 'x' FROM tf.t) s",
    "SELECT * FROM (SELECT c_int4, c_text FROM tf.t) AS s(a)", "SELECT s FROM (SELECT c_int4, c_text FROM tf.t) s",
    "SELECT s.a FROM (SELECT c_int4, c_text FROM tf.t) AS s(a, b)", "SELECT * FROM (SELECT * FROM tf.u) s",
    "SELECT t.*, u.* FROM tf.t, tf.u", "SELECT u.*, 1 FROM tf.u", "SELECT * FROM tf.t", "SELECT * FROM tf.u",
    "SELECT * FROM tf.t JOIN tf.u USING (c_int4)", "SELECT c_int4 FROM tf.t JOIN tf.u USING (c_int4)",
    "SELECT t.c_int4, u.c_int4 FROM tf.t JOIN tf.u USING (c_int4)", "SELECT * FROM tf.t NATURAL JOIN tf.u",
    "SELECT c_text, c_numeric_10_2 FROM tf.t NATURAL JOIN tf.u", "SELECT * FROM tf.t FULL JOIN tf.u USING (c_text)",
    "SELECT c_text FROM tf.t LEFT JOIN tf.u USING (c_text)", "SELECT c_text FROM tf.t RIGHT JOIN tf.u USING (c_text)",
    "SELECT c_numeric_10_2 FROM tf.t FULL JOIN tf.u USING (c_numeric_10_2)",
    "SELECT j.c_int4 FROM tf.t JOIN tf.u USING (c_int4) AS j", "SELECT j FROM tf.t JOIN tf.u USING (c_int4) AS j",
    "SELECT * FROM tf.t JOIN tf.u USING (c_bool)", "SELECT * FROM tf.t JOIN tf.u USING (id, c_int4)",
    "SELECT * FROM (tf.t JOIN tf.u ON t.id = u.t_id) AS j", "SELECT x.* FROM (tf.t NATURAL JOIN tf.u) x",
    "SELECT * FROM generate_series(1, 3)", "SELECT * FROM generate_series(1, 3) AS g(n)",
    "SELECT g FROM generate_series(1.5, 3) g", "SELECT * FROM generate_series(3000000000, 3000000001)",
    "SELECT * FROM generate_series('2024-01-01'::timestamp, '2024-01-02', '1 hour')",
    "SELECT * FROM generate_series('2024-01-01'::date, '2024-01-02', '1 day')",
    "SELECT * FROM generate_series(now(), now(), '1 hour')", "SELECT * FROM unnest(ARRAY[1, 2])",
    "SELECT * FROM unnest(ARRAY[1, 2], ARRAY['a'])", "SELECT u.* FROM unnest(ARRAY[1], ARRAY[1.5], '{x}'::text[]) u",
    "SELECT * FROM unnest(ARRAY[1]) WITH ORDINALITY", "SELECT * FROM unnest(ARRAY[1]) WITH ORDINALITY AS x(v, n)",
    "SELECT * FROM jsonb_each('{}')", "SELECT * FROM json_each_text('{}')", "SELECT key FROM jsonb_each(NULL)",
    "SELECT * FROM jsonb_to_record('{}') AS x(a int, b text, c numeric(5,2))",
    "SELECT * FROM json_to_recordset('[]') AS x(a int4[], b tf.mood)", "SELECT * FROM jsonb_to_record('{}')",
    "SELECT * FROM jsonb_populate_record(NULL::tf.pair, '{}')", "SELECT p FROM jsonb_populate_record(NULL::tf.pair, '{}') p",
    "SELECT * FROM ROWS FROM (generate_series(1, 2), unnest(ARRAY['a', 'b']))",
    "SELECT * FROM ROWS FROM (generate_series(1, 2), jsonb_each('{}')) WITH ORDINALITY AS r(a, b, c, d)",
    "SELECT * FROM ROWS FROM (jsonb_to_record('{}') AS (a int), unnest(ARRAY[1.5]))",
    "SELECT * FROM pg_get_keywords()", "SELECT w FROM pg_get_keywords() w", "SELECT * FROM pg_options_to_table(NULL)",
    "SELECT * FROM regexp_matches('abc', 'b')", "SELECT * FROM regexp_split_to_table('a b', ' ')",
    "SELECT * FROM generate_subscripts(ARRAY[1], 1)", "SELECT f FROM jsonb_each('{}') f", "SELECT f.* FROM jsonb_each('{}') f",
    "SELECT * FROM tf.t, LATERAL (SELECT t.c_int4 + 1 AS z) l", "SELECT l.* FROM tf.t, LATERAL unnest(t.c_int4_array) l",
    "SELECT l.z FROM tf.t CROSS JOIN LATERAL (SELECT t.c_text AS z) l", "SELECT * FROM tf.t, (SELECT t.c_int4) s",
    "SELECT l FROM tf.t, LATERAL jsonb_array_elements(t.c_jsonb) l", "SELECT * FROM tf.t t2, tf.u WHERE t2.id = u.id",
    "SELECT generate_series(1, 3)", "SELECT unnest(c_int4_array) FROM tf.t", "SELECT jsonb_each(c_jsonb) FROM tf.t",
    "SELECT (jsonb_each(c_jsonb)).* FROM tf.t", "SELECT (jsonb_each(c_jsonb)).key FROM tf.t",
    "SELECT generate_series(1, 2), generate_series(1.5, 2)", "SELECT unnest(ARRAY[1], ARRAY[2])",
    "SELECT (jsonb_populate_record(NULL::tf.pair, '{}')).*", "SELECT t FROM tf.t", "SELECT u FROM tf.u",
    "SELECT t.* FROM tf.t AS t(a, b, c)", "SELECT a, b FROM tf.u AS x(a, b)", "SELECT x FROM tf.u AS x(a, b)",
    "SELECT v FROM (VALUES (1, 'a')) v", "SELECT v.column1 FROM (VALUES (1, 'a')) v", "SELECT row_to_json(t) FROM tf.t",
    "SELECT (t).c_pair, (u).note FROM tf.t, tf.u", "SELECT * FROM tf.t TABLESAMPLE SYSTEM (10)",
    "SELECT DISTINCT c_int4, c_text FROM tf.t", "SELECT DISTINCT ON (c_int4) c_text FROM tf.t ORDER BY c_int4",
    "SELECT c_int4 FROM tf.t WHERE c_int4", "SELECT c_int4 FROM tf.t LIMIT '2' OFFSET 1", "TABLE tf.u",
    "SELECT * FROM ONLY tf.t", "SELECT * FROM tf.t FOR UPDATE", "SELECT * FROM (SELECT * FROM tf.t FOR SHARE) s",
)


def from_clauses(palette: Palette, rng: random.Random) -> list[str]:
    """CTEs (recursive too), sub-selects with ``*`` and aliases, set-returning functions, joins, whole rows."""
    statements = list(FROM_CLAUSES)
    for _ in range(120):
        x, y = related(rng, 2)
        template = rng.choice((
            "WITH s AS (SELECT {x} AS a, {y} AS b FROM tf.t) SELECT * FROM s",
            "SELECT s.* FROM (SELECT {x}, {y} FROM tf.t) s", "SELECT * FROM (SELECT {x} FROM tf.t) AS s(a)",
            "SELECT s FROM (SELECT {x} AS a, {y} AS b FROM tf.t) s",
            "SELECT * FROM tf.t, LATERAL (SELECT {x} AS a, {y} AS b) l",
            "SELECT n.* FROM tf.t, LATERAL unnest(ARRAY[{x}], ARRAY[{y}]) WITH ORDINALITY AS n",
            "WITH RECURSIVE r(a) AS (SELECT {x} FROM tf.t UNION ALL SELECT {y} FROM tf.t, r) SELECT a FROM r",
        ))
        statements.append(template.format(x=x, y=y))
    return statements


# -- sub-queries in expressions --------------------------------------------------------------------------------
def subqueries(palette: Palette, rng: random.Random) -> list[str]:
    """Scalar sub-selects, ARRAY(sub-select), EXISTS, IN (sub-select), ANY/ALL (sub-select), row sub-selects."""
    statements: list[str] = []
    templates = (
        "SELECT (SELECT {y} FROM tf.u LIMIT 1) FROM tf.t", "SELECT ARRAY(SELECT {y} FROM tf.u) FROM tf.t",
        "SELECT EXISTS (SELECT {y} FROM tf.u) FROM tf.t", "SELECT {x} IN (SELECT {y} FROM tf.u) FROM tf.t",
        "SELECT {x} = ANY (SELECT {y} FROM tf.u) FROM tf.t", "SELECT {x} < ALL (SELECT {y} FROM tf.u) FROM tf.t",
        "SELECT ({x}, {y}) IN (SELECT {x}, {y} FROM tf.u) FROM tf.t", "SELECT (SELECT {x}, {y} FROM tf.u) FROM tf.t",
        "SELECT {x} NOT IN (SELECT {y} FROM tf.u) FROM tf.t", "SELECT COALESCE((SELECT {y} FROM tf.u LIMIT 1), {x}) FROM tf.t",
    )
    u_columns = {name for name, _, _ in palette.columns["u"]}
    for template in templates:
        for _ in range(25):
            x, y = related(rng, 2)
            column = y.removeprefix("t.")
            if column in u_columns and rng.random() < 0.6:
                y = f"u.{column}"  # the inner table's column of that name (its type may differ)
            statements.append(template.format(x=x, y=y))
    statements += [
        "SELECT (SELECT c_text FROM tf.u LIMIT 1) FROM tf.t", "SELECT ARRAY(SELECT c_text FROM tf.u)",
        "SELECT ARRAY(SELECT c_int4_array FROM tf.t)", "SELECT ARRAY(SELECT 'a')", "SELECT ARRAY(SELECT NULL)",
        "SELECT ARRAY(SELECT 1, 2)", "SELECT (SELECT 1, 2)", "SELECT (SELECT)", "SELECT ARRAY(SELECT t FROM tf.t)",
        "SELECT (SELECT u FROM tf.u LIMIT 1)", "SELECT (SELECT ROW(1, 'a'))", "SELECT (SELECT c_pair FROM tf.t LIMIT 1).a",
        "SELECT ((SELECT c_pair FROM tf.t LIMIT 1)).b", "SELECT (SELECT 'a') || 'b'", "SELECT (SELECT 'a') + 1",
        "SELECT (SELECT max(c_numeric_10_2) FROM tf.t)", "SELECT (SELECT c_varchar_20 FROM tf.t LIMIT 1)",
        "SELECT 1 WHERE EXISTS (SELECT 'a')", "SELECT (VALUES (1.5))", "SELECT ARRAY(VALUES (1), (2))",
        "SELECT ARRAY(SELECT c_int4 FROM tf.t UNION SELECT c_int8 FROM tf.u)",
    ]
    return statements


# -- scoping -----------------------------------------------------------------------------------------------------
SCOPES = (
    "WITH t AS (SELECT 'x'::text AS c_int4) SELECT c_int4 FROM t",
    "WITH t AS (SELECT 'x'::text AS c_int4) SELECT c_int4 FROM tf.t",
    "WITH t AS (SELECT 'x'::text AS c_int4) SELECT t.c_int4 FROM tf.t",
    "WITH s AS (SELECT c_int4 AS v FROM tf.t) SELECT s.v FROM (SELECT c_text AS v FROM tf.t) s",
    "WITH s AS (SELECT c_int4 AS v FROM tf.t) SELECT v FROM s, LATERAL (WITH s AS (SELECT 'a'::text AS v) SELECT v AS w FROM s) l",
    "WITH s AS (SELECT 1 AS v) SELECT (WITH s AS (SELECT 2.5 AS v) SELECT v FROM s) FROM s",
    "WITH s AS (SELECT 1 AS v) SELECT (SELECT v FROM s) FROM (SELECT 'a'::text AS v) s",
    "WITH s AS (SELECT 1 AS v), r AS (SELECT v || 'x' AS w FROM s) SELECT * FROM r",
    "WITH s AS (SELECT 1 AS v) SELECT * FROM (WITH s AS (SELECT 'b'::varchar(3) AS v) SELECT v FROM s) x",
    "SELECT (SELECT c_int4 FROM tf.u LIMIT 1) FROM tf.t", "SELECT (SELECT c_bool FROM tf.u LIMIT 1) FROM tf.t",
    "SELECT (SELECT t.c_text FROM tf.u AS t LIMIT 1) FROM tf.t", "SELECT (SELECT t.c_bool FROM tf.u AS t LIMIT 1) FROM tf.t",
    "SELECT (SELECT c_text FROM tf.u WHERE u.id = t.id) FROM tf.t", "SELECT (SELECT id FROM tf.u WHERE t.id = id) FROM tf.t",
    "SELECT (SELECT c_numeric_10_2) FROM tf.t", "SELECT (SELECT c_numeric_10_2 FROM tf.u LIMIT 1) FROM tf.t",
    "SELECT c_int4 AS c_text FROM tf.t ORDER BY c_text", "SELECT c_int4 AS c_text FROM tf.t GROUP BY c_text",
    "SELECT c_int4 + 1 AS x FROM tf.t GROUP BY x", "SELECT c_int4 AS x FROM tf.t ORDER BY x + 1",
    "SELECT c_int4, c_text FROM tf.t ORDER BY 2", "SELECT c_int4 FROM tf.t ORDER BY 5", "SELECT c_int4 FROM tf.t GROUP BY 1",
    "SELECT c_int4 AS a, c_text AS a FROM tf.t ORDER BY a", "SELECT c_int4 AS a, c_int4 AS a FROM tf.t ORDER BY a",
    "SELECT c_int4 FROM tf.t, tf.u", "SELECT t.c_int4 FROM tf.t, tf.u AS t", "SELECT t.id FROM tf.t AS x",
    "SELECT x.c_int4 FROM tf.u AS x(c_text)", "SELECT c_text FROM tf.u AS x(c_text)", "SELECT x.id FROM tf.u AS x(c_text)",
    "SELECT u.c_int4 FROM tf.t AS u", "SELECT id FROM tf.t JOIN tf.u USING (id)", "SELECT t.id FROM tf.t JOIN tf.u USING (id)",
    "SELECT * FROM tf.t AS a JOIN tf.t AS b USING (c_int4)", "SELECT c_int4 FROM tf.t WHERE c_int4 IN (SELECT c_int4 FROM tf.u)",
    "SELECT c_int4 FROM (SELECT c_int4, c_int4 FROM tf.t) s", "SELECT * FROM (SELECT c_int4, c_int4 FROM tf.t) s",
    "SELECT c_int4 AS v FROM tf.t WHERE v > 1", "SELECT c_text AS c_int4 FROM tf.t ORDER BY c_int4 + 0",
    "SELECT c_int4 AS c_text FROM tf.t GROUP BY c_text, c_int4", "SELECT 1 AS id FROM tf.t ORDER BY id",
    "SELECT generate_series FROM generate_series(1, 2)", "SELECT g.generate_series FROM generate_series(1, 2) g",
    "SELECT g.g FROM generate_series(1, 2) g", "SELECT u.u FROM unnest(ARRAY['a']) u",
    "SELECT s.id FROM (SELECT * FROM tf.t JOIN tf.u USING (id)) s", "SELECT s.c_int4 FROM (SELECT * FROM tf.t NATURAL JOIN tf.u) s",
    "SELECT t.c_int4 FROM tf.t JOIN tf.u AS t ON true", "SELECT note FROM tf.t LEFT JOIN tf.u ON t.id = u.t_id",
    "SELECT (SELECT note) FROM tf.u", "SELECT (SELECT u.note FROM tf.t) FROM tf.u",
    "SELECT (SELECT max(t.c_int4) FROM tf.u) FROM tf.t", "SELECT (SELECT max(u.c_int4) FROM tf.u) FROM tf.t",
)


def scopes(palette: Palette, rng: random.Random) -> list[str]:
    """Names resolved in their scope: CTE names shadowed, outer and inner columns of one name, output names
    in ORDER BY and GROUP BY, ordinals, ambiguity."""
    statements = list(SCOPES)
    for _ in range(40):
        x, y = related(rng, 2, same=0.5)
        inner, outer = x.replace("t.", ""), y.replace("t.", "")
        statements.append(rng.choice((
            f"WITH s AS (SELECT {inner} AS v FROM tf.t) SELECT v FROM (SELECT {outer} AS v FROM tf.t) s",
            f"WITH s AS (SELECT {inner} AS v FROM tf.t) SELECT v, (SELECT v FROM (SELECT {outer} AS v) s LIMIT 1) FROM s",
            f"SELECT {inner} AS v FROM tf.t ORDER BY v", f"SELECT {inner} AS c_int4 FROM tf.t ORDER BY c_int4",
        )))
    return statements

