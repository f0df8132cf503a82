CREATE TABLE members (
    member_id text PRIMARY KEY,
    email     text NOT NULL UNIQUE,
    points    integer NOT NULL DEFAULT 0
);
CREATE TABLE notes (
    id        serial PRIMARY KEY,
    member_id text NOT NULL REFERENCES members (member_id),
    body      text NOT NULL
);
