WITH monthly AS (
    SELECT date_trunc('month', ordered_at) AS month, sum(total) AS revenue FROM analyst.orders GROUP BY 1
)
SELECT month, revenue,
    round(avg(revenue) OVER (ORDER BY month ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), 2) AS moving_avg_3,
    first_value(revenue) OVER w AS first_month, last_value(revenue) OVER w AS latest_month,
    nth_value(revenue, 2) OVER w AS second_month
FROM monthly
WINDOW w AS (ORDER BY month ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
ORDER BY month
