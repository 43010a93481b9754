SELECT kind, count(*) AS events
FROM analyst.events
WHERE doc->'tags' @> '["t3"]'
GROUP BY kind
ORDER BY kind
