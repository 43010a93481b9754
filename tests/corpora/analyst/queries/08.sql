SELECT channel,
    count(*) AS orders,
    count(*) FILTER (WHERE status = 'shipped') AS shipped,
    count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
    sum(total) FILTER (WHERE discount IS NOT NULL) AS discounted_revenue,
    avg(total) FILTER (WHERE extract(year FROM ordered_at) = 2024) AS avg_2024
FROM analyst.orders
GROUP BY channel
ORDER BY channel
