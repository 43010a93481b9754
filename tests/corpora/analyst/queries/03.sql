SELECT p.category, p.name, sum(oi.quantity * oi.unit_price) AS revenue,
    rank() OVER (PARTITION BY p.category ORDER BY sum(oi.quantity * oi.unit_price) DESC) AS rank_in_category,
    dense_rank() OVER (ORDER BY sum(oi.quantity) DESC) AS rank_by_units
FROM analyst.order_items AS oi
JOIN analyst.products AS p ON p.id = oi.product_id
GROUP BY p.category, p.name
ORDER BY p.category, rank_in_category
