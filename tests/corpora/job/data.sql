-- Small deterministic synthetic data for the IMDB schema of the Join Order Benchmark. Every value is a function
-- of generate_series' counter. Lookup tables hold the names the 113 queries compare with; the text columns of the
-- larger tables cycle through values that those queries' equality and LIKE filters accept; foreign keys cycle
-- through the referenced ids with different strides, so that joins match.

INSERT INTO job.kind_type SELECT o, k FROM unnest(ARRAY['movie', 'tv series', 'tv movie', 'video movie',
    'tv mini series', 'video game', 'episode']) WITH ORDINALITY AS t(k, o);
INSERT INTO job.company_type SELECT o, k FROM unnest(ARRAY['distributors', 'production companies',
    'special effects companies', 'miscellaneous companies']) WITH ORDINALITY AS t(k, o);
INSERT INTO job.comp_cast_type SELECT o, k FROM unnest(ARRAY['cast', 'crew', 'complete', 'complete+verified'])
    WITH ORDINALITY AS t(k, o);
INSERT INTO job.role_type SELECT o, r FROM unnest(ARRAY['actor', 'actress', 'producer', 'writer', 'cinematographer',
    'composer', 'costume designer', 'director', 'editor', 'miscellaneous crew', 'production designer', 'guest'])
    WITH ORDINALITY AS t(r, o);
INSERT INTO job.link_type SELECT o, l FROM unnest(ARRAY['follows', 'followed by', 'remake of', 'remade as',
    'references', 'referenced in', 'spoofs', 'spoofed in', 'features', 'featured in', 'spin off from', 'spin off',
    'version of', 'similar to', 'edited into', 'edited from', 'alternate language version of', 'sequel'])
    WITH ORDINALITY AS t(l, o);
INSERT INTO job.info_type SELECT o, i FROM unnest(ARRAY['genres', 'countries', 'languages', 'release dates',
    'budget', 'rating', 'votes', 'top 250 rank', 'bottom 10 rank', 'trivia', 'mini biography', 'height'])
    WITH ORDINALITY AS t(i, o);
INSERT INTO job.keyword SELECT o, k, upper(left(k, 4)) FROM unnest(ARRAY['character-name-in-title', 'sequel',
    'second-part', 'superhero', 'marvel-comics', 'based-on-comic', 'marvel-cinematic-universe', 'murder',
    'murder-in-title', 'blood', 'violence', 'gore', 'death', 'female-nudity', 'hospital', 'fight', 'hero',
    'martial-arts', 'hand-to-hand-combat', 'revenge', 'based-on-novel', 'computer-animation',
    'computer-animated-movie', 'tv-special', 'web', 'claw', 'laser', 'magnet', 'loner', 'nerd', 'alienation',
    'dignity', '10,000-mile-club', 'prequel-sequel']) WITH ORDINALITY AS t(k, o);

INSERT INTO job.title
SELECT g,
    (ARRAY['Shrek 2', 'Champion of the Money Movie', 'Freddy vs. Jason', 'Kung Fu Panda', 'Loser Murder Mord',
           'Birdemic: Shock and Terror', 'Dragon Ball Z', 'One Piece', 'Saw', 'Vampire murder night'])[1 + g % 10]
        || CASE WHEN g > 10 THEN ' ' || g ELSE '' END,
    NULL, 1 + g % 7, 1950 + g * 7 % 66, g, upper(substr(md5(g::text), 1, 5)), NULL, 1 + g % 10, g % 120,
    NULL, md5(g::text)
FROM generate_series(1, 500) AS g;

INSERT INTO job.name
SELECT g,
    (ARRAY['Downey Jr., Robert Angel', 'Tim Bert', 'Yoan Angus', 'Brad Bertman', 'Xena Zed', 'Angela Bassett',
           'Zack Yu', 'Ann Tony'])[1 + g % 8] || ' ' || g,
    NULL, g, (ARRAY['m', 'f'])[1 + g % 2], chr(65 + g % 26) || '123', 'B123', 'C12', md5(g::text)
FROM generate_series(1, 400) AS g;

INSERT INTO job.char_name
SELECT g, (ARRAY['Tony Stark', 'Iron Man', 'Queen', 'Sherlock Holmes', 'Angel', 'The Man'])[1 + g % 6],
    NULL, g, 'A123', 'B12', md5(g::text)
