SELECT gen_random_uuid() AS export_id, id, name
FROM analyst.customers
WHERE id <= 10
ORDER BY id
