WITH monthly AS (
    SELECT p.category, date_trunc('month', o.ordered_at) AS month, sum(oi.quantity * oi.unit_price) AS sum_sales
    FROM analyst.order_items AS oi
    JOIN analyst.orders AS o ON o.id = oi.order_id
    JOIN analyst.products AS p ON p.id = oi.product_id
    GROUP BY p.category, date_trunc('month', o.ordered_at)
), with_avg AS (
    SELECT category, month, sum_sales, avg(sum_sales) OVER (PARTITION BY category) AS avg_monthly_sales
    FROM monthly
)
SELECT category, month, sum_sales, round(avg_monthly_sales, 2) AS avg_monthly_sales,
    abs(sum_sales - avg_monthly_sales) AS deviation
FROM with_avg
WHERE CASE WHEN avg_monthly_sales > 0 THEN abs(sum_sales - avg_monthly_sales) / avg_monthly_sales END > 0.1
ORDER BY deviation DESC, category, month
LIMIT 100
