-- What became of each delivery of a slice, as its writer recorded it: began
-- (with how many scenarios the slice had journalled then), failed (the
-- slice's own failure) or released (a release that is not the slice's
-- fault: a writer stopping, a provider refusing its key). A delivery with no
-- row, or left at began, was lost with its writer. Writers read it to tell a
-- slice that fails, or kills the writers that take it, from one whose
-- writers died of other causes (docs/RELIABILITY.md).
CREATE TABLE IF NOT EXISTS slice_deliveries (
    run_id     text NOT NULL,
    slice_id   text NOT NULL,
    delivery   integer NOT NULL,
    writer     text NOT NULL DEFAULT '',
    outcome    text NOT NULL,
    journalled integer NOT NULL,
    reason     text NOT NULL DEFAULT '',
    at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, slice_id, delivery),
    FOREIGN KEY (run_id, slice_id) REFERENCES slices(run_id, id) ON DELETE CASCADE
);
