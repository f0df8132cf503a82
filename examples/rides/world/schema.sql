-- World of the rides voice agent: riders, drivers, their trips and everything that
-- follows a trip (fares, adjustments, lost items, safety reports, promos, ratings).
-- Trips move requested -> accepted -> in_progress -> completed; requested and accepted
-- trips may be cancelled.

CREATE TABLE riders (
    rider_id    text PRIMARY KEY CHECK (rider_id ~ '^R-[0-9]{5}$'),
    first_name  text NOT NULL,
    last_name   text NOT NULL,
    phone       text NOT NULL UNIQUE CHECK (phone ~ '^\+1[0-9]{10}$'),
    email       text NOT NULL UNIQUE CHECK (email LIKE '_%@_%'),
    home_city   text NOT NULL,
    status      text NOT NULL CHECK (status IN ('active', 'locked', 'suspended')),
    rating      numeric(3,2) NOT NULL CHECK (rating BETWEEN 1 AND 5),
    joined_on   date NOT NULL
);

-- The one-time code the app texts when a rider taps "call support"; valid 15 minutes.
CREATE TABLE verification_codes (
    phone       text PRIMARY KEY REFERENCES riders (phone),
    code        text NOT NULL CHECK (code ~ '^[0-9]{6}$'),
    expires_at  timestamptz NOT NULL
);

CREATE TABLE payment_methods (
    payment_method_id text PRIMARY KEY,
    rider_id    text NOT NULL REFERENCES riders (rider_id),
    kind        text NOT NULL CHECK (kind IN ('card', 'apple_pay', 'google_pay', 'paypal', 'business')),
    label       text NOT NULL,
    last_four   text CHECK (last_four ~ '^[0-9]{4}$'),
    expires     text CHECK (expires ~ '^[0-9]{2}/[0-9]{2}$'),
    is_expired  boolean NOT NULL DEFAULT false,
    is_default  boolean NOT NULL DEFAULT false,
    CHECK (kind <> 'card' OR (last_four IS NOT NULL AND expires IS NOT NULL))
);

CREATE TABLE drivers (
    driver_id   text PRIMARY KEY CHECK (driver_id ~ '^D-[0-9]{4}$'),
    first_name  text NOT NULL,
    last_name   text NOT NULL,
    phone       text NOT NULL UNIQUE,
    rating      numeric(3,2) NOT NULL CHECK (rating BETWEEN 1 AND 5),
    status      text NOT NULL CHECK (status IN ('active', 'inactive', 'under review')),
    joined_on   date NOT NULL
);

CREATE TABLE vehicles (
    plate       text PRIMARY KEY,
    driver_id   text NOT NULL REFERENCES drivers (driver_id),
    make        text NOT NULL,
    model       text NOT NULL,
    colour      text NOT NULL,
    year        integer NOT NULL CHECK (year BETWEEN 2010 AND 2027),
    category    text NOT NULL CHECK (category IN ('standard', 'comfort', 'xl'))
);

CREATE TABLE promos (
    code        text PRIMARY KEY CHECK (code ~ '^[A-Z0-9]+$'),
    description text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('percent', 'amount')),
    value       numeric(6,2) NOT NULL CHECK (value > 0),
    max_discount numeric(6,2) NOT NULL CHECK (max_discount > 0),
    valid_from  timestamptz NOT NULL,
    valid_until timestamptz NOT NULL,
    new_riders_only boolean NOT NULL DEFAULT false,
    CHECK (valid_until > valid_from),
    CHECK (kind <> 'percent' OR value <= 100)
);

CREATE TABLE trips (
    trip_id     text PRIMARY KEY CHECK (trip_id ~ '^T-[0-9]{5}$'),
    rider_id    text NOT NULL REFERENCES riders (rider_id),
    driver_id   text REFERENCES drivers (driver_id),
    plate       text REFERENCES vehicles (plate),
    status      text NOT NULL CHECK (status IN ('requested', 'accepted', 'in_progress', 'completed', 'cancelled')),
    category    text NOT NULL CHECK (category IN ('standard', 'comfort', 'xl')),
    pickup      text NOT NULL,
    dropoff     text NOT NULL,
    requested_at timestamptz NOT NULL,
    accepted_at timestamptz,
    started_at  timestamptz,
    completed_at timestamptz,
    cancelled_at timestamptz,
    cancelled_by text CHECK (cancelled_by IN ('rider', 'driver')),
    cancel_reason text,
    distance_km numeric(6,1),
    duration_min integer,
    payment_method_id text NOT NULL REFERENCES payment_methods (payment_method_id),
    promo_code  text REFERENCES promos (code),
    rider_stars integer CHECK (rider_stars BETWEEN 1 AND 5),
    rider_comment text,
    CHECK (status <> 'requested' OR driver_id IS NULL),
    CHECK (status NOT IN ('accepted', 'in_progress', 'completed') OR (driver_id IS NOT NULL AND accepted_at IS NOT NULL)),
    CHECK ((driver_id IS NULL) = (plate IS NULL)),
    CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
    CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL AND cancelled_by IS NOT NULL)),
    CHECK (status = 'completed' OR rider_stars IS NULL)
);

-- What a trip costs, line by line; discounts are negative.
CREATE TABLE fare_items (
    trip_id     text NOT NULL REFERENCES trips (trip_id),
    line_no     integer NOT NULL CHECK (line_no > 0),
    kind        text NOT NULL CHECK (kind IN ('base fare', 'distance', 'time', 'surge', 'toll', 'wait time',
                                               'cleaning fee', 'booking fee', 'airport fee', 'cancellation fee',
                                               'promo discount')),
    amount      numeric(8,2) NOT NULL,
    PRIMARY KEY (trip_id, line_no),
    CHECK ((kind = 'promo discount') = (amount < 0))
);

-- Money given back after the fact: refunds on completed trips, waived cancellation fees.
CREATE TABLE adjustments (
    adjustment_id text PRIMARY KEY CHECK (adjustment_id ~ '^ADJ-[0-9]{4}$'),
    trip_id     text NOT NULL REFERENCES trips (trip_id),
    kind        text NOT NULL CHECK (kind IN ('refund', 'fee waiver')),
    amount      numeric(8,2) NOT NULL CHECK (amount > 0),
    reason      text NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE TABLE lost_items (
    report_id   text PRIMARY KEY CHECK (report_id ~ '^LI-[0-9]{4}$'),
    trip_id     text NOT NULL REFERENCES trips (trip_id),
    description text NOT NULL,
    status      text NOT NULL CHECK (status IN ('open', 'driver contacted', 'found', 'returned', 'not found')),
    reported_at timestamptz NOT NULL
);

CREATE TABLE safety_reports (
    report_id   text PRIMARY KEY CHECK (report_id ~ '^SR-[0-9]{4}$'),
    trip_id     text NOT NULL REFERENCES trips (trip_id),
    category    text NOT NULL CHECK (category IN ('unsafe driving', 'harassment', 'physical altercation',
                                                   'vehicle condition', 'collision')),
    description text NOT NULL,
    status      text NOT NULL CHECK (status IN ('escalated', 'under investigation', 'closed')),
    reported_at timestamptz NOT NULL
);

CREATE TABLE rider_promos (
    rider_id    text NOT NULL REFERENCES riders (rider_id),
    code        text NOT NULL REFERENCES promos (code),
    added_at    timestamptz NOT NULL,
    used_trip_id text REFERENCES trips (trip_id),
    PRIMARY KEY (rider_id, code)
);
