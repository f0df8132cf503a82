-- Run states as pkg/canvas names them (canvas.RunState): a run is planned,
-- then writing, reviewing, and ends done, failed or cancelled.
UPDATE runs SET state = 'planned' WHERE state = 'planning';
UPDATE runs SET state = 'cancelled' WHERE state = 'interrupted';
ALTER TABLE runs ALTER COLUMN state SET DEFAULT 'planned';
ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_state;
ALTER TABLE runs ADD CONSTRAINT runs_state
    CHECK (state IN ('planned', 'writing', 'reviewing', 'done', 'failed', 'cancelled'));
ALTER TABLE buckets DROP CONSTRAINT IF EXISTS buckets_state;
ALTER TABLE buckets ADD CONSTRAINT buckets_state CHECK (state IN ('open', 'claimed', 'done', 'blocked'));
ALTER TABLE slices DROP CONSTRAINT IF EXISTS slices_state;
ALTER TABLE slices ADD CONSTRAINT slices_state CHECK (state IN ('published', 'done', 'dead'));
