SELECT DISTINCT ON (customer_id) customer_id, id AS last_order, ordered_at, total
FROM analyst.orders
ORDER BY customer_id, ordered_at DESC
