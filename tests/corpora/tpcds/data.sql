-- Small deterministic synthetic data for the TPC-DS schema: every value is a function of generate_series'
-- counter, so every load is the same. Text columns cycle through the values the 99 queries compare them with,
-- foreign keys cycle through the referenced keys with different strides, so that joins match and filters hit.

-- 1998-01-01 .. 2003-12-31, keyed like dsdgen (d_date_sk is the Julian day number).
INSERT INTO tpcds.date_dim
SELECT 2450815 + n, 'AAAAAAAA' || lpad((2450815 + n)::text, 8, '0'), d,
    (extract(year FROM d)::int - 1900) * 12 + extract(month FROM d)::int - 1,
    (d - date '1899-12-31') / 7 + 1,
    (extract(year FROM d)::int - 1900) * 4 + extract(quarter FROM d)::int,
    extract(year FROM d)::int, extract(dow FROM d)::int, extract(month FROM d)::int, extract(day FROM d)::int,
    extract(quarter FROM d)::int, extract(year FROM d)::int,
    (extract(year FROM d)::int - 1900) * 4 + extract(quarter FROM d)::int, (d - date '1899-12-31') / 7 + 1,
    to_char(d, 'FMDay'), extract(year FROM d)::int || 'Q' || extract(quarter FROM d)::int,
    CASE WHEN extract(day FROM d) = 25 AND extract(month FROM d) = 12 THEN 'Y' ELSE 'N' END,
    CASE WHEN extract(dow FROM d) IN (0, 6) THEN 'Y' ELSE 'N' END, 'N',
    2450815 + n - extract(day FROM d)::int + 1, 2450815 + n + 27, 2450815 + n - 365, 2450815 + n - 91,
    'N', 'N', 'N', 'N', 'N'
FROM generate_series(0, 2190) AS n, LATERAL (SELECT date '1998-01-01' + n AS d) AS day;

-- One row a minute (t_time_sk is the second of the day, as in dsdgen).
INSERT INTO tpcds.time_dim
SELECT m * 60, 'AAAAAAAA' || lpad(m::text, 8, '0'), m * 60, m / 60, m % 60, 0,
    CASE WHEN m / 60 < 12 THEN 'AM' ELSE 'PM' END,
    CASE WHEN m / 60 BETWEEN 6 AND 11 THEN 'first' WHEN m / 60 BETWEEN 12 AND 17 THEN 'second' ELSE 'third' END,
    CASE WHEN m / 60 BETWEEN 6 AND 11 THEN 'morning' WHEN m / 60 BETWEEN 12 AND 17 THEN 'afternoon' ELSE 'evening' END,
    CASE WHEN m / 60 BETWEEN 6 AND 9 THEN 'breakfast' WHEN m / 60 BETWEEN 11 AND 13 THEN 'lunch'
        WHEN m / 60 BETWEEN 17 AND 20 THEN 'dinner' END
FROM generate_series(0, 1439) AS m;

INSERT INTO tpcds.income_band SELECT g, (g - 1) * 10000 + 1, g * 10000 FROM generate_series(1, 20) AS g;

INSERT INTO tpcds.customer_demographics
SELECT g,
    (ARRAY['M', 'F'])[1 + g % 2],
    (ARRAY['M', 'S', 'D', 'W', 'U'])[1 + g / 2 % 5],
    (ARRAY['Primary', 'Secondary', 'College', '2 yr Degree', '4 yr Degree', 'Advanced Degree', 'Unknown'])[1 + g / 10 % 7],
    500 * (1 + g % 20),
    (ARRAY['Good', 'High Risk', 'Low Risk', 'Unknown'])[1 + g % 4],
    g % 7, g % 5, g % 3
FROM generate_series(1, 700) AS g;

INSERT INTO tpcds.household_demographics
SELECT g, 1 + g % 20,
    (ARRAY['>10000', '5001-10000', '1001-5000', '501-1000', '0-500', 'Unknown'])[1 + g % 6],
    g / 6 % 10, g % 5 - 1
