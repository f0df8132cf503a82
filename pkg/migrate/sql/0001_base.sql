-- Facts about the suitegen installation itself, e.g. which deployment created
-- this database. Small on purpose: the migration framework's first file.
CREATE TABLE IF NOT EXISTS suitegen_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

INSERT INTO suitegen_meta (key, value)
VALUES ('created_at', now()::text)
ON CONFLICT (key) DO NOTHING;
