-- The shop's world.
CREATE TABLE users (
    user_id text PRIMARY KEY,
    email   text NOT NULL UNIQUE,
    name    text NOT NULL,
    zip     varchar(10)          -- may be unknown
);

/* Orders belong to users; /* nested */ comments are fine. */
CREATE TABLE orders (
    id            text NOT NULL,
    user_id       text NOT NULL REFERENCES users ON DELETE CASCADE,
    status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processed', 'delivered', 'cancelled')),
    cancel_reason text,
    total         numeric(10, 2) NOT NULL,
    placed_at     timestamp with time zone DEFAULT now(),
    note          text DEFAULT 'it''s; fine',
    CONSTRAINT orders_pk PRIMARY KEY (id)
);

CREATE TABLE payments (
    id       serial PRIMARY KEY,
    order_id text NOT NULL,
    amount   double precision NOT NULL,
    meta     jsonb,
    FOREIGN KEY (order_id) REFERENCES orders (id)
);

CREATE INDEX payments_order ON payments (order_id);
CREATE UNIQUE INDEX IF NOT EXISTS users_email ON users (lower(email));
