-- suitegen's one-time database setup (docs/SECURITY.md), run once as the superuser, connected to
-- the new database suitegen, after the application role suitegen (no superuser, owner of the
-- database) exists: by CloudNativePG as bootstrap.initdb.postInitApplicationSQLRefs (one
-- multi-statement exec, no psql commands), or by the postgres image after
-- components/postgres-single/roles.sql. The role that owns the world-role function first,
-- then exactly what pkg/migrate.SetupSQL prints: TestSetupSQL keeps the two identical, and
-- TestBootstrapSQL runs this file the way CloudNativePG does on a new server.
CREATE ROLE suitegen_admin NOLOGIN CREATEROLE;
-- Only roles granted CONNECT reach the database, and nobody makes
-- temporary tables: the application role (its owner) grants CONNECT to each
-- world role it makes.
REVOKE ALL ON DATABASE suitegen FROM PUBLIC;
-- Only the owner of schema public creates objects in it.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
-- Functions that outlive a rollback or reach other sessions: nobody but the
-- application role, which keeps the advisory locks.
DO $setup$
DECLARE f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = 'pg_catalog'::regnamespace
               AND p.proname IN ('pg_cancel_backend', 'pg_terminate_backend', 'pg_advisory_lock', 'pg_advisory_lock_shared', 'pg_advisory_unlock', 'pg_advisory_unlock_shared', 'pg_advisory_unlock_all', 'pg_advisory_xact_lock', 'pg_advisory_xact_lock_shared', 'pg_try_advisory_lock', 'pg_try_advisory_lock_shared', 'pg_try_advisory_xact_lock', 'pg_try_advisory_xact_lock_shared', 'lo_creat', 'lo_create', 'lo_from_bytea', 'lo_import', 'lo_export', 'lo_open', 'lo_close', 'loread', 'lowrite', 'lo_get', 'lo_put', 'lo_lseek', 'lo_lseek64', 'lo_tell', 'lo_tell64', 'lo_truncate', 'lo_truncate64', 'lo_unlink', 'pg_logical_emit_message') LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
        IF f::text LIKE 'pg\_%advisory\_%' THEN
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, 'suitegen');
        END IF;
    END LOOP;
END $setup$;
-- World roles are made by this function alone, owned by a role that never
-- logs in.
CREATE SCHEMA IF NOT EXISTS suitegen_admin AUTHORIZATION suitegen_admin;
REVOKE ALL ON SCHEMA suitegen_admin FROM PUBLIC;
GRANT USAGE ON SCHEMA suitegen_admin TO suitegen;
CREATE OR REPLACE FUNCTION suitegen_admin.world_role(role_name text, verifier text, can_login boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
    db oid := (SELECT oid FROM pg_database WHERE datname = current_database());
    r record;
BEGIN
    IF role_name !~ ('^w_[0-9a-f]{16}_[or]' || db || '$') THEN
        RAISE EXCEPTION '% is not a world role of database %', role_name, current_database()
            USING ERRCODE = '42501';
    END IF;
    IF verifier !~ '^SCRAM-SHA-256\$[0-9]+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$' THEN
        RAISE EXCEPTION 'the password of % must be a SCRAM-SHA-256 verifier', role_name
            USING ERRCODE = '22023';
    END IF;
    SELECT * INTO r FROM pg_roles WHERE rolname = role_name;
    IF NOT FOUND THEN
        EXECUTE format('CREATE ROLE %I NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS %s PASSWORD %L',
            role_name, CASE WHEN can_login THEN 'LOGIN' ELSE 'NOLOGIN' END, verifier);
    ELSE
        IF r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls
           OR EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid) THEN
            RAISE EXCEPTION 'role % exists with privileges a world role must not have', role_name
                USING ERRCODE = '42501';
        END IF;
        EXECUTE format('ALTER ROLE %I %s PASSWORD %L',
            role_name, CASE WHEN can_login THEN 'LOGIN' ELSE 'NOLOGIN' END, verifier);
        EXECUTE format('ALTER ROLE %I RESET ALL', role_name);
    END IF;
    IF role_name ~ '_o[0-9]+$' AND NOT pg_has_role(session_user, role_name, 'MEMBER') THEN
        EXECUTE format('GRANT %I TO %I', role_name, session_user);
    END IF;
END
$fn$;
ALTER FUNCTION suitegen_admin.world_role(text, text, boolean) OWNER TO suitegen_admin;
REVOKE ALL ON FUNCTION suitegen_admin.world_role(text, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION suitegen_admin.world_role(text, text, boolean) TO suitegen;
