SELECT customer_id, ordered_at, total,
    lead(ordered_at) OVER (PARTITION BY customer_id ORDER BY ordered_at) - ordered_at AS until_next_order
FROM analyst.orders
WHERE customer_id <= 20
ORDER BY customer_id, ordered_at
