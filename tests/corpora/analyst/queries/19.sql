SELECT tag, count(*) AS products, round(avg(price), 2) AS avg_price
FROM analyst.products, unnest(tags) AS tag
GROUP BY tag
ORDER BY products DESC, tag
