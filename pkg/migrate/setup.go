package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// AdminRole is the NOLOGIN role that owns the one function allowed to make
// world roles (AdminFunction). It needs CREATEROLE; the application role
// does not, so what the application can do to roles is what that function
// does and no more.
const AdminRole = "suitegen_admin"

// AdminFunction makes (or resets) the login role of a world and is the only
// way the application role touches roles: world_role(name, verifier, login)
// accepts only names of this database's world roles and SCRAM verifiers,
// refuses a name held by a role with any privilege beyond logging in, and
// grants a world's owner role to the caller (who creates the world's schemas
// for it).
const AdminFunction = AdminRole + ".world_role"

// Restricted are the pg_catalog functions PUBLIC may execute by default that
// act outside a transaction or on other sessions: signalling backends,
// advisory locks (held past a rollback, and shared by every role of the
// database), large objects, logical decoding messages. Setup revokes them
// from PUBLIC; the application role gets the advisory locks back.
var Restricted = []string{
	"pg_cancel_backend", "pg_terminate_backend",
	"pg_advisory_lock", "pg_advisory_lock_shared", "pg_advisory_unlock", "pg_advisory_unlock_shared",
	"pg_advisory_unlock_all", "pg_advisory_xact_lock", "pg_advisory_xact_lock_shared",
	"pg_try_advisory_lock", "pg_try_advisory_lock_shared", "pg_try_advisory_xact_lock",
	"pg_try_advisory_xact_lock_shared",
	"lo_creat", "lo_create", "lo_from_bytea", "lo_import", "lo_export", "lo_open", "lo_close",
	"loread", "lowrite", "lo_get", "lo_put", "lo_lseek", "lo_lseek64", "lo_tell", "lo_tell64",
	"lo_truncate", "lo_truncate64", "lo_unlink",
	"pg_logical_emit_message",
}

// ServerSQL is what a superuser runs once per server, connected to any
// database, before SetupSQL: the admin role, the application role and its
// database. password is written into the statement as given.
func ServerSQL(database, app, password string) string {
	return fmt.Sprintf(`CREATE ROLE %[1]s NOLOGIN CREATEROLE;
CREATE ROLE %[2]s LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD %[4]s;
CREATE DATABASE %[3]s OWNER %[2]s;
`, ident(AdminRole), ident(app), ident(database), literal(password))
}

// SetupSQL is what a superuser runs once, connected to the suitegen
// database, after ServerSQL; Setup runs the same text. It is idempotent.
func SetupSQL(database, app string) string {
	names := make([]string, len(Restricted))
	for i, n := range Restricted {
		names[i] = literal(n)
	}
	return fmt.Sprintf(`-- Only roles granted CONNECT reach the database, and nobody makes
-- temporary tables: the application role (its owner) grants CONNECT to each
-- world role it makes.
REVOKE ALL ON DATABASE %[1]s FROM PUBLIC;
-- Only the owner of schema public creates objects in it.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
-- Functions that outlive a rollback or reach other sessions: nobody but the
-- application role, which keeps the advisory locks.
DO $setup$
DECLARE f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = 'pg_catalog'::regnamespace
               AND p.proname IN (%[3]s) LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %%s FROM PUBLIC', f);
        IF f::text LIKE 'pg\_%%advisory\_%%' THEN
            EXECUTE format('GRANT EXECUTE ON FUNCTION %%s TO %%I', f, %[5]s);
        END IF;
    END LOOP;
END $setup$;
-- World roles are made by this function alone, owned by a role that never
-- logs in.
CREATE SCHEMA IF NOT EXISTS %[4]s AUTHORIZATION %[4]s;
REVOKE ALL ON SCHEMA %[4]s FROM PUBLIC;
GRANT USAGE ON SCHEMA %[4]s TO %[2]s;
CREATE OR REPLACE FUNCTION %[6]s(role_name text, verifier text, can_login boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
    db oid := (SELECT oid FROM pg_database WHERE datname = current_database());
    r record;
BEGIN
    IF role_name !~ ('^w_[0-9a-f]{16}_[or]' || db || '$') THEN
        RAISE EXCEPTION '%% is not a world role of database %%', role_name, current_database()
            USING ERRCODE = '42501';
    END IF;
    IF verifier !~ '^SCRAM-SHA-256\$[0-9]+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$' THEN
        RAISE EXCEPTION 'the password of %% must be a SCRAM-SHA-256 verifier', role_name
            USING ERRCODE = '22023';
    END IF;
    SELECT * INTO r FROM pg_roles WHERE rolname = role_name;
    IF NOT FOUND THEN
        EXECUTE format('CREATE ROLE %%I NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS %%s PASSWORD %%L',
            role_name, CASE WHEN can_login THEN 'LOGIN' ELSE 'NOLOGIN' END, verifier);
    ELSE
        IF r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls
           OR EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid) THEN
            RAISE EXCEPTION 'role %% exists with privileges a world role must not have', role_name
                USING ERRCODE = '42501';
        END IF;
        EXECUTE format('ALTER ROLE %%I %%s PASSWORD %%L',
            role_name, CASE WHEN can_login THEN 'LOGIN' ELSE 'NOLOGIN' END, verifier);
        EXECUTE format('ALTER ROLE %%I RESET ALL', role_name);
    END IF;
    IF role_name ~ '_o[0-9]+$' AND NOT pg_has_role(session_user, role_name, 'MEMBER') THEN
        EXECUTE format('GRANT %%I TO %%I', role_name, session_user);
    END IF;
END
$fn$;
ALTER FUNCTION %[6]s(text, text, boolean) OWNER TO %[4]s;
REVOKE ALL ON FUNCTION %[6]s(text, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION %[6]s(text, text, boolean) TO %[2]s;
`, ident(database), ident(app), strings.Join(names, ", "), ident(AdminRole), literal(app), AdminFunction)
}

// Setup makes the admin role when missing and runs SetupSQL. conn must be a
// superuser's, connected to database.
func Setup(ctx context.Context, conn *pgx.Conn, database, app string) error {
	_, err := conn.Exec(ctx, "CREATE ROLE "+ident(AdminRole)+" NOLOGIN CREATEROLE")
	var pe *pgconn.PgError
	if err != nil && !(errors.As(err, &pe) && (pe.Code == "42710" || pe.Code == "23505")) { // exists (or lost a race)
		return fmt.Errorf("migrate: setup: role %s: %w", AdminRole, err)
	}
	if _, err := conn.Exec(ctx, SetupSQL(database, app)); err != nil {
		return fmt.Errorf("migrate: setup of %s: %w", database, err)
	}
	return nil
}

// ident quotes a name as PostgreSQL needs: as it is when it is a plain lower
// case name, in double quotes otherwise.
func ident(s string) string {
	plain := s != "" && !reserved[s]
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
		}
	}
	if plain {
		return s
	}
	return pgx.Identifier{s}.Sanitize()
}

// reserved are the key words that cannot be names unquoted, of those a role
// or database might plausibly be called.
var reserved = map[string]bool{"all": true, "user": true, "table": true, "select": true, "group": true,
	"order": true, "default": true, "public": true, "none": true, "session_user": true, "current_user": true}

func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