FROM generate_series(1, 240) AS g;

INSERT INTO tpcds.customer_address
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), (g * 7)::text, 'Main', 'Street', 'Suite ' || g % 10,
    (ARRAY['Edgewood', 'Fairview', 'Midway', 'Oakland', 'Riverside'])[1 + g % 5],
    (ARRAY['Williamson County', 'Rush County', 'Toole County', 'Jefferson County', 'Dona Ana County',
           'La Porte County', 'Orange County', 'Bronx County', 'Franklin Parish'])[1 + g % 9],
    (ARRAY['TN', 'GA', 'TX', 'OH', 'OR', 'NM', 'KY', 'VA', 'MS', 'CA', 'WA', 'IN', 'WI', 'CO', 'IL', 'LA', 'MN', 'ND',
           'NJ', 'AR', 'CT', 'IA', 'OK'])[1 + g % 23],
    (ARRAY['85669', '86197', '88274', '83405', '24128', '76232', '65084', '87816', '83926', '31904'])[1 + g % 10],
    'United States', (ARRAY[-5, -6, -7])[1 + g % 3],
    (ARRAY['single family', 'condo', 'apartment'])[1 + g % 3]
FROM generate_series(1, 600) AS g;

INSERT INTO tpcds.customer
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), 1 + g * 7 % 700, 1 + g * 11 % 240, 1 + g * 13 % 600,
    2450815 + g % 2000, 2450815 + g % 1500,
    (ARRAY['Mr.', 'Mrs.', 'Ms.', 'Dr.', 'Sir', 'Miss'])[1 + g % 6],
    'First' || g % 50, 'Last' || g % 80, (ARRAY['Y', 'N'])[1 + g % 2], 1 + g % 28, 1 + g % 12, 1930 + g % 60,
    (ARRAY['UNITED STATES', 'CANADA', 'MEXICO', 'GERMANY'])[1 + g % 4], NULL, 'c' || g || '@example.com',
    2452000 + g % 600
FROM generate_series(1, 600) AS g;

INSERT INTO tpcds.item
SELECT g, 'AAAAAAAA' || lpad((1 + (g - 1) / 2)::text, 8, '0'), date '1997-10-27', NULL,
    'Description of item ' || g || ' in plain words',
    (ARRAY[0.99, 1.29, 1.49, 5.00, 25.00, 55.00, 62.50, 68.00, 75.00, 89.00, 92.00, 97.50])[1 + g % 12],
    (ARRAY[0.50, 0.80, 1.00, 3.00, 15.00, 30.00, 40.00, 45.00, 50.00, 60.00, 70.00, 80.00])[1 + g % 12],
    1 + g % 10,
    (ARRAY['amalgimporto #1', 'edu packscholar #1', 'exportiimporto #1', 'exportiunivamalg #9', 'importoamalg #1',
           'scholaramalgamalg #14', 'scholaramalgamalg #7', 'scholaramalgamalg #9', 'corpbrand #4',
           'univunivamalg #2'])[1 + g % 10],
    1 + g % 16,
    (ARRAY['personal', 'portable', 'reference', 'self-help', 'accessories', 'classical', 'fragrances', 'pants',
           'computers', 'stereo', 'football', 'shirts', 'birdal', 'dresses', 'maternity', 'camcorders'])[1 + g % 16],
    1 + g % 9,
    (ARRAY['Books', 'Children', 'Electronics', 'Home', 'Jewelry', 'Men', 'Music', 'Sports', 'Women'])[1 + g % 9],
    (ARRAY[128, 129, 270, 350, 423, 677, 694, 738, 808, 821, 940, 977])[1 + g % 12],
    'manufact' || g % 12,
    (ARRAY['N/A', 'extra large', 'medium', 'petite', 'small', 'large'])[1 + g % 6],
    'formulation' || g,
    (ARRAY['blanched', 'brown', 'burlywood', 'burnished', 'cornflower', 'cyan', 'deep', 'floral', 'forest',
           'frosted', 'ghost', 'honeydew', 'indian', 'khaki', 'light', 'medium', 'midnight', 'orange', 'papaya',
           'peach', 'powder', 'purple', 'slate', 'snow', 'spring'])[1 + g % 25],
    (ARRAY['Box', 'Bunch', 'Bundle', 'Cup', 'Dozen', 'Dram', 'Each', 'Gross', 'Lb', 'N/A', 'Ounce', 'Oz', 'Pallet',
           'Pound', 'Tbl', 'Ton'])[1 + g % 16],
    'Unknown', 1 + g % 40, 'product' || g
