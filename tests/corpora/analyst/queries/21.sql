SELECT id, customer_id, body
FROM analyst.events
WHERE body LIKE concat('%', 'steel', '%')
ORDER BY id
LIMIT 50
