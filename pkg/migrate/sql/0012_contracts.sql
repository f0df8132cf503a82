-- Contracts travel through the ledger: the planner stores the files it read,
-- and stateless writers load them by hash, so no pod needs the directory.
CREATE TABLE IF NOT EXISTS contracts (
    sha256     text PRIMARY KEY,
    agent      text NOT NULL,
    files      jsonb NOT NULL,      -- path -> content
    created_at timestamptz NOT NULL DEFAULT now()
);
