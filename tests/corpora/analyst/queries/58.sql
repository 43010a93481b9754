SELECT p.id, p.name, p.price, p.price - avg(p.price) OVER (PARTITION BY p.category) AS vs_category,
    p.stock, sum(oi.quantity) AS sold, p.stock::numeric / nullif(sum(oi.quantity), 0) AS cover
FROM analyst.products AS p
LEFT JOIN analyst.order_items AS oi ON oi.product_id = p.id
GROUP BY p.id
ORDER BY p.id
