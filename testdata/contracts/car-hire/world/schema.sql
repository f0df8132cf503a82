-- Roadrunner Car Hire: reservations desk world
CREATE TABLE branches (
    code        text PRIMARY KEY CHECK (code ~ '^[A-Z]{3}$'),
    name        text NOT NULL,
    city        text NOT NULL,
    phone       text NOT NULL,
    opens_at    text NOT NULL,
    closes_at   text NOT NULL
);

CREATE TABLE vehicle_classes (
    code          text PRIMARY KEY,
    label         text NOT NULL,
    daily_rate    numeric(8,2) NOT NULL CHECK (daily_rate > 0),
    deposit       numeric(8,2) NOT NULL CHECK (deposit >= 0),
    min_age       integer NOT NULL CHECK (min_age BETWEEN 18 AND 30),
    seats         integer NOT NULL
);

CREATE TABLE vehicles (
    id          text PRIMARY KEY CHECK (id ~ '^VH-[0-9]{4}$'),
    plate       text NOT NULL,
    class_code  text NOT NULL REFERENCES vehicle_classes (code),
    branch_code text NOT NULL REFERENCES branches (code),
    mileage     integer NOT NULL CHECK (mileage >= 0),
    status      text NOT NULL DEFAULT 'available' CHECK (status IN ('available', 'on_rent', 'maintenance'))
);
CREATE UNIQUE INDEX vehicles_plate ON vehicles (plate);

CREATE TABLE customers (
    id             text PRIMARY KEY CHECK (id ~ '^CU-[0-9]{5}$'),
    first_name     text NOT NULL,
    last_name      text NOT NULL,
    email          text NOT NULL UNIQUE,
    phone          text NOT NULL,
    date_of_birth  date NOT NULL,
    licence_number text NOT NULL UNIQUE,
    licence_expires date NOT NULL,
    tier           text NOT NULL DEFAULT 'standard' CHECK (tier IN ('standard', 'silver', 'gold'))
);

CREATE TABLE payment_cards (
    id          text PRIMARY KEY CHECK (id ~ '^PC-[0-9]{5}$'),
    customer_id text NOT NULL REFERENCES customers (id),
    brand       text NOT NULL CHECK (brand IN ('visa', 'mastercard', 'amex')),
    last4       text NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
    expires_on  date NOT NULL,
    frozen      boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX payment_cards_owner_last4 ON payment_cards (customer_id, last4);

CREATE TABLE reservations (
    code          text PRIMARY KEY CHECK (code ~ '^RR[0-9]{6}$'),
    customer_id   text NOT NULL REFERENCES customers (id),
    class_code    text NOT NULL REFERENCES vehicle_classes (code),
    pickup_branch text NOT NULL REFERENCES branches (code),
    return_branch text NOT NULL REFERENCES branches (code),
    pickup_at     timestamptz NOT NULL,
    return_at     timestamptz NOT NULL,
    card_id       text NOT NULL REFERENCES payment_cards (id),
    vehicle_id    text REFERENCES vehicles (id),
    status        text NOT NULL DEFAULT 'booked' CHECK (status IN ('booked', 'confirmed', 'picked_up', 'returned', 'cancelled')),
    total         numeric(10,2) NOT NULL CHECK (total >= 0),
    cancelled_at  timestamptz,
    CONSTRAINT reservation_dates CHECK (return_at > pickup_at),
    CONSTRAINT cancelled_has_time CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
    CONSTRAINT on_rent_has_vehicle CHECK (status NOT IN ('picked_up', 'returned') OR vehicle_id IS NOT NULL)
);
CREATE INDEX reservations_customer ON reservations (customer_id);

CREATE TABLE additional_drivers (
    id               integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reservation_code text NOT NULL REFERENCES reservations (code),
    first_name       text NOT NULL,
    last_name        text NOT NULL,
    date_of_birth    date NOT NULL,
    licence_number   text NOT NULL,
    UNIQUE (reservation_code, licence_number)
);

CREATE TABLE extras (
    code        text PRIMARY KEY,
    label       text NOT NULL,
    daily_price numeric(6,2) NOT NULL CHECK (daily_price >= 0),
    max_qty     integer NOT NULL CHECK (max_qty BETWEEN 1 AND 4)
);

CREATE TABLE reservation_extras (
    reservation_code text NOT NULL REFERENCES reservations (code),
    extra_code       text NOT NULL REFERENCES extras (code),
    quantity         integer NOT NULL CHECK (quantity BETWEEN 1 AND 4),
    PRIMARY KEY (reservation_code, extra_code)
);

CREATE TABLE charges (
    id               text PRIMARY KEY CHECK (id ~ '^CH-[0-9]{5}$'),
    reservation_code text NOT NULL REFERENCES reservations (code),
    kind             text NOT NULL CHECK (kind IN ('damage', 'fuel', 'late_return', 'toll', 'cleaning')),
    amount           numeric(8,2) NOT NULL CHECK (amount > 0),
    status           text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'disputed', 'waived', 'paid')),
    raised_at        timestamptz NOT NULL,
    resolved_at      timestamptz,
    CONSTRAINT resolved_when_closed CHECK ((status IN ('waived', 'paid')) = (resolved_at IS NOT NULL))
);

CREATE TABLE fee_waivers (
    id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id text NOT NULL REFERENCES customers (id),
    charge_id   text NOT NULL UNIQUE REFERENCES charges (id),
    waived_on   date NOT NULL,
    reason      text NOT NULL
);

CREATE TABLE disputes (
    id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    charge_id   text NOT NULL UNIQUE REFERENCES charges (id),
    opened_at   timestamptz NOT NULL,
    details     text NOT NULL
);

CREATE TABLE contact_attempts (
    id               integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reservation_code text NOT NULL REFERENCES reservations (code),
    attempted_at     timestamptz NOT NULL,
    outcome          text NOT NULL CHECK (outcome IN ('voicemail', 'someone_else', 'no_answer', 'callback_requested')),
    callback_at      timestamptz,
    CONSTRAINT callback_needs_time CHECK ((outcome = 'callback_requested') = (callback_at IS NOT NULL))
);
