SELECT customer_id, id AS order_id, ordered_at, total,
    sum(total) OVER (PARTITION BY customer_id ORDER BY ordered_at ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        AS running_total,
    count(*) OVER (PARTITION BY customer_id) AS orders_of_customer
FROM analyst.orders
ORDER BY customer_id, ordered_at
LIMIT 300
