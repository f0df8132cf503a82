-- World of the retail support agent: a small online shop.
-- Orders move pending -> processed -> delivered; a pending order may be cancelled
-- or modified, a delivered one may have items returned or exchanged (once).

CREATE TABLE users (
    user_id     text PRIMARY KEY,
    first_name  text NOT NULL,
    last_name   text NOT NULL,
    email       text NOT NULL UNIQUE,
    phone       text NOT NULL,
    address1    text NOT NULL,
    address2    text NOT NULL DEFAULT '',
    city        text NOT NULL,
    state       text NOT NULL,
    country     text NOT NULL,
    zip         text NOT NULL,
    member_since date NOT NULL
);

CREATE TABLE payment_methods (
    payment_method_id text PRIMARY KEY,
    user_id     text NOT NULL REFERENCES users (user_id),
    kind        text NOT NULL CHECK (kind IN ('credit_card', 'gift_card', 'paypal')),
    brand       text,
    last_four   text,
    balance     numeric(10,2),
    paypal_email text,
    CHECK (kind <> 'credit_card' OR (brand IS NOT NULL AND last_four ~ '^[0-9]{4}$')),
    CHECK (kind <> 'gift_card' OR (balance IS NOT NULL AND balance >= 0)),
    CHECK (kind = 'gift_card' OR balance IS NULL),
    CHECK (kind <> 'paypal' OR paypal_email IS NOT NULL)
);

CREATE TABLE products (
    product_id  text PRIMARY KEY,
    name        text NOT NULL,
    category    text NOT NULL,
    description text NOT NULL
);

CREATE TABLE variants (
    item_id     text PRIMARY KEY,
    product_id  text NOT NULL REFERENCES products (product_id),
    options     jsonb NOT NULL,
    price       numeric(10,2) NOT NULL CHECK (price > 0),
    available   boolean NOT NULL
);

CREATE TABLE orders (
    order_id    text PRIMARY KEY CHECK (order_id ~ '^#W[0-9]{4}$'),
    user_id     text NOT NULL REFERENCES users (user_id),
    status      text NOT NULL CHECK (status IN ('pending', 'processed', 'delivered', 'cancelled',
                                                 'return requested', 'exchange requested')),
    placed_at   timestamptz NOT NULL,
    address1    text NOT NULL,
    address2    text NOT NULL DEFAULT '',
    city        text NOT NULL,
    state       text NOT NULL,
    country     text NOT NULL,
    zip         text NOT NULL,
    carrier     text,
    tracking_number text,
    items_modified boolean NOT NULL DEFAULT false,
    cancel_reason text CHECK (cancel_reason IN ('no longer needed', 'ordered by mistake')),
    request_payment_method_id text REFERENCES payment_methods (payment_method_id),
    CHECK ((status = 'cancelled') = (cancel_reason IS NOT NULL)),
    CHECK (status IN ('pending', 'cancelled') OR tracking_number IS NOT NULL),
    CHECK ((status IN ('return requested', 'exchange requested')) = (request_payment_method_id IS NOT NULL))
);

CREATE TABLE order_items (
    order_id    text NOT NULL REFERENCES orders (order_id),
    item_id     text NOT NULL REFERENCES variants (item_id),
    price       numeric(10,2) NOT NULL CHECK (price > 0),
    status      text NOT NULL DEFAULT 'ordered'
                CHECK (status IN ('ordered', 'return requested', 'exchange requested')),
    new_item_id text REFERENCES variants (item_id),
    PRIMARY KEY (order_id, item_id),
    CHECK ((status = 'exchange requested') = (new_item_id IS NOT NULL))
);

-- Money movements per order, in order: charges and refunds.
CREATE TABLE payments (
    order_id    text NOT NULL REFERENCES orders (order_id),
    seq         integer NOT NULL CHECK (seq > 0),
    kind        text NOT NULL CHECK (kind IN ('charge', 'refund')),
    payment_method_id text NOT NULL REFERENCES payment_methods (payment_method_id),
    amount      numeric(10,2) NOT NULL CHECK (amount > 0),
    PRIMARY KEY (order_id, seq)
);
