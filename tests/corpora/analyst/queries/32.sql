SELECT extract(year FROM ordered_at) AS year, extract(quarter FROM ordered_at) AS quarter,
    extract(isodow FROM ordered_at) AS weekday, count(*) AS orders, sum(total) AS revenue
FROM analyst.orders
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
