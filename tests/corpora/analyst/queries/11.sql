SELECT status, channel, count(*) AS orders, sum(total) AS revenue
FROM analyst.orders
GROUP BY CUBE (status, channel)
ORDER BY status NULLS FIRST, channel NULLS FIRST
