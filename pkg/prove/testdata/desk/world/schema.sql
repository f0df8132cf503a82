CREATE TABLE customers (
    customer_id text PRIMARY KEY,
    name        text NOT NULL,
    email       text NOT NULL UNIQUE
);
CREATE TABLE accounts (
    account_id   text PRIMARY KEY,
    customer_id  text NOT NULL REFERENCES customers (customer_id),
    status       text NOT NULL CHECK (status IN ('open', 'closed')),
    nickname     text NOT NULL DEFAULT '',
    close_reason text
);
