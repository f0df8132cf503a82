-- Additions to the canvas (0010).

-- content_sha256 hashes a scenario's canonical body with its name and the
-- writer/slice provenance blanked: the same test filed under two names, or
-- re-proved by another writer after a redelivery, has the same content hash.
ALTER TABLE scenarios ADD COLUMN IF NOT EXISTS content_sha256 text;
CREATE UNIQUE INDEX IF NOT EXISTS scenarios_content ON scenarios (run_id, content_sha256);
CREATE INDEX IF NOT EXISTS scenarios_bucket ON scenarios (run_id, bucket_id);
CREATE INDEX IF NOT EXISTS scenario_codes_name ON scenario_codes (run_id, name);
CREATE INDEX IF NOT EXISTS buckets_claimed ON buckets (run_id, claimed_by);

-- Sub-goals writers add to the catalogue during a run.
CREATE TABLE IF NOT EXISTS subgoals (
    run_id  text NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name    text NOT NULL,
    what    text NOT NULL,
    judged  boolean NOT NULL DEFAULT false,
    params  jsonb NOT NULL DEFAULT '{}',
    source  text NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, name)
);
