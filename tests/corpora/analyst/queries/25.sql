SELECT id, name, price
FROM analyst.products
ORDER BY random()
LIMIT 5
