-- Small deterministic synthetic data for the TPC-H schema (about scale factor 0.001). Every value is a function of
-- generate_series' counter. Names, types, segments, modes and comments include the values the 22 queries'
-- validation parameters look for; keys cycle with different strides so that joins match.

INSERT INTO tpch.region SELECT o - 1, r, 'region ' || r
FROM unnest(ARRAY['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST']) WITH ORDINALITY AS t(r, o);

INSERT INTO tpch.nation SELECT o - 1, n, (ARRAY[0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1])[o],
    'nation ' || n
FROM unnest(ARRAY['ALGERIA', 'ARGENTINA', 'BRAZIL', 'CANADA', 'EGYPT', 'ETHIOPIA', 'FRANCE', 'GERMANY', 'INDIA',
    'INDONESIA', 'IRAN', 'IRAQ', 'JAPAN', 'JORDAN', 'KENYA', 'MOROCCO', 'MOZAMBIQUE', 'PERU', 'CHINA', 'ROMANIA',
    'SAUDI ARABIA', 'VIETNAM', 'RUSSIA', 'UNITED KINGDOM', 'UNITED STATES']) WITH ORDINALITY AS t(n, o);

INSERT INTO tpch.part
SELECT g,
    (ARRAY['forest green lace', 'green almond blush', 'forest khaki navy', 'burnished green peru',
           'metallic lavender steel', 'chiffon ivory ghost'])[1 + g % 6],
    'Manufacturer#' || (1 + g % 5),
    'Brand#' || (ARRAY['12', '23', '34', '45', '11', '52'])[1 + g / 6 % 6],
    (ARRAY['ECONOMY ANODIZED STEEL', 'STANDARD POLISHED BRASS', 'PROMO BRUSHED COPPER', 'MEDIUM POLISHED TIN',
           'LARGE PLATED BRASS', 'PROMO ANODIZED NICKEL', 'SMALL BURNISHED STEEL'])[1 + g % 7],
    (ARRAY[15, 1, 5, 10, 14, 23, 49, 3, 36])[1 + g % 9],
    (ARRAY['SM CASE', 'SM BOX', 'MED BAG', 'MED BOX', 'MED PKG', 'LG CASE', 'LG BOX', 'LG PACK', 'WRAP JAR'])[1 + g / 2 % 9],
    900 + g % 200 + 0.99, 'part ' || g
FROM generate_series(1, 400) AS g;

INSERT INTO tpch.supplier
SELECT g, 'Supplier#' || lpad(g::text, 9, '0'), 'address ' || g, g % 25, (10 + g % 25) || '-555-0100',
    g * 37 % 10000 - 999.99,
    CASE WHEN g % 17 = 0 THEN 'the Customer has Complaints about it' ELSE 'supplier ' || g END
FROM generate_series(1, 100) AS g;

INSERT INTO tpch.partsupp
SELECT p, 1 + (p + s * 25) % 100, 100 + (p * 7 + s) % 9900, 1 + (p * 13 + s * 7) % 1000, 'partsupp ' || p || '/' || s
FROM generate_series(1, 400) AS p, generate_series(0, 3) AS s;

INSERT INTO tpch.customer
SELECT g, 'Customer#' || lpad(g::text, 9, '0'), 'address ' || g, g % 25,
    (ARRAY['13', '31', '23', '29', '30', '18', '17', '25', '11'])[1 + g % 9] || '-555-' || lpad(g::text, 4, '0'),
    g * 53 % 10000 - 999.99,
    (ARRAY['BUILDING', 'AUTOMOBILE', 'MACHINERY', 'HOUSEHOLD', 'FURNITURE'])[1 + g % 5], 'customer ' || g
FROM generate_series(1, 300) AS g;

-- Customers whose number is a multiple of 3 never order (query 13 counts them, query 22 looks for them).
INSERT INTO tpch.orders
SELECT g, c, (ARRAY['F', 'O', 'P'])[1 + g % 3], 0, date '1992-01-01' + g * 7 % 2400,
    (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[1 + g % 5],
    'Clerk#' || lpad((g % 1000)::text, 9, '0'), 0,
    CASE WHEN g % 11 = 0 THEN 'special packages and requests' ELSE 'order ' || g END
FROM generate_series(1, 1500) AS g, LATERAL (SELECT 1 + (g * 7 % 200) / 2 * 3 + g % 2 AS c) AS k;

INSERT INTO tpch.lineitem
SELECT o_orderkey, p, 1 + (p + l % 4 * 25) % 100, l,
    CASE WHEN o_orderkey % 50 = 0 THEN 50 ELSE 1 + (o_orderkey * 3 + l) % 30 END,
    (900 + p % 200 + 0.99) * 5, (o_orderkey + l) % 11 / 100.0, (o_orderkey + l) % 9 / 100.0,
    (ARRAY['R', 'A', 'N'])[1 + (o_orderkey + l) % 3], (ARRAY['O', 'F'])[1 + o_orderkey % 2],
    -- Only line 3 of an order arrives after its commit date.
    o_orderdate + 1 + l * 5, o_orderdate + CASE WHEN l = 3 THEN 21 ELSE 20 + l * 7 END, o_orderdate + 10 + l * 7,
    (ARRAY['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'])[1 + (o_orderkey + l) % 4],
    (ARRAY['AIR', 'AIR REG', 'MAIL', 'SHIP', 'TRUCK', 'RAIL', 'FOB'])[1 + (o_orderkey * 5 + l) % 7],
    'lineitem ' || l
FROM tpch.orders, generate_series(1, 7) AS l, LATERAL (SELECT 1 + (o_orderkey * 13 + l * 59) % 400 AS p) AS k;

UPDATE tpch.orders SET o_totalprice = (SELECT sum(l_extendedprice) FROM tpch.lineitem WHERE l_orderkey = o_orderkey);

ANALYZE tpch.part, tpch.supplier, tpch.partsupp, tpch.customer, tpch.orders, tpch.lineitem;
