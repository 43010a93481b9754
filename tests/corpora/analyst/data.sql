-- Small deterministic synthetic data for the analyst set: every value is a function of generate_series' counter.
-- Dates run through 2023 and 2024; tags are t0..t9; bodies mix a few words ("steel", "lorem", "delivery", ...).

INSERT INTO analyst.customers
SELECT g, 'customer ' || g, 'c' || g || '@' || (ARRAY['example.com', 'mail.test', 'shop.test'])[1 + g % 3],
    (ARRAY['DE', 'FR', 'US', 'JP', 'BR', 'IN'])[1 + g % 6], (ARRAY['retail', 'wholesale', 'online'])[1 + g % 3],
    timestamptz '2023-01-01 00:00:00+00' + g * interval '37 hours',
    ARRAY['t' || g % 10, 't' || g * 3 % 10],
    jsonb_build_object('name', 'n' || g, 'age', 18 + g % 60, 'vip', g % 7 = 0,
        'tags', jsonb_build_array('t' || g % 10, 't' || (g + 3) % 10),
        'address', jsonb_build_object('city', (ARRAY['Berlin', 'Paris', 'Austin', 'Osaka'])[1 + g % 4], 'zip', lpad((g * 71 % 100000)::text, 5, '0')))
FROM generate_series(1, 200) AS g;

INSERT INTO analyst.products
SELECT g, (ARRAY['lorem steel chair', 'ipsum oak table', 'lorem glass lamp', 'steel shelf', 'cotton rug',
                 'lorem ipsum sofa extra long name for a sofa'])[1 + g % 6] || ' ' || g,
    (ARRAY['furniture', 'lighting', 'textiles', 'decor'])[1 + g % 4],
    10 + g * 7 % 190 + 0.99, 5 + g * 3 % 90 + 0.49, g * 13 % 120, 500 + g * 37 % 9000,
    ARRAY['t' || g % 10, 't' || (g + 5) % 10, 't' || (g + 7) % 10],
    (ARRAY['a sturdy steel frame with a matte finish', 'hand-made from solid oak, lorem ipsum',
           'soft cotton, machine washable', 'glass shade and a brass base'])[1 + g % 4]
FROM generate_series(1, 60) AS g;

-- Customers whose id is a multiple of 10 never order.
INSERT INTO analyst.orders
SELECT g, c, timestamptz '2023-01-01 08:00:00+00' + g * interval '11 hours 17 minutes',
    (ARRAY['shipped', 'shipped', 'delivered', 'cancelled', 'pending'])[1 + g % 5],
    (ARRAY['web', 'store', 'phone'])[1 + g % 3], 0, CASE WHEN g % 4 = 0 THEN g % 25 END,
    CASE WHEN g % 5 IN (0, 1, 2) THEN (timestamptz '2023-01-01 08:00:00+00' + g * interval '11 hours 17 minutes')::date + 1 + g % 6 END
FROM generate_series(1, 1500) AS g, LATERAL (SELECT 1 + g * 7 % 200 AS raw) AS r,
    LATERAL (SELECT CASE WHEN raw % 10 = 0 THEN raw - 1 ELSE raw END AS c) AS k;

INSERT INTO analyst.order_items
SELECT o, 1 + (o * 7 + i * 13) % 60, 1 + (o + i) % 5, 10 + (o * 7 + i * 13) % 60 * 3 + 0.99
FROM generate_series(1, 1500) AS o, generate_series(1, 1 + o % 4) AS i;

UPDATE analyst.orders SET total = (SELECT sum(quantity * unit_price) FROM analyst.order_items WHERE order_id = id);

INSERT INTO analyst.events
SELECT g, 1 + g * 11 % 200, (ARRAY['view', 'view', 'cart', 'checkout', 'purchase', 'support'])[1 + g % 6],
    timestamptz '2023-01-01 00:00:00+00' + g * interval '4 hours 23 minutes',
    jsonb_build_object('name', 'n' || g % 40, 'page', '/p/' || g % 60, 'ms', 20 + g * 37 % 900,
        'tags', jsonb_build_array('t' || g % 10, 't' || g * 7 % 10), 'items', jsonb_build_array(
            jsonb_build_object('sku', 's' || g % 60, 'qty', 1 + g % 3), jsonb_build_object('sku', 's' || (g + 1) % 60, 'qty', 1))),
    ARRAY['t' || g % 10, 't' || g * 3 % 10],
    (ARRAY['the steel chair arrived scratched, lorem ipsum', 'delivery was quick and the lamp works',
           'question about the oak table warranty', 'lorem ipsum dolor sit amet', 'the rug is softer than expected',
           'steel frames rust when left outside'])[1 + g % 6] || ' #' || g
FROM generate_series(1, 2000) AS g;

INSERT INTO analyst.employees
SELECT g, 'employee ' || g, CASE WHEN g = 1 THEN NULL ELSE g / 3 + CASE WHEN g / 3 = 0 THEN 1 ELSE 0 END END,
    date '2015-01-05' + g * 97, 40000 + g * 1733 % 60000, (ARRAY['north', 'south', 'east'])[1 + g % 3]
FROM generate_series(1, 40) AS g;

ANALYZE analyst.customers, analyst.products, analyst.orders, analyst.order_items, analyst.events, analyst.employees;
