SELECT t.code, t.label, count(o.id) AS orders
FROM (VALUES ('web', 'Online shop'), ('store', 'High street'), ('phone', 'Call centre'), ('fax', 'Nobody'))
    AS t(code, label)
LEFT JOIN analyst.orders AS o ON o.channel = t.code
GROUP BY t.code, t.label
ORDER BY orders DESC, t.code
