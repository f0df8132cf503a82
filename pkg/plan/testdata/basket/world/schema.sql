CREATE TABLE customers (
    id        text PRIMARY KEY,
    email     text NOT NULL UNIQUE,
    last_name text NOT NULL
);
CREATE TABLE products (
    product_id text PRIMARY KEY,
    title      text NOT NULL,
    category   text NOT NULL
);
CREATE TABLE orders (
    order_id    text PRIMARY KEY,
    customer_id text NOT NULL REFERENCES customers (id),
    status      text NOT NULL CHECK (status IN ('open', 'shipped'))
);
CREATE TABLE order_lines (
    order_id   text NOT NULL REFERENCES orders (order_id),
    product_id text NOT NULL REFERENCES products (product_id),
    quantity   integer NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, product_id)
);
