SELECT c.country, count(DISTINCT o.customer_id) AS buyers, count(DISTINCT c.id) AS customers,
    round(count(DISTINCT o.customer_id)::numeric / count(DISTINCT c.id), 2) AS share_buying,
    max(o.total)::int AS biggest_order, sum(o.total)::float8 AS revenue
FROM analyst.customers AS c
LEFT JOIN analyst.orders AS o ON o.customer_id = c.id
GROUP BY c.country
ORDER BY c.country
