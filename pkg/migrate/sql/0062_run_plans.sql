-- The plan a run was derived with, as the planner that created the run
-- derived it (before any narrowing to a revision or an update). A planner
-- resuming the run and the reviewer that concludes it read it back instead
-- of deriving again: the same plan, without the minutes a large contract's
-- derivation takes, even after the code that derives plans changed.
CREATE TABLE IF NOT EXISTS run_plans (
    run_id text PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    plan   json NOT NULL
);
