WITH first_orders AS (
    SELECT customer_id, date_trunc('month', min(ordered_at)) AS cohort FROM analyst.orders GROUP BY customer_id
), activity AS (
    SELECT DISTINCT o.customer_id, date_trunc('month', o.ordered_at) AS month FROM analyst.orders AS o
)
SELECT f.cohort, (extract(year FROM age(a.month, f.cohort)) * 12 + extract(month FROM age(a.month, f.cohort)))::int
        AS months_later,
    count(*) AS active_customers
FROM first_orders AS f JOIN activity AS a USING (customer_id)
GROUP BY 1, 2
ORDER BY 1, 2
