CREATE TABLE properties (
    property_ref text PRIMARY KEY,
    zone         text NOT NULL CHECK (zone IN ('A', 'B'))
);
CREATE TABLE people (
    person_id     text PRIMARY KEY,
    full_name     text NOT NULL,
    home_property text REFERENCES properties (property_ref)
);
CREATE TABLE vehicles (
    registration text PRIMARY KEY,
    keeper_id    text NOT NULL REFERENCES people (person_id)
);
CREATE TABLE permits (
    permit_no    text PRIMARY KEY CHECK (permit_no ~ '^RP[0-9]{6}$'),
    registration text NOT NULL REFERENCES vehicles (registration),
    property_ref text NOT NULL REFERENCES properties (property_ref),
    holder_id    text NOT NULL REFERENCES people (person_id),
    zone         text NOT NULL CHECK (zone IN ('A', 'B')),
    status       text NOT NULL CHECK (status IN ('active', 'expired'))
);
