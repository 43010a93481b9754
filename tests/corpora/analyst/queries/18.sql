SELECT id, name, array_to_string(tags, ',') AS tag_list
FROM analyst.products
WHERE array_to_string(tags, ',') LIKE '%t3%'
ORDER BY id
