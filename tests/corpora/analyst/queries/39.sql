SELECT id, ts_rank(to_tsvector('english', description), websearch_to_tsquery('english', 'steel or oak')) AS rank, name
FROM analyst.products
WHERE to_tsvector('english', description) @@ websearch_to_tsquery('english', 'steel or oak')
ORDER BY rank DESC, id
