SELECT c.id, c.name, c.signup_at
FROM analyst.customers AS c
WHERE NOT EXISTS (SELECT 1 FROM analyst.orders AS o WHERE o.customer_id = c.id)
    AND EXISTS (SELECT 1 FROM analyst.events AS e WHERE e.customer_id = c.id AND e.kind = 'view')
ORDER BY c.id