FROM generate_series(1, 400) AS g;

INSERT INTO tpcds.store
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), date '1997-03-13', NULL, NULL,
    (ARRAY['ese', 'ought', 'able', 'bar', 'anti', 'cally'])[1 + g % 6], 200 + g * 8, 5000 + g, '8AM-4PM',
    'Manager' || g, 1 + g % 10, 'Unknown', 'class', 'Manager' || g, 1, 'Unknown', 1, 'Unknown',
    (g * 3)::text, 'Main', 'Street', 'Suite ' || g,
    (ARRAY['Fairview', 'Midway'])[1 + g % 2],
    (ARRAY['Williamson County', 'Orange County', 'Bronx County', 'Franklin Parish'])[1 + g % 4],
    'TN', (ARRAY['85669', '24128', '76232', '31904'])[1 + g % 4], 'United States', -5, 0.03 + g % 3 * 0.01
FROM generate_series(1, 12) AS g;

INSERT INTO tpcds.promotion
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), 2450815, 2452000, 1 + g % 400, 1000.00, 1,
    'promo' || g, (ARRAY['N', 'Y'])[1 + g % 2], (ARRAY['Y', 'N'])[1 + g % 2], 'N', (ARRAY['N', 'Y'])[1 + g / 2 % 2],
    'N', (ARRAY['N', 'Y'])[1 + g / 3 % 2], 'N', 'N', 'details', 'Unknown', 'N'
FROM generate_series(1, 30) AS g;

INSERT INTO tpcds.warehouse
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), 'Warehouse number ' || g, 100000 * g,
    (g * 5)::text, 'Main', 'Street', 'Suite ' || g, 'Fairview', 'Williamson County', 'TN', '31904', 'United States', -5
FROM generate_series(1, 5) AS g;

INSERT INTO tpcds.ship_mode
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'),
    (ARRAY['EXPRESS', 'NEXT DAY', 'OVERNIGHT', 'REGULAR', 'TWO DAY'])[1 + g % 5], 'AIR',
    (ARRAY['DHL', 'BARIAN', 'UPS', 'FEDEX'])[1 + g % 4], 'contract' || g
FROM generate_series(1, 20) AS g;

INSERT INTO tpcds.reason SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), 'reason ' || g FROM generate_series(1, 35) AS g;

INSERT INTO tpcds.call_center
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), date '1998-01-01', NULL, NULL, 2450815, 'call center ' || g,
    'large', 100, 5000, '8AM-4PM', 'Manager' || g, 1, 'Unknown', 'market', 'Manager' || g, 1, 'Unknown', 1,
    'Unknown', (g * 9)::text, 'Main', 'Street', 'Suite ' || g, 'Fairview', 'Williamson County', 'TN', '31904',
    'United States', -5, 0.05
FROM generate_series(1, 6) AS g;

INSERT INTO tpcds.catalog_page
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), 2450815, 2452000, 'DEPARTMENT', 1 + g / 10, 1 + g % 10,
    'page ' || g, 'quarterly'
FROM generate_series(1, 100) AS g;

INSERT INTO tpcds.web_site
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), date '1997-08-16', NULL, 'site_' || g, 2450815, NULL, 'Unknown',
    'Manager' || g, 1, 'Unknown', 'Unknown', 'Manager' || g, 1,
    (ARRAY['pri', 'able', 'ought'])[1 + g % 3], (g * 4)::text, 'Main', 'Street', 'Suite ' || g, 'Fairview',
    'Williamson County', 'TN', '31904', 'United States', -5, 0.01
