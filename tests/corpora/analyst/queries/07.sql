WITH RECURSIVE days(day) AS (
    SELECT date '2024-01-01'
    UNION ALL
    SELECT day + 1 FROM days WHERE day < date '2024-01-31'
)
SELECT d.day, count(o.id) AS orders
FROM days AS d
LEFT JOIN analyst.orders AS o ON o.ordered_at::date = d.day
GROUP BY d.day
ORDER BY d.day
