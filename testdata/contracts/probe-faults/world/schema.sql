-- A world whose handlers have the faults the probes exist to find.
CREATE TABLE accounts (
    account_no text PRIMARY KEY CHECK (account_no ~ '^AC-[0-9]{4}$'),
    holder     text NOT NULL,
    born       date NOT NULL,
    balance    numeric(10,2) NOT NULL
);
