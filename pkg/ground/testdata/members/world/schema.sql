CREATE TABLE accounts (
    account_no text PRIMARY KEY,
    paused     boolean NOT NULL DEFAULT false
);
CREATE TABLE people (
    person_id text PRIMARY KEY,
    full_name text NOT NULL
);
CREATE TABLE members (
    account_no text NOT NULL REFERENCES accounts (account_no),
    person_id  text NOT NULL REFERENCES people (person_id),
    role       text NOT NULL,
    PRIMARY KEY (account_no, person_id)
);
CREATE TABLE visits (
    visit_id   text PRIMARY KEY,
    account_no text NOT NULL REFERENCES accounts (account_no),
    person_id  text NOT NULL REFERENCES people (person_id)
);
