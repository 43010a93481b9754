CREATE SCHEMA analyst;

CREATE TABLE analyst.customers (
    id integer PRIMARY KEY,
    name text NOT NULL,
    email text NOT NULL,
    country text NOT NULL,
    segment text NOT NULL,
    signup_at timestamptz NOT NULL,
    tags text[] NOT NULL,
    profile jsonb NOT NULL
);

CREATE TABLE analyst.products (
    id integer PRIMARY KEY,
    name text NOT NULL,
    category text NOT NULL,
    price numeric(10, 2) NOT NULL,
    cost numeric(10, 2) NOT NULL,
    stock integer NOT NULL,
    weight_grams integer NOT NULL,
    tags text[] NOT NULL,
    description text NOT NULL
);

CREATE TABLE analyst.orders (
    id integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES analyst.customers,
    ordered_at timestamptz NOT NULL,
    status text NOT NULL,
    channel text NOT NULL,
    total numeric(12, 2) NOT NULL,
    discount numeric(12, 2),
    shipped_on date
);

CREATE TABLE analyst.order_items (
    order_id integer NOT NULL REFERENCES analyst.orders,
    product_id integer NOT NULL REFERENCES analyst.products,
    quantity integer NOT NULL,
    unit_price numeric(10, 2) NOT NULL,
    PRIMARY KEY (order_id, product_id)
);

CREATE TABLE analyst.events (
    id bigint PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES analyst.customers,
    kind text NOT NULL,
    occurred_at timestamptz NOT NULL,
    doc jsonb NOT NULL,
    tags text[] NOT NULL,
    body text NOT NULL
);

CREATE TABLE analyst.employees (
    id integer PRIMARY KEY,
    name text NOT NULL,
    manager_id integer REFERENCES analyst.employees,
    hired_on date NOT NULL,
    salary numeric(10, 2) NOT NULL,
    region text NOT NULL
);
