CREATE TABLE travellers (
    traveller_id text PRIMARY KEY,
    name         text NOT NULL
);
CREATE TABLE trains (
    train_no text PRIMARY KEY,
    line     text NOT NULL
);
-- A train runs on several days; only an open one may be booked.
CREATE TABLE departures (
    train_no text NOT NULL REFERENCES trains (train_no),
    day      text NOT NULL,
    status   text NOT NULL CHECK (status IN ('open', 'departed')),
    PRIMARY KEY (train_no, day)
);
CREATE TABLE bookings (
    booking_id   text PRIMARY KEY,
    traveller_id text NOT NULL REFERENCES travellers (traveller_id),
    class        text NOT NULL CHECK (class IN ('standard', 'first'))
);
CREATE TABLE legs (
    booking_id text NOT NULL REFERENCES bookings (booking_id),
    position   integer NOT NULL,
    train_no   text NOT NULL REFERENCES trains (train_no),
    day        text NOT NULL,
    PRIMARY KEY (booking_id, position)
);
