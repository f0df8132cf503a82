-- Reservations desk of a small hotel group. Money is in USD; one loyalty point is worth $0.01.

CREATE TABLE loyalty_tiers (
    code                  text PRIMARY KEY CHECK (code IN ('member', 'silver', 'gold', 'platinum')),
    free_checkout_until   integer NOT NULL CHECK (free_checkout_until BETWEEN 11 AND 16), -- hour of day
    late_checkout_fee     numeric(8,2) NOT NULL,
    max_transfer_per_call integer NOT NULL
);

CREATE TABLE properties (
    id                   text PRIMARY KEY CHECK (id ~ '^HTL-[A-Z]{3}$'),
    name                 text NOT NULL,
    city                 text NOT NULL,
    tax_rate             numeric(5,4) NOT NULL CHECK (tax_rate >= 0 AND tax_rate < 0.5),
    cancel_window_hours  integer NOT NULL CHECK (cancel_window_hours IN (24, 48, 72)),
    max_nights           integer NOT NULL CHECK (max_nights BETWEEN 1 AND 30),
    check_in_hour        integer NOT NULL DEFAULT 15
);

CREATE TABLE room_types (
    id             text PRIMARY KEY,
    property_id    text NOT NULL REFERENCES properties (id),
    code           text NOT NULL CHECK (code IN ('KING', 'TWIN', 'FAMILY', 'SUITE')),
    name           text NOT NULL,
    max_occupancy  integer NOT NULL CHECK (max_occupancy BETWEEN 1 AND 6),
    UNIQUE (property_id, code)
);

CREATE TABLE rates (
    room_type_id  text NOT NULL REFERENCES room_types (id),
    rate_plan     text NOT NULL CHECK (rate_plan IN ('flexible', 'nonrefundable')),
    nightly_rate  numeric(8,2) NOT NULL CHECK (nightly_rate > 0),
    PRIMARY KEY (room_type_id, rate_plan)
);

CREATE TABLE inventory (
    room_type_id  text NOT NULL REFERENCES room_types (id),
    night         date NOT NULL,
    rooms_total   integer NOT NULL CHECK (rooms_total >= 0),
    rooms_sold    integer NOT NULL CHECK (rooms_sold >= 0),
    PRIMARY KEY (room_type_id, night),
    CHECK (rooms_sold <= rooms_total)
);

-- Guests and travel bookers both hold an account; bookers book on behalf of guests.
CREATE TABLE accounts (
    id              text PRIMARY KEY CHECK (id ~ '^AC-[0-9]{5}$'),
    kind            text NOT NULL CHECK (kind IN ('guest', 'booker')),
    first_name      text NOT NULL,
    last_name       text NOT NULL,
    email           text NOT NULL UNIQUE,
    phone           text NOT NULL,
    postal_code     text NOT NULL,
    member_number   text UNIQUE CHECK (member_number ~ '^M[0-9]{8}$'),
    tier            text REFERENCES loyalty_tiers (code),
    points_balance  integer NOT NULL DEFAULT 0 CHECK (points_balance >= 0),
    agency_name     text
);

CREATE TABLE reservations (
    confirmation     text PRIMARY KEY CHECK (confirmation ~ '^HX[0-9]{6}$'),
    guest_id         text NOT NULL REFERENCES accounts (id),
    booked_by        text NOT NULL REFERENCES accounts (id),
    room_type_id     text NOT NULL REFERENCES room_types (id),
    rate_plan        text NOT NULL CHECK (rate_plan IN ('flexible', 'nonrefundable')),
    arrival          date NOT NULL,
    departure        date NOT NULL,
    adults           integer NOT NULL CHECK (adults BETWEEN 1 AND 6),
    status           text NOT NULL CHECK (status IN ('confirmed', 'cancelled', 'checked_in', 'completed', 'no_show')),
    nightly_rate     numeric(8,2) NOT NULL,
    room_subtotal    numeric(10,2) NOT NULL,
    taxes            numeric(10,2) NOT NULL,
    points_redeemed  integer NOT NULL DEFAULT 0 CHECK (points_redeemed >= 0),
    total_due        numeric(10,2) NOT NULL CHECK (total_due >= 0),
    card_brand       text NOT NULL,
    card_last4       text NOT NULL CHECK (card_last4 ~ '^[0-9]{4}$'),
    card_expiry      text NOT NULL CHECK (card_expiry ~ '^[0-9]{4}-[0-9]{2}$'),
    late_checkout    text,
    late_arrival_eta text,
    CHECK (departure > arrival)
);
CREATE INDEX reservations_guest ON reservations (guest_id);
CREATE INDEX reservations_booker ON reservations (booked_by);

CREATE TABLE reservation_guests (
    id              serial PRIMARY KEY,
    confirmation    text NOT NULL REFERENCES reservations (confirmation),
    full_name       text NOT NULL
);

CREATE TABLE reservation_notes (
    id              serial PRIMARY KEY,
    confirmation    text NOT NULL REFERENCES reservations (confirmation),
    category        text NOT NULL CHECK (category IN ('accessibility', 'dietary', 'celebration', 'arrival', 'other')),
    note            text NOT NULL,
    written_at      timestamptz NOT NULL
);

CREATE TABLE charges (
    id              serial PRIMARY KEY,
    confirmation    text NOT NULL REFERENCES reservations (confirmation),
    kind            text NOT NULL CHECK (kind IN ('cancellation', 'no_show', 'late_checkout')),
    amount          numeric(10,2) NOT NULL CHECK (amount > 0),
    charged_at      timestamptz NOT NULL
);

CREATE TABLE points_ledger (
    id              serial PRIMARY KEY,
    account_id      text NOT NULL REFERENCES accounts (id),
    delta           integer NOT NULL,
    reason          text NOT NULL CHECK (reason IN ('stay', 'redemption', 'transfer_in', 'transfer_out', 'refund')),
    confirmation    text REFERENCES reservations (confirmation),
    at              timestamptz NOT NULL
);

CREATE TABLE call_log (
    id              serial PRIMARY KEY,
    confirmation    text REFERENCES reservations (confirmation),
    outcome         text NOT NULL CHECK (outcome IN ('voicemail', 'someone_else', 'handoff')),
    summary         text,
    at              timestamptz NOT NULL
);
