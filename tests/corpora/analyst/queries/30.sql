WITH sales AS (
    SELECT p.category, sum(oi.quantity * (oi.unit_price - p.cost)) AS profit
    FROM analyst.order_items AS oi JOIN analyst.products AS p ON p.id = oi.product_id
    JOIN analyst.orders AS o ON o.id = oi.order_id
    WHERE o.status <> 'cancelled'
    GROUP BY p.category
), losses AS (
    SELECT p.category, sum(oi.quantity * oi.unit_price) AS profit_loss
    FROM analyst.order_items AS oi JOIN analyst.products AS p ON p.id = oi.product_id
    JOIN analyst.orders AS o ON o.id = oi.order_id
    WHERE o.status = 'cancelled' AND p.category <> 'decor'
    GROUP BY p.category
)
SELECT s.category, s.profit, l.profit_loss, s.profit - coalesce(l.profit_loss, 0) AS net_profit
FROM sales AS s LEFT JOIN losses AS l USING (category)
ORDER BY net_profit DESC
