CREATE TABLE members (
    member_id text PRIMARY KEY,
    name      text NOT NULL,
    email     text NOT NULL UNIQUE
);
CREATE TABLE lockers (
    locker_id text PRIMARY KEY,
    member_id text REFERENCES members (member_id),
    status    text NOT NULL CHECK (status IN ('held', 'free')),
    label     text NOT NULL DEFAULT '',
    relabels  integer NOT NULL DEFAULT 0
);
CREATE TABLE audit (
    entry_id  text PRIMARY KEY,
    locker_id text NOT NULL REFERENCES lockers (locker_id),
    note      text NOT NULL
);
