SELECT c.id, c.name, recent.id AS order_id, recent.ordered_at, recent.total
FROM analyst.customers AS c
CROSS JOIN LATERAL (
    SELECT o.id, o.ordered_at, o.total FROM analyst.orders AS o
    WHERE o.customer_id = c.id ORDER BY o.total DESC LIMIT 3
) AS recent
WHERE c.country = 'DE'
ORDER BY c.id, recent.total DESC
