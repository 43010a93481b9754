SELECT p.category,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY o.total) AS median_order,
    percentile_cont(ARRAY[0.25, 0.75]) WITHIN GROUP (ORDER BY o.total) AS quartiles,
    percentile_disc(0.9) WITHIN GROUP (ORDER BY o.total) AS p90
FROM analyst.orders AS o
JOIN analyst.order_items AS oi ON oi.order_id = o.id
JOIN analyst.products AS p ON p.id = oi.product_id
GROUP BY p.category
ORDER BY p.category
