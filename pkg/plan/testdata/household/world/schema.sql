CREATE TABLE tiers (
    code text PRIMARY KEY
);
CREATE TABLE members (
    id            text PRIMARY KEY,
    member_number text NOT NULL UNIQUE,
    last_name     text NOT NULL,
    postal_code   text NOT NULL,
    tier          text NOT NULL REFERENCES tiers (code),
    points        integer NOT NULL CHECK (points >= 0)
);
