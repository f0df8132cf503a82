-- A scenario's earlier versions: what a revision replaced, with what was
-- asked, under the run that wrote the replacement.
CREATE TABLE IF NOT EXISTS scenario_history (
    run_id      text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name        text NOT NULL,
    ask         text NOT NULL,
    suite       text NOT NULL,
    body        jsonb NOT NULL,
    replaced_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, name)
);
