WITH yearly AS (
    SELECT customer_id,
        sum(total) FILTER (WHERE extract(year FROM ordered_at) = 2023) AS spent_2023,
        count(*) FILTER (WHERE extract(year FROM ordered_at) = 2023) AS orders_2023,
        sum(total) FILTER (WHERE extract(year FROM ordered_at) = 2024) AS spent_2024,
        count(*) FILTER (WHERE extract(year FROM ordered_at) = 2024) AS orders_2024
    FROM analyst.orders
    GROUP BY customer_id
)
SELECT customer_id, spent_2023, spent_2024
FROM yearly
WHERE CASE WHEN orders_2024 > 0 THEN spent_2024 / orders_2024 END
    > CASE WHEN orders_2023 > 0 THEN spent_2023 / orders_2023 END
ORDER BY customer_id
