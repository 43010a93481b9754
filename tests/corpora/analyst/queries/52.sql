SELECT e.id, e.name, e.hired_on, age(date '2024-12-31', e.hired_on) AS tenure,
    extract(epoch FROM (timestamp '2024-12-31 00:00:00' - e.hired_on::timestamp)) / 86400 AS days_employed,
    e.salary - avg(e.salary) OVER (PARTITION BY e.region) AS vs_region_avg
FROM analyst.employees AS e
ORDER BY e.hired_on
