SELECT customer_id, 'ordered' AS source FROM analyst.orders WHERE ordered_at < timestamptz '2023-02-01 00:00:00+00'
UNION
SELECT customer_id, 'visited' FROM analyst.events WHERE occurred_at < timestamptz '2023-02-01 00:00:00+00'
ORDER BY customer_id, source