FROM generate_series(1, 300) AS g;

INSERT INTO job.aka_name
SELECT g, 1 + g * 7 % 400, (ARRAY['Angel A.', 'Yo B.', 'Bert C.', 'Tim A.'])[1 + g % 4], NULL, chr(65 + g % 26) || '1',
    'B1', 'C1', md5(g::text)
FROM generate_series(1, 600) AS g;

INSERT INTO job.aka_title
SELECT g, 1 + g * 3 % 500, 'Aka title ' || g, NULL, 1 + g % 7, 1950 + g % 66, 'P1', NULL, NULL, NULL,
    '(original title)', md5(g::text)
FROM generate_series(1, 300) AS g;

INSERT INTO job.company_name
SELECT g,
    (ARRAY['DreamWorks Animation', 'Warner Bros.', 'YouTube', 'Lionsgate Films', 'Twentieth Century Fox Film',
           '20th Century Fox', 'Film Bert Company', 'Zeta Studios'])[1 + g % 8],
    (ARRAY['[us]', '[de]', '[jp]', '[nl]', '[ru]', '[sm]', '[pl]', '[gb]'])[1 + g / 8 % 8], g, 'N1', 'S1',
    md5(g::text)
FROM generate_series(1, 128) AS g;

INSERT INTO job.movie_companies
SELECT g, 1 + g * 7 % 500, 1 + g * 11 % 128, 1 + g % 4,
    (ARRAY['(co-production)', '(presents)', '(USA) (theatrical)', '(2006) (worldwide)', '(Japan) (VHS)',
           '(France) (Blu-ray)', '(2007) (USA) (TV)', '(as Metro-Goldwyn-Mayer Pictures)', NULL])[1 + g % 9]
FROM generate_series(1, 3000) AS g;

INSERT INTO job.movie_info
SELECT g, 1 + g * 7 % 500, 1 + g % 12,
    (ARRAY['Drama', 'Horror', 'Action', 'Sci-Fi', 'Thriller', 'Crime', 'War', 'Western', 'Family', 'USA', 'Sweden',
           'Norway', 'Germany', 'Denmark', 'Bulgaria', 'America', 'English', 'German', 'Swedish', 'Norwegian',
           'Danish', 'American', 'USA:2005', 'Japan:2007', 'internet', '$1,000,000'])[1 + g / 12 % 26],
    (ARRAY['(USA)', '(worldwide)', '(internet)', NULL])[1 + g % 4]
FROM generate_series(1, 6000) AS g;

INSERT INTO job.movie_info_idx
SELECT g, 1 + g * 3 % 500, 5 + g % 5, ((10 + g * 7 % 90) / 10.0)::text, NULL
FROM generate_series(1, 2500) AS g;

INSERT INTO job.movie_keyword SELECT g, 1 + g * 7 % 500, 1 + g % 34 FROM generate_series(1, 4000) AS g;

INSERT INTO job.movie_link SELECT g, 1 + g * 7 % 500, 1 + g * 13 % 500, 1 + g % 18 FROM generate_series(1, 1500) AS g;

INSERT INTO job.cast_info
SELECT g, 1 + g * 7 % 400, 1 + g * 11 % 500, 1 + g % 300,
    (ARRAY['(voice)', '(voice) (uncredited)', '(voice: English version)', '(voice: Japanese version)', '(producer)',
           '(executive producer)', '(writer)', '(written by)', '(story)', '(head writer)', '(story editor)',
           NULL])[1 + g % 12],
    g % 20, 1 + g % 12
FROM generate_series(1, 6000) AS g;

INSERT INTO job.complete_cast SELECT g, 1 + g * 3 % 500, 1 + g % 2, 3 + g % 2 FROM generate_series(1, 1000) AS g;

INSERT INTO job.person_info
SELECT g, 1 + g * 7 % 400, 10 + g % 3, 'Some trivia ' || g, (ARRAY['Volker Boehm', NULL])[1 + g % 2]
FROM generate_series(1, 1200) AS g;

ANALYZE job.title, job.name, job.char_name, job.company_name, job.movie_companies, job.movie_info,
    job.movie_info_idx, job.movie_keyword, job.movie_link, job.cast_info, job.complete_cast, job.person_info;
