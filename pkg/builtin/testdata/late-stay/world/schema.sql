CREATE TABLE guests (
    id        text PRIMARY KEY,
    email     text NOT NULL UNIQUE,
    last_name text NOT NULL
);
CREATE TABLE stays (
    id        text PRIMARY KEY,
    guest_id  text NOT NULL REFERENCES guests (id),
    arrival   date NOT NULL,
    departure date NOT NULL,
    room      text NOT NULL,
    adults    integer NOT NULL,
    eta       text
);
CREATE TABLE attempts (
    id        serial PRIMARY KEY,
    stay_id   text NOT NULL REFERENCES stays (id),
    outcome   text NOT NULL
);
