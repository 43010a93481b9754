SELECT channel, sum(discount) AS discounts, sum(total) AS revenue,
    round(100.0 * sum(discount) / nullif(sum(total), 0), 3) AS discount_pct,
    coalesce(sum(discount) FILTER (WHERE status = 'pending'), 0) AS pending_discounts
FROM analyst.orders
GROUP BY channel
ORDER BY channel
