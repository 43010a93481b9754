SELECT sq1.s AS short_name, sq1.category, oi.order_id, oi.quantity * sq1.weight_grams / 1000 AS kilograms,
    oi.quantity * 2 + sq1.stock AS units_seen
FROM (SELECT substring(name, 1, 20) AS s, * FROM analyst.products) AS sq1
JOIN analyst.order_items AS oi ON oi.product_id = sq1.id
WHERE oi.quantity * sq1.weight_grams > 10000
ORDER BY kilograms DESC, oi.order_id, short_name
LIMIT 100
