WITH RECURSIVE chain AS (
    SELECT id, name, manager_id, 1 AS depth, ARRAY[id] AS path
    FROM analyst.employees WHERE manager_id IS NULL
    UNION ALL
    SELECT e.id, e.name, e.manager_id, c.depth + 1, c.path || e.id
    FROM analyst.employees AS e JOIN chain AS c ON e.manager_id = c.id
)
SELECT id, name, depth, array_to_string(path, ' > ') AS reporting_line
FROM chain
ORDER BY path
