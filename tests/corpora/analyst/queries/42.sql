SELECT id AS customer_id FROM analyst.customers
EXCEPT
SELECT customer_id FROM analyst.orders
ORDER BY customer_id
