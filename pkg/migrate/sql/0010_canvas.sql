-- The canvas: a run's plan and its ledger. Everything a run knows about its
-- progress is here; writers' reports are never trusted over these rows.

CREATE TABLE IF NOT EXISTS runs (
    id              text PRIMARY KEY,
    agent           text NOT NULL,
    contract_sha256 text NOT NULL,
    world_sha256    text NOT NULL,
    asked           integer NOT NULL,
    seed            bigint NOT NULL,
    model           text NOT NULL,
    state           text NOT NULL DEFAULT 'planning', -- planning | writing | reviewing | done | failed
    round           integer NOT NULL DEFAULT 0,
    budget_tokens   bigint NOT NULL DEFAULT 0,       -- 0: no cap
    message         text NOT NULL DEFAULT '',
    config          jsonb NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz
);

CREATE TABLE IF NOT EXISTS buckets (
    run_id      text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    id          text NOT NULL,
    ord         integer NOT NULL,               -- stable order for ranking ties and output
    theme       text NOT NULL,
    cell        text NOT NULL,
    use_case    text NOT NULL,
    angle       text NOT NULL,
    outcome     text NOT NULL,
    overlay     text NOT NULL,
    kind        text NOT NULL,
    axes        jsonb NOT NULL DEFAULT '{}',
    want        integer NOT NULL,
    attempts    integer NOT NULL DEFAULT 0,
    refused     integer NOT NULL DEFAULT 0,
    state       text NOT NULL DEFAULT 'open',   -- open | claimed | done | blocked
    claimed_by  text,
    notes       text NOT NULL DEFAULT '',
    origin      text NOT NULL DEFAULT 'plan',   -- plan | writer | review
    spec        jsonb NOT NULL DEFAULT '{}',    -- what a writer needs beyond the columns
    PRIMARY KEY (run_id, id)
);

CREATE TABLE IF NOT EXISTS slices (
    run_id      text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    id          text NOT NULL,
    round       integer NOT NULL,
    kind        text NOT NULL DEFAULT 'work',   -- work | gap
    bucket_ids  text[] NOT NULL,
    state       text NOT NULL DEFAULT 'published', -- published | done | dead
    writer      text NOT NULL DEFAULT '',
    deliveries  integer NOT NULL DEFAULT 0,
    reason      text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    PRIMARY KEY (run_id, id)
);

-- The journal: a proved scenario is written here the moment it passes its
-- gates. The primary key credits a name once; the unique constraints are the
-- suite gate's uniqueness rules.
CREATE TABLE IF NOT EXISTS scenarios (
    run_id     text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name       text NOT NULL,
    bucket_id  text NOT NULL,
    use_case   text NOT NULL,
    branch     text NOT NULL,
    slice_id   text NOT NULL,
    writer     text NOT NULL DEFAULT '',
    sha256     text NOT NULL,
    body       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, name),
    UNIQUE (run_id, use_case, branch),
    UNIQUE (run_id, sha256)
);

CREATE TABLE IF NOT EXISTS scenario_codes (
    run_id text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    code   text NOT NULL,
    name   text NOT NULL,
    PRIMARY KEY (run_id, code)
);

CREATE TABLE IF NOT EXISTS refusals (
    id         bigserial PRIMARY KEY,
    run_id     text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    slice_id   text NOT NULL,
    bucket_id  text NOT NULL,
    gate       text NOT NULL,
    code       text NOT NULL,
    message    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS refusals_run ON refusals (run_id, bucket_id);

-- The budget meter: every model call's usage, including calls of slices that
-- later failed.
CREATE TABLE IF NOT EXISTS spend (
    id                bigserial PRIMARY KEY,
    run_id            text NOT NULL,
    slice_id          text NOT NULL,
    writer            text NOT NULL,
    model             text NOT NULL,
    prompt_tokens     integer NOT NULL,
    completion_tokens integer NOT NULL,
    outcome           text NOT NULL DEFAULT 'ok',
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS spend_run ON spend (run_id, slice_id);
