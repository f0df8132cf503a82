-- Parcel carrier customer line: the world the phone agent works on.

CREATE TABLE customers (
    customer_id   text PRIMARY KEY CHECK (customer_id ~ '^C[0-9]{6}$'),
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    phone         text NOT NULL UNIQUE,
    email         text NOT NULL UNIQUE,
    postcode      text NOT NULL,
    address_line1 text NOT NULL,
    town          text NOT NULL,
    business      boolean NOT NULL DEFAULT false
);

CREATE TABLE depots (
    depot_code  text PRIMARY KEY CHECK (depot_code ~ '^D[A-Z]{3}$'),
    name        text NOT NULL,
    town        text NOT NULL,
    postcode    text NOT NULL,
    accepts_holds boolean NOT NULL DEFAULT true
);

CREATE TABLE services (
    service_code       text PRIMARY KEY CHECK (service_code IN ('economy', 'standard', 'express', 'signed', 'international')),
    name               text NOT NULL,
    max_compensation   numeric(10,2) NOT NULL CHECK (max_compensation >= 0),
    claim_window_days  integer NOT NULL CHECK (claim_window_days > 0),
    signature_required boolean NOT NULL
);

CREATE TABLE bank_holidays (
    day  date PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE parcels (
    tracking_number   text PRIMARY KEY CHECK (tracking_number ~ '^PX[0-9]{9}GB$'),
    sender_id         text NOT NULL REFERENCES customers (customer_id),
    recipient_id      text NOT NULL REFERENCES customers (customer_id),
    service_code      text NOT NULL REFERENCES services (service_code),
    status            text NOT NULL CHECK (status IN ('label_created', 'collected', 'in_transit', 'at_depot',
                          'out_for_delivery', 'delivery_attempted', 'held_at_depot', 'delivered', 'returned_to_sender', 'lost')),
    declared_value    numeric(10,2) NOT NULL CHECK (declared_value >= 0),
    weight_kg         numeric(6,2) NOT NULL CHECK (weight_kg > 0),
    expected_delivery date NOT NULL,
    delivered_at      timestamptz,
    delivery_line1    text NOT NULL,
    delivery_town     text NOT NULL,
    delivery_postcode text NOT NULL,
    depot_code        text NOT NULL REFERENCES depots (depot_code),
    safe_place        text,
    held_until        date,
    redelivery_date   date,
    notify_phone      text,
    notify_email      text
);
CREATE INDEX parcels_sender ON parcels (sender_id);
CREATE INDEX parcels_recipient ON parcels (recipient_id);

CREATE TABLE tracking_events (
    event_id        serial PRIMARY KEY,
    tracking_number text NOT NULL REFERENCES parcels (tracking_number),
    happened_at     timestamptz NOT NULL,
    description     text NOT NULL,
    location        text NOT NULL
);
CREATE INDEX tracking_events_parcel ON tracking_events (tracking_number);

CREATE TABLE customs_charges (
    charge_id       text PRIMARY KEY CHECK (charge_id ~ '^CD[0-9]{6}$'),
    tracking_number text NOT NULL UNIQUE REFERENCES parcels (tracking_number),
    duty            numeric(10,2) NOT NULL CHECK (duty >= 0),
    vat             numeric(10,2) NOT NULL CHECK (vat >= 0),
    handling_fee    numeric(10,2) NOT NULL CHECK (handling_fee >= 0),
    status          text NOT NULL DEFAULT 'due' CHECK (status IN ('due', 'paid', 'waived')),
    paid_at         timestamptz,
    payment_ref     text
);

CREATE TABLE claims (
    claim_id        text PRIMARY KEY CHECK (claim_id ~ '^CL[0-9]{6}$'),
    tracking_number text NOT NULL REFERENCES parcels (tracking_number),
    claimant_id     text NOT NULL REFERENCES customers (customer_id),
    kind            text NOT NULL CHECK (kind IN ('damage', 'loss')),
    amount_claimed  numeric(10,2) NOT NULL CHECK (amount_claimed > 0),
    amount_payable  numeric(10,2) NOT NULL CHECK (amount_payable >= 0),
    description     text NOT NULL,
    status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'approved', 'rejected', 'paid')),
    filed_at        timestamptz NOT NULL
);
CREATE INDEX claims_parcel ON claims (tracking_number);

CREATE TABLE collections (
    collection_id   text PRIMARY KEY CHECK (collection_id ~ '^K[0-9]{7}$'),
    customer_id     text NOT NULL REFERENCES customers (customer_id),
    collection_date date NOT NULL,
    address_line1   text NOT NULL,
    postcode        text NOT NULL,
    parcel_count    integer NOT NULL CHECK (parcel_count BETWEEN 1 AND 20),
    status          text NOT NULL DEFAULT 'booked' CHECK (status IN ('booked', 'collected', 'cancelled', 'missed')),
    booked_at       timestamptz NOT NULL
);
CREATE INDEX collections_customer ON collections (customer_id);

CREATE TABLE call_log (
    entry_id    serial PRIMARY KEY,
    customer_id text REFERENCES customers (customer_id),
    kind        text NOT NULL CHECK (kind IN ('handoff', 'missed_call', 'callback')),
    topic       text NOT NULL,
    note        text NOT NULL,
    callback_at timestamptz,
    logged_at   timestamptz NOT NULL
);
