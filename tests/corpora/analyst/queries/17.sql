SELECT c.country,
    jsonb_agg(jsonb_build_object('id', c.id, 'city', c.profile->'address'->>'city') ORDER BY c.id) AS customers,
    jsonb_object_agg(c.id::text, c.profile->'age') AS ages
FROM analyst.customers AS c
WHERE (c.profile->>'vip')::boolean
GROUP BY c.country
ORDER BY c.country