FROM generate_series(1, 30) AS g;

INSERT INTO tpcds.web_page
SELECT g, 'AAAAAAAA' || lpad(g::text, 8, '0'), date '1997-09-03', NULL, 2450815, 2450815, 'N', 1 + g % 600,
    'http://www.example.com', 'welcome', 4900 + g * 7, 2 + g % 20, 1 + g % 5, g % 4
FROM generate_series(1, 60) AS g;

-- Facts. A ticket (ss_ticket_number t) has one date, customer, household and store: the first 500 tickets have 16
-- lines, the next 1,000 have 4 (queries 34 and 73 count the lines of a ticket). A few keys are null, as in dsdgen's
-- data (queries 44 and 76 look for them).
INSERT INTO tpcds.store_sales
SELECT 2450815 + t * 5 % 2191, 60 * (g * 13 % 1440), 1 + g * 17 % 400, 1 + t * 31 % 200, 1 + g * 7 % 700,
    1 + t * 11 % 240, CASE WHEN g % 7 <> 3 THEN 1 + g * 13 % 600 END,
    CASE WHEN g % 101 <> 0 THEN 1 + t % 12 END, 1 + g % 30, 1 + t,
    1 + g % 100, w, p, s, (p - s) * q, s * q, w * q, p * q, s * q * 0.05, g % 7 * 100.0, s * q, s * q * 1.05,
    (s - w) * q
FROM generate_series(1, 12000) AS g,
    LATERAL (SELECT CASE WHEN g < 8000 THEN g / 16 ELSE 500 + (g - 8000) / 4 END AS t) AS ticket,
    LATERAL (SELECT 1 + g % 100 AS q, (1 + g % 90)::numeric(7, 2) AS w,
        (8 + g % 150)::numeric(7, 2) AS p, (5 + g % 140)::numeric(7, 2) AS s) AS price;

INSERT INTO tpcds.store_returns
SELECT ss_sold_date_sk + 10, ss_sold_time_sk, ss_item_sk, ss_customer_sk, ss_cdemo_sk, ss_hdemo_sk, ss_addr_sk,
    ss_store_sk, 1 + ss_ticket_number % 35, ss_ticket_number, ss_quantity / 2, ss_ext_sales_price / 2,
    ss_ext_tax / 2, ss_ext_sales_price / 2 + ss_ext_tax / 2, 5.00, 1.00, 2.00, ss_ext_sales_price / 4,
    ss_ext_sales_price / 4, ss_ext_sales_price / 2 + 5
FROM tpcds.store_sales WHERE ss_ticket_number % 3 = 0;

INSERT INTO tpcds.catalog_sales
SELECT 2450815 + g * 11 % 2191, 60 * (g * 7 % 1440), 2450815 + g * 11 % 2191 + 1 + g % 120,
    1 + g * 29 % 600, 1 + g * 3 % 700, 1 + g * 5 % 240, 1 + g * 23 % 600,
    1 + g * 31 % 600, 1 + g * 3 % 700, 1 + g * 5 % 240, CASE WHEN g % 59 <> 0 THEN 1 + g * 23 % 600 END,
    1 + g % 6, 1 + g % 100, 1 + g % 20, 1 + g % 5, 1 + g * 19 % 400, 1 + g % 30, 1 + g / 4,
    1 + g % 100, w, p, s, (p - s) * q, s * q, w * q, p * q, s * q * 0.05, g % 5 * 10.0, 4.00, s * q,
    s * q * 1.05, s * q + 4, s * q * 1.05 + 4, (s - w) * q
FROM generate_series(1, 8000) AS g,
    LATERAL (SELECT 1 + g % 100 AS q, (1 + g % 90)::numeric(7, 2) AS w,
        (8 + g % 600)::numeric(7, 2) AS p, (5 + g % 590)::numeric(7, 2) AS s) AS price;

