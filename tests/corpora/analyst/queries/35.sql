SELECT c.country, mode() WITHIN GROUP (ORDER BY o.channel) AS usual_channel,
    mode() WITHIN GROUP (ORDER BY extract(hour FROM o.ordered_at)) AS usual_hour
FROM analyst.orders AS o JOIN analyst.customers AS c ON c.id = o.customer_id
GROUP BY c.country
ORDER BY c.country
