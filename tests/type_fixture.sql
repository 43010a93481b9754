-- The schema the type comparison (tests/test_guard_types.py) generates its expressions over: one column of
-- each interesting built-in type in tf.t, a second table tf.u to join with, and a few rows in each. The
-- generator reads these columns back from pg_attribute, so a column added here is used without other edits.
CREATE SCHEMA tf;

CREATE DOMAIN tf.posint AS int4 CHECK (VALUE > 0);
CREATE DOMAIN tf.label AS text;
CREATE TYPE tf.mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE tf.pair AS (a int4, b text);
CREATE SEQUENCE tf.seq;

CREATE TABLE tf.t (
    id int4 PRIMARY KEY,
    c_int2 int2, c_int4 int4, c_int8 int8,
    c_numeric numeric, c_numeric_10_2 numeric(10, 2), c_float4 float4, c_float8 float8, c_money money,
    c_text text, c_varchar varchar, c_varchar_20 varchar(20), c_char_5 char(5), c_name name, c_bytea bytea,
    c_bool bool,
    c_date date, c_time time, c_time_3 time(3), c_timetz timetz, c_timestamp timestamp, c_timestamptz timestamptz,
    c_interval interval,
    c_uuid uuid, c_json json, c_jsonb jsonb, c_xml xml,
    c_inet inet, c_cidr cidr, c_macaddr macaddr,
    c_bit_8 bit(8), c_varbit varbit,
    c_point point, c_line line, c_lseg lseg, c_box box, c_path path, c_polygon polygon, c_circle circle,
    c_tsvector tsvector, c_tsquery tsquery,
    c_int4range int4range, c_int8range int8range, c_numrange numrange, c_daterange daterange,
    c_tstzrange tstzrange, c_int4multirange int4multirange,
    c_oid oid, c_pg_lsn pg_lsn,
    c_int4_array int4[], c_text_array text[], c_numeric_array numeric[], c_jsonb_array jsonb[],
    c_date_array date[], c_int4range_array int4range[],
    c_posint tf.posint, c_label tf.label, c_mood tf.mood, c_pair tf.pair
);

CREATE TABLE tf.u (
    id int4 PRIMARY KEY,
    t_id int4 REFERENCES tf.t (id),
    c_int4 int8,          -- the same name as a column of tf.t, another type: USING and NATURAL merge them
    c_text varchar(10),
    c_numeric_10_2 numeric(12, 4),
    note text,
    note_c text COLLATE "C",        -- two collations that conflict: a view cannot have note_c || note_posix,
    note_posix text COLLATE "POSIX" -- a SELECT can (type_oracle.py reads it through a CTE)
);

INSERT INTO tf.t VALUES
    (1, 1, 10, 100, 1.5, 12.34, 1.25, 2.5, 9.99, 'one', 'uno', 'eins', 'a', 'n1', '\x01', true,
     '2024-01-01', '12:00', '12:00:00.123', '12:00+02', '2024-01-01 12:00', '2024-01-01 12:00+00', '1 day',
     'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": 1}', '{"a": [1, 2]}', '<a>1</a>',
     '10.0.0.1', '10.0.0.0/8', '08:00:2b:01:02:03', B'10101010', B'101',
     '(1,2)', '{1,-1,0}', '[(0,0),(1,1)]', '(1,1),(0,0)', '[(0,0),(1,1),(2,0)]', '((0,0),(1,1),(1,0))', '<(0,0),1>',
     'a fat cat', 'fat & cat', '[1,5)', '[1,50)', '[1.5,2.5)', '[2024-01-01,2024-02-01)',
     '[2024-01-01 00:00+00,2024-01-02 00:00+00)', '{[1,3),[5,7)}', 42, '0/16B3748',
     '{1,2,3}', '{a,b}', '{1.5,2.5}', ARRAY['{"a":1}'::jsonb], '{2024-01-01}', ARRAY['[1,2)'::int4range],
     5, 'label', 'ok', ROW(1, 'x')),
    (2, 2, 20, 200, 2.5, 56.78, 2.25, 3.5, 1.01, 'two', 'dos', 'zwei', 'b', 'n2', '\x02', false,
     '2024-02-01', '13:00', '13:00:00.5', '13:00+02', '2024-02-01 13:00', '2024-02-01 13:00+00', '2 hours',
     'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', '[1, 2]', '{"b": {"c": 3}}', '<b/>',
     '10.0.0.2', '192.168.0.0/16', '08:00:2b:01:02:04', B'01010101', B'1',
     '(3,4)', '{2,-1,0}', '[(1,1),(2,2)]', '(2,2),(1,1)', '((0,0),(2,2))', '((0,0),(2,2),(2,0))', '<(1,1),2>',
     'the dog', 'dog', '[10,20)', '[5,6)', '(,0)', '[2024-03-01,)', 'empty', '{[10,12)}', 7, '1/0',
     '{4,5}', '{c}', '{}', '{}', '{}', '{}',
     7, 'other', 'happy', ROW(2, 'y')),
    (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

INSERT INTO tf.u VALUES
    (1, 1, 10, 'ten', 1.5, 'first', 'a', 'b'),
    (2, 1, 11, 'eleven', 2.25, 'second', 'c', 'd'),
    (3, 2, 20, 'twenty', NULL, NULL, NULL, NULL),
    (4, NULL, NULL, NULL, NULL, 'orphan', 'e', NULL);
