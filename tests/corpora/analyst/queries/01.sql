WITH monthly AS (
    SELECT date_trunc('month', ordered_at) AS month, sum(total) AS revenue
    FROM analyst.orders
    WHERE status <> 'cancelled'
    GROUP BY 1
)
SELECT month, revenue, revenue - lag(revenue) OVER (ORDER BY month) AS change,
    round(100 * (revenue / lag(revenue) OVER (ORDER BY month) - 1), 1) AS change_pct
FROM monthly
ORDER BY month
