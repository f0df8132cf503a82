-- World of the tau-retail agent, converted from tau-bench's retail domain by
-- testdata/contracts/tau-retail/convert (see its README.md). Generated: edit the converter.
--
-- Money (prices, amounts, gift card balances) is double precision: the published tools
-- do their arithmetic in Python floats and store the unrounded results (a price
-- difference of 12.340000000000003), which a float column keeps bit for bit.

CREATE TABLE users (
    user_id     text PRIMARY KEY,
    first_name  text NOT NULL,
    last_name   text NOT NULL,
    address1    text NOT NULL,
    address2    text NOT NULL,
    city        text NOT NULL,
    country     text NOT NULL,
    state       text NOT NULL,
    zip         text NOT NULL,
    email       text NOT NULL UNIQUE
);

-- A user's payment methods, in the order the profile lists them. Ids are
-- unique across users in the published data, and begin with their source: the
-- published tools tell a gift card by "gift_card" in its id as often as by its
-- source, so a copy made for a scenario must keep that prefix.
CREATE TABLE payment_methods (
    id          text PRIMARY KEY CHECK (id ~ '^(credit_card|gift_card|paypal)_[0-9]{7}$'),
    user_id     text NOT NULL REFERENCES users (user_id),
    position    integer NOT NULL,
    source      text NOT NULL CHECK (source IN ('credit_card', 'gift_card', 'paypal')),
    brand       text,
    last_four   text,
    balance     double precision,
    CHECK (starts_with(id, source || '_')),
    CHECK (source <> 'credit_card' OR (brand IS NOT NULL AND last_four IS NOT NULL AND balance IS NULL)),
    CHECK (source <> 'gift_card' OR (balance IS NOT NULL AND brand IS NULL AND last_four IS NULL)),
    CHECK (source <> 'paypal' OR (balance IS NULL AND brand IS NULL AND last_four IS NULL))
);
CREATE INDEX payment_methods_user ON payment_methods (user_id, position);

-- The 50 product types, in the published order.
CREATE TABLE products (
    product_id  text PRIMARY KEY CHECK (product_id ~ '^[0-9]{10}$'),
    name        text NOT NULL,
    position    integer NOT NULL
);

-- A product's variants ("items"), in the published order.
CREATE TABLE variants (
    item_id     text PRIMARY KEY CHECK (item_id ~ '^[0-9]{10}$'),
    product_id  text NOT NULL REFERENCES products (product_id),
    position    integer NOT NULL,
    available   boolean NOT NULL,
    price       double precision NOT NULL
);
CREATE INDEX variants_product ON variants (product_id, position);

-- A variant's options ({"color": "blue", "size": "M"}), in the published order.
-- An order's item carries the options of its variant: the converter checks that
-- they agree, and the tools copy the variant's options when an item changes.
CREATE TABLE variant_options (
    item_id     text NOT NULL REFERENCES variants (item_id),
    position    integer NOT NULL,
    name        text NOT NULL,
    value       text NOT NULL,
    PRIMARY KEY (item_id, position)
);

-- position orders a user's orders as their profile lists them. The request
-- columns are set by the tools: cancel_reason by a cancellation, return_* by a
-- return, exchange_* by an exchange (the item lists are JSON lists of item ids,
-- sorted as the published tools sort them).
CREATE TABLE orders (
    order_id    text PRIMARY KEY CHECK (order_id ~ '^#W[0-9]{7}$'),
    user_id     text NOT NULL REFERENCES users (user_id),
    position    integer NOT NULL,
    address1    text NOT NULL,
    address2    text NOT NULL,
    city        text NOT NULL,
    country     text NOT NULL,
    state       text NOT NULL,
    zip         text NOT NULL,
    status      text NOT NULL CHECK (status IN ('pending', 'processed', 'delivered', 'cancelled',
        'pending (item modified)', 'return requested', 'exchange requested')),
    cancel_reason text CHECK (cancel_reason IN ('no longer needed', 'ordered by mistake')),
    return_items jsonb,
    return_payment_method_id text REFERENCES payment_methods (id),
    exchange_items jsonb,
    exchange_new_items jsonb,
    exchange_payment_method_id text REFERENCES payment_methods (id),
    exchange_price_difference double precision
);
CREATE INDEX orders_user ON orders (user_id, position);

-- An order's items, in order; one item id may appear more than once.
CREATE TABLE order_items (
    order_id    text NOT NULL REFERENCES orders (order_id),
    position    integer NOT NULL,
    name        text NOT NULL,
    product_id  text NOT NULL REFERENCES products (product_id),
    item_id     text NOT NULL REFERENCES variants (item_id),
    price       double precision NOT NULL,
    PRIMARY KEY (order_id, position)
);

-- An order's shipments: tracking ids and the item ids shipped (JSON lists).
CREATE TABLE fulfillments (
    order_id    text NOT NULL REFERENCES orders (order_id),
    position    integer NOT NULL,
    tracking_id jsonb NOT NULL,
    item_ids    jsonb NOT NULL,
    PRIMARY KEY (order_id, position)
);

-- Payments and refunds of an order, in order.
CREATE TABLE payment_history (
    order_id    text NOT NULL REFERENCES orders (order_id),
    position    integer NOT NULL,
    transaction_type text NOT NULL CHECK (transaction_type IN ('payment', 'refund')),
    amount      double precision NOT NULL,
    payment_method_id text NOT NULL REFERENCES payment_methods (id),
    PRIMARY KEY (order_id, position)
);