INSERT INTO tpcds.catalog_returns
SELECT cs_sold_date_sk + 20, cs_sold_time_sk, cs_item_sk, cs_bill_customer_sk, cs_bill_cdemo_sk, cs_bill_hdemo_sk,
    cs_bill_addr_sk, cs_ship_customer_sk, cs_ship_cdemo_sk, cs_ship_hdemo_sk, cs_ship_addr_sk, cs_call_center_sk,
    cs_catalog_page_sk, cs_ship_mode_sk, cs_warehouse_sk, 1 + cs_order_number % 35, cs_order_number,
    cs_quantity / 2, cs_ext_sales_price / 2, cs_ext_tax / 2, cs_ext_sales_price / 2 + cs_ext_tax / 2, 4.00, 1.00,
    2.00, cs_ext_sales_price / 4, cs_ext_sales_price / 4, cs_ext_sales_price / 2 + 4
FROM tpcds.catalog_sales WHERE cs_order_number % 3 = 0;

INSERT INTO tpcds.web_sales
SELECT 2450815 + g * 13 % 2191, 60 * (g * 11 % 1440), 2450815 + g * 13 % 2191 + 1 + g % 130,
    1 + g * 23 % 400, 1 + g * 37 % 600, 1 + g * 5 % 700, 1 + g * 7 % 240, 1 + g * 41 % 600,
    CASE WHEN g % 53 <> 0 THEN 1 + g * 43 % 600 END, 1 + g * 5 % 700, 1 + g * 7 % 240, 1 + g * 47 % 600,
    1 + g % 60, 1 + g % 30, 1 + g % 20, 1 + g % 5, 1 + g % 30, 1 + g / 4,
    1 + g % 100, w, p, s, (p - s) * q, s * q, w * q, p * q, s * q * 0.05, g % 5 * 10.0, 3.00, s * q,
    s * q * 1.05, s * q + 3, s * q * 1.05 + 3, (s - w) * q
FROM generate_series(1, 6000) AS g,
    LATERAL (SELECT 1 + g % 100 AS q, (1 + g % 90)::numeric(7, 2) AS w,
        (8 + g % 250)::numeric(7, 2) AS p, (5 + g % 240)::numeric(7, 2) AS s) AS price;

INSERT INTO tpcds.web_returns
SELECT ws_sold_date_sk + 15, ws_sold_time_sk, ws_item_sk, ws_bill_customer_sk, ws_bill_cdemo_sk, ws_bill_hdemo_sk,
    ws_bill_addr_sk, ws_ship_customer_sk, ws_ship_cdemo_sk, ws_ship_hdemo_sk, ws_ship_addr_sk, ws_web_page_sk,
    1 + ws_order_number % 35, ws_order_number, ws_quantity / 2, ws_ext_sales_price / 2, ws_ext_tax / 2,
    ws_ext_sales_price / 2 + ws_ext_tax / 2, 3.00, 1.00, 2.00, ws_ext_sales_price / 4, ws_ext_sales_price / 4,
    ws_ext_sales_price / 2 + 3
FROM tpcds.web_sales WHERE ws_order_number % 3 = 0;

-- Weekly stock of the first 100 items in every warehouse over 1999-2002.
INSERT INTO tpcds.inventory
SELECT 2451180 + 7 * w, i, h, (i * 37 + w * 11 + h * 5) % 1000
FROM generate_series(0, 208) AS w, generate_series(1, 100) AS i, generate_series(1, 5) AS h;

ANALYZE tpcds.date_dim, tpcds.time_dim, tpcds.item, tpcds.customer, tpcds.customer_address,
    tpcds.customer_demographics, tpcds.household_demographics, tpcds.store, tpcds.store_sales, tpcds.store_returns,
    tpcds.catalog_sales, tpcds.catalog_returns, tpcds.web_sales, tpcds.web_returns, tpcds.inventory;
