SELECT cal.week, count(o.id) AS orders, coalesce(sum(o.total), 0) AS revenue
FROM generate_series(timestamptz '2024-01-01 00:00:00+00', timestamptz '2024-06-24 00:00:00+00', interval '1 week')
    AS cal(week)
LEFT JOIN analyst.orders AS o ON o.ordered_at >= cal.week AND o.ordered_at < cal.week + interval '1 week'
GROUP BY cal.week
ORDER BY cal.week
