SELECT customer_id,
    count(*) FILTER (WHERE kind = 'view') AS views,
    count(*) FILTER (WHERE kind = 'cart') AS carts,
    count(*) FILTER (WHERE kind = 'purchase') AS purchases,
    round(count(*) FILTER (WHERE kind = 'purchase')::numeric / nullif(count(*) FILTER (WHERE kind = 'view'), 0), 2)
        AS conversion
FROM analyst.events
GROUP BY customer_id
HAVING count(*) FILTER (WHERE kind = 'view') > 0
ORDER BY conversion DESC NULLS LAST, customer_id
LIMIT 25
