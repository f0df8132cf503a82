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
CREATE TABLE coupons (
    code        text PRIMARY KEY,
    description text NOT NULL
);
CREATE TABLE orders (
    order_id    text PRIMARY KEY,
    customer_id text NOT NULL REFERENCES customers (id),
    status      text NOT NULL CHECK (status IN ('open', 'shipped')),
    coupon_code text REFERENCES coupons (code)
);
CREATE TABLE order_lines (
    order_id   text NOT NULL REFERENCES orders (order_id),
    product_id text NOT NULL REFERENCES products (product_id),
    quantity   integer NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, product_id)
);
CREATE TABLE customer_coupons (
    customer_id    text NOT NULL REFERENCES customers (id),
    code           text NOT NULL REFERENCES coupons (code),
    used_on_order  text REFERENCES orders (order_id),
    PRIMARY KEY (customer_id, code)
);
CREATE TABLE credits (
    customer_id text NOT NULL REFERENCES customers (id),
    credit_no   text NOT NULL,
    balance     numeric(8,2) NOT NULL CHECK (balance >= 0),
    PRIMARY KEY (customer_id, credit_no)
);
