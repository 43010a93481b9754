SELECT id, doc->>'name' AS name, doc->>'page' AS page, (doc->>'ms')::int AS ms
FROM analyst.events
WHERE doc->>'name' LIKE 'n1%' AND (doc->>'ms')::int > 300
ORDER BY id
