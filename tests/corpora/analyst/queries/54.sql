SELECT to_char(ordered_at, 'FMDay') AS weekday, extract(dow FROM ordered_at) AS dow,
    round(avg(total), 2) AS avg_total, count(DISTINCT customer_id) AS customers
FROM analyst.orders
GROUP BY 1, 2
ORDER BY dow
