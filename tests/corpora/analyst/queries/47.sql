SELECT c.id, c.name,
    (SELECT max(o.ordered_at) FROM analyst.orders AS o WHERE o.customer_id = c.id) AS last_order,
    (SELECT count(*) FROM analyst.events AS e WHERE e.customer_id = c.id) AS events
FROM analyst.customers AS c
WHERE c.segment = 'online'
ORDER BY c.id
