SELECT o.id, o.ordered_at, o.shipped_on, o.shipped_on - o.ordered_at::date AS days_to_ship
FROM analyst.orders AS o
WHERE o.ordered_at BETWEEN timestamptz '2024-06-30 00:00:00+00' - interval '30 days'
    AND timestamptz '2024-06-30 00:00:00+00'
    AND o.shipped_on IS NOT NULL
ORDER BY o.id
