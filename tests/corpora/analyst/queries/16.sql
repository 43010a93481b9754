SELECT item->>'sku' AS sku, sum((item->>'qty')::int) AS quantity, count(DISTINCT e.customer_id) AS customers
FROM analyst.events AS e, jsonb_array_elements(e.doc->'items') AS item
WHERE e.kind = 'cart'
GROUP BY item->>'sku'
ORDER BY quantity DESC, sku
LIMIT 20
