SELECT id, customer_id, kind, body
FROM analyst.events
WHERE to_tsvector('english', body) @@ plainto_tsquery('english', 'steel chair')
ORDER BY id
LIMIT 50
