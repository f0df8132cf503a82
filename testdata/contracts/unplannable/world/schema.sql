-- Use cases no plan can serve: an argument no column holds, and a record
-- no fresh copy of which the schema accepts.
CREATE TABLE members (
    member_ref text PRIMARY KEY CHECK (member_ref IN ('M-1', 'M-2', 'M-3')),
    name       text NOT NULL
);
CREATE TABLE notices (
    notice_ref text PRIMARY KEY,
    body       text NOT NULL
);
