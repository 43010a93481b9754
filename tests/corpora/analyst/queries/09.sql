SELECT c.country, o.channel, extract(year FROM o.ordered_at) AS year, sum(o.total) AS revenue, count(*) AS orders
FROM analyst.orders AS o
JOIN analyst.customers AS c ON c.id = o.customer_id
GROUP BY GROUPING SETS ((c.country, o.channel), (c.country), (extract(year FROM o.ordered_at)), ())
ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST
