SELECT width_bucket(total, 0, 2000, 10) AS bucket, min(total) AS low, max(total) AS high, count(*) AS orders
FROM analyst.orders
GROUP BY bucket
ORDER BY bucket
