SELECT upper(left(name, 1)) || lower(substr(name, 2)) AS display, initcap(category) AS category, length(name) AS len,
    position('steel' IN name) AS steel_at, right(name, 3) AS tail, trim(both ' ' FROM lpad(id::text, 4, '0')) AS code
FROM analyst.products
WHERE name ILIKE '%STEEL%' OR description ILIKE 'hand-made%'
ORDER BY id
