SELECT key, count(*) AS customers, count(DISTINCT value) AS distinct_values
FROM analyst.customers, jsonb_each_text(profile)
WHERE key <> 'tags'
GROUP BY key
ORDER BY key
