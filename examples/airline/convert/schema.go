package main

// schema is world/schema.sql. Every nested object of the published data
// becomes a table of its own, in the published field names; "position"
// columns keep the order the published lists and objects had, since the
// agent reads them back in that order.
const schema = `-- World of the airline agent, converted from tau-bench's airline domain by
-- examples/airline/convert (see examples/airline/README.md). Generated: edit the converter.
--
-- Dates and times are kept as the text the published data holds ('2024-05-20',
-- '2024-05-02T03:10:19', '06:00:00+1'): tools compare and return them as text.

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
    email       text NOT NULL,
    dob         text NOT NULL CHECK (dob ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    membership  text NOT NULL CHECK (membership IN ('regular', 'silver', 'gold'))
);

-- A payment method belongs to one user: ids are unique per user, as in the
-- published profile (send_certificate gives every user the same new ids).
CREATE TABLE payment_methods (
    user_id     text NOT NULL REFERENCES users (user_id),
    id          text NOT NULL,
    position    integer NOT NULL,
    source      text NOT NULL CHECK (source IN ('credit_card', 'gift_card', 'certificate')),
    brand       text,
    last_four   text,
    amount      numeric,
    PRIMARY KEY (user_id, id),
    CHECK (source <> 'credit_card' OR (brand IS NOT NULL AND last_four IS NOT NULL AND amount IS NULL)),
    CHECK (source = 'credit_card' OR (amount IS NOT NULL AND brand IS NULL AND last_four IS NULL))
);

CREATE TABLE saved_passengers (
    user_id     text NOT NULL REFERENCES users (user_id),
    position    integer NOT NULL,
    first_name  text NOT NULL,
    last_name   text NOT NULL,
    dob         text NOT NULL,
    PRIMARY KEY (user_id, position)
);

-- The airports list_all_airports names, in its order.
CREATE TABLE airports (
    iata        text PRIMARY KEY CHECK (iata ~ '^[A-Z]{3}$'),
    city        text NOT NULL,
    position    integer NOT NULL
);

CREATE TABLE flights (
    flight_number text PRIMARY KEY,
    origin        text NOT NULL REFERENCES airports (iata),
    destination   text NOT NULL REFERENCES airports (iata),
    scheduled_departure_time_est text NOT NULL,
    scheduled_arrival_time_est   text NOT NULL
);

-- One row per flight and date ("dates" in the published data). An available
-- date has seats and prices per cabin; the others have the times their
-- status gives.
CREATE TABLE flight_dates (
    flight_number text NOT NULL REFERENCES flights (flight_number),
    date          text NOT NULL CHECK (date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    status        text NOT NULL CHECK (status IN ('available', 'on time', 'delayed', 'flying', 'landed', 'cancelled')),
    available_seats_basic_economy integer,
    available_seats_economy       integer,
    available_seats_business      integer,
    price_basic_economy integer,
    price_economy       integer,
    price_business      integer,
    actual_departure_time_est    text,
    actual_arrival_time_est      text,
    estimated_departure_time_est text,
    estimated_arrival_time_est   text,
    PRIMARY KEY (flight_number, date),
    CHECK (status <> 'available' OR (available_seats_basic_economy IS NOT NULL AND available_seats_economy IS NOT NULL
        AND available_seats_business IS NOT NULL AND price_basic_economy IS NOT NULL
        AND price_economy IS NOT NULL AND price_business IS NOT NULL))
);

-- position orders a user's reservations as their profile lists them.
CREATE TABLE reservations (
    reservation_id   text PRIMARY KEY,
    user_id          text NOT NULL REFERENCES users (user_id),
    position         integer NOT NULL,
    origin           text NOT NULL,
    destination      text NOT NULL,
    flight_type      text NOT NULL CHECK (flight_type IN ('one_way', 'round_trip')),
    cabin            text NOT NULL CHECK (cabin IN ('basic_economy', 'economy', 'business')),
    created_at       text NOT NULL,
    total_baggages   integer NOT NULL,
    nonfree_baggages integer NOT NULL,
    insurance        text NOT NULL CHECK (insurance IN ('yes', 'no')),
    status           text CHECK (status = 'cancelled')
);
CREATE INDEX reservations_user ON reservations (user_id, position);

CREATE TABLE reservation_flights (
    reservation_id text NOT NULL REFERENCES reservations (reservation_id),
    position       integer NOT NULL,
    flight_number  text NOT NULL REFERENCES flights (flight_number),
    date           text NOT NULL,
    origin         text NOT NULL,
    destination    text NOT NULL,
    price          integer NOT NULL,
    PRIMARY KEY (reservation_id, position)
);

CREATE TABLE reservation_passengers (
    reservation_id text NOT NULL REFERENCES reservations (reservation_id),
    position       integer NOT NULL,
    first_name     text NOT NULL,
    last_name      text NOT NULL,
    dob            text NOT NULL,
    PRIMARY KEY (reservation_id, position)
);

-- Charges (positive) and refunds (negative) of a reservation, in order.
CREATE TABLE payment_history (
    reservation_id text NOT NULL REFERENCES reservations (reservation_id),
    position       integer NOT NULL,
    payment_id     text NOT NULL,
    amount         numeric NOT NULL,
    PRIMARY KEY (reservation_id, position)
);
`
