CREATE TABLE customers (
    customer_id text PRIMARY KEY,
    name        text NOT NULL
);
CREATE TABLE parcels (
    parcel_id    text PRIMARY KEY,
    sender_id    text NOT NULL REFERENCES customers (customer_id),
    recipient_id text NOT NULL REFERENCES customers (customer_id),
    town         text NOT NULL
);
