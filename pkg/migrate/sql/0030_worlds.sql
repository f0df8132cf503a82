-- Worlds (pkg/world): which exist, and the login role their copies run as.
-- The table holds that role's password, so only the application role (its
-- owner) reads it: nothing is granted to anyone.
CREATE TABLE IF NOT EXISTS suitegen_worlds (
    schema          text PRIMARY KEY,
    contract_sha256 text NOT NULL,
    world_sha256    text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE suitegen_worlds
    ADD COLUMN IF NOT EXISTS copy_role text,
    ADD COLUMN IF NOT EXISTS copy_password text;
REVOKE ALL ON suitegen_worlds FROM PUBLIC;

-- Worlds built before they had roles of their own (copies switched roles
-- inside the application's session) are dropped; each is rebuilt from its
-- contract the first time a run uses it.
DO $$
DECLARE s text;
BEGIN
    FOR s IN SELECT schema FROM suitegen_worlds WHERE copy_role IS NULL LOOP
        EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', s);
        EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', s || '_b');
    END LOOP;
    DELETE FROM suitegen_worlds WHERE copy_role IS NULL;
END $$;

-- Every copy of a world inserts a row here first. The row's deferred
-- trigger fails any commit, so a copy's transaction can only end in a
-- rollback: whatever SQL a copy is given (COMMIT included), nothing it does
-- outlives it. The table is the application's; world roles may only insert.
CREATE SCHEMA IF NOT EXISTS suitegen_copy;
REVOKE ALL ON SCHEMA suitegen_copy FROM PUBLIC;
CREATE UNLOGGED TABLE IF NOT EXISTS suitegen_copy.uncommittable ();
CREATE OR REPLACE FUNCTION suitegen_copy.refuse_commit() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    RAISE EXCEPTION 'a copy of a world is never committed' USING ERRCODE = 'SG001';
END $$;
DROP TRIGGER IF EXISTS refuse_commit ON suitegen_copy.uncommittable;
CREATE CONSTRAINT TRIGGER refuse_commit AFTER INSERT ON suitegen_copy.uncommittable
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION suitegen_copy.refuse_commit();
