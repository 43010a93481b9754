SELECT CASE WHEN total < 100 THEN 'small' WHEN total < 500 THEN 'medium' ELSE 'large' END AS size,
    count(*) AS orders, greatest(max(total), 0) AS largest, least(min(total), 1000000) AS smallest
FROM analyst.orders
GROUP BY CASE WHEN total < 100 THEN 'small' WHEN total < 500 THEN 'medium' ELSE 'large' END
ORDER BY min(total)
