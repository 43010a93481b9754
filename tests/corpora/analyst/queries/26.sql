SELECT clock_timestamp() >= now() AS clock_after_start, count(*) AS orders
FROM analyst.orders
