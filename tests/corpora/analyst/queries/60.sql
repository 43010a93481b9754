SELECT date_trunc('week', e.occurred_at)::date AS week, e.kind, count(*) AS events,
    round(avg((e.doc->>'ms')::numeric), 1) AS avg_ms, max(e.occurred_at) - min(e.occurred_at) AS spread
FROM analyst.events AS e
WHERE e.occurred_at >= timestamptz '2024-01-01 00:00:00+00' AND e.occurred_at < timestamptz '2024-03-01 00:00:00+00'
GROUP BY 1, 2
ORDER BY 1, 2
