SELECT category, replace(string_agg(name, ',' ORDER BY id), 'lorem', 'L') AS names
FROM analyst.products
GROUP BY category
ORDER BY category
