SELECT customer_id FROM analyst.orders WHERE channel = 'web'
INTERSECT
SELECT customer_id FROM analyst.events WHERE kind = 'support'
ORDER BY customer_id
