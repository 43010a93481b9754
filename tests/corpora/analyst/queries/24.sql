SELECT id, email, split_part(email, '@', 2) AS domain,
    regexp_replace(name, '[0-9]+', '#') AS masked,
    (regexp_match(email, '^c([0-9]+)@'))[1]::int AS number_in_email
FROM analyst.customers
WHERE email ~ '^c[0-9]*7@' OR name ~* 'CUSTOMER 1[0-9]$'
ORDER BY id
