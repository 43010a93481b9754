SELECT p.category, c.segment, sum(oi.quantity) AS units,
    grouping(p.category, c.segment) AS level,
    CASE WHEN grouping(c.segment) = 1 THEN 'all segments' ELSE c.segment END AS segment_label
FROM analyst.order_items AS oi
JOIN analyst.products AS p ON p.id = oi.product_id
JOIN analyst.orders AS o ON o.id = oi.order_id
JOIN analyst.customers AS c ON c.id = o.customer_id
GROUP BY ROLLUP (p.category, c.segment)
ORDER BY p.category NULLS LAST, c.segment NULLS LAST
