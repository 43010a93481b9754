SELECT id, customer_id, occurred_at, kind
FROM (
    SELECT e.*, row_number() OVER (PARTITION BY customer_id, kind ORDER BY occurred_at DESC, id DESC) AS rn
    FROM analyst.events AS e
) AS ranked
WHERE rn = 1 AND kind IN ('checkout', 'purchase')
ORDER BY customer_id, kind
