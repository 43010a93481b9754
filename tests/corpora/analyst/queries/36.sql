SELECT o.customer_id, string_agg(p.name, '; ' ORDER BY o.ordered_at, p.name) AS bought,
    array_agg(DISTINCT p.category ORDER BY p.category) AS categories
FROM analyst.orders AS o
JOIN analyst.order_items AS oi ON oi.order_id = o.id
JOIN analyst.products AS p ON p.id = oi.product_id
WHERE o.customer_id BETWEEN 1 AND 15
GROUP BY o.customer_id
ORDER BY o.customer_id
