SELECT to_char(date_trunc('month', ordered_at), 'YYYY-MM') AS month, to_char(sum(total), 'FM999G999G990D00') AS revenue,
    to_char(min(ordered_at), 'Dy DD Mon YYYY HH24:MI') AS first_order
FROM analyst.orders
GROUP BY date_trunc('month', ordered_at)
ORDER BY month
