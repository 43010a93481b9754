SELECT id, name, tags
FROM analyst.customers
WHERE tags @> ARRAY['t3'] OR tags && ARRAY['t7', 't8']
ORDER BY id
