WITH spend AS (
    SELECT customer_id, sum(total) AS spent FROM analyst.orders GROUP BY customer_id
)
SELECT customer_id, spent, ntile(4) OVER (ORDER BY spent) AS quartile,
    round(percent_rank() OVER (ORDER BY spent)::numeric, 3) AS pct_rank,
    round(cume_dist() OVER (ORDER BY spent)::numeric, 3) AS cume
FROM spend
ORDER BY spent DESC
