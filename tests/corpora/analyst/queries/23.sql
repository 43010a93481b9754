SELECT string_to_table(string_agg(name, ',' ORDER BY id), ',') AS name
FROM analyst.products
WHERE category = 'decor'
