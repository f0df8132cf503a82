package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/scram"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func connect(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// A role given nothing can do nothing Setup takes from PUBLIC: connect,
// make temporary tables, create in public, run the restricted functions.
// The application role keeps the advisory locks.
func TestSetupLeavesPublicNothing(t *testing.T) {
	ctx := context.Background()
	u := testenv.PostgresURL(t)
	admin := connect(t, testenv.AdminURL(t, u))
	app := connect(t, u)
	var appName string
	if err := app.QueryRow(ctx, `SELECT current_user`).Scan(&appName); err != nil {
		t.Fatal(err)
	}
	// Setup twice changes nothing (it runs at every embedded start).
	var db string
	if err := admin.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	if err := migrate.Setup(ctx, admin, db, appName); err != nil {
		t.Fatal(err)
	}
	nobody := "nobody_" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
	if _, err := admin.Exec(ctx, `CREATE ROLE `+nobody+` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), `DROP ROLE `+nobody) }) //nolint:errcheck // the cluster is the binary's
	var connect, temp, create bool
	if err := admin.QueryRow(ctx, `SELECT has_database_privilege($1, current_database(), 'CONNECT'),
		has_database_privilege($1, current_database(), 'TEMP'), has_schema_privilege($1, 'public', 'CREATE')`, nobody).Scan(&connect, &temp, &create); err != nil {
		t.Fatal(err)
	}
	if connect || temp || create {
		t.Errorf("a role given nothing: connect %v, temp %v, create in public %v", connect, temp, create)
	}
	rows, err := admin.Query(ctx, `SELECT p.oid::regprocedure::text, has_function_privilege($1, p.oid, 'EXECUTE'), has_function_privilege($2, p.oid, 'EXECUTE')
		FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname = ANY($3)`, nobody, appName, migrate.Restricted)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var f string
		var theirs, apps bool
		if err := rows.Scan(&f, &theirs, &apps); err != nil {
			t.Fatal(err)
		}
		n++
		if theirs {
			t.Errorf("a role given nothing may execute %s", f)
		}
		if advisory := strings.Contains(f, "advisory"); apps != advisory {
			t.Errorf("the application role may execute %s: %v", f, apps)
		}
	}
	if rows.Err() != nil || n < len(migrate.Restricted) {
		t.Fatalf("%d restricted functions found (%v), want at least %d", n, rows.Err(), len(migrate.Restricted))
	}
}

// The application role cannot make roles, except world roles of its own
// database through the admin function, which makes them powerless.
func TestWorldRoleFunction(t *testing.T) {
	ctx := context.Background()
	u := testenv.PostgresURL(t)
	app := connect(t, u)
	admin := connect(t, testenv.AdminURL(t, u))
	var oid uint32
	var appName string
	if err := app.QueryRow(ctx, `SELECT oid, current_user FROM pg_database WHERE datname = current_database()`).Scan(&oid, &appName); err != nil {
		t.Fatal(err)
	}
	pw, _ := scram.Password()
	v, _ := scram.Verifier(pw)
	call := func(name, verifier string, login bool) error {
		_, err := app.Exec(ctx, `SELECT `+migrate.AdminFunction+`($1, $2, $3)`, name, verifier, login)
		return err
	}
	if _, err := app.Exec(ctx, `CREATE ROLE sneaky LOGIN`); code(err) != "42501" {
		t.Errorf("the application role made a role: %v", err)
	}
	for name, want := range map[string]string{
		"postgres": "42501",
		fmt.Sprintf("w_0123456789abcdef_r%d", oid+1): "42501", // another database's
		"w_0123456789abcdef_x" + fmt.Sprint(oid):     "42501",
		fmt.Sprintf("w_0123456789ABCDEF_r%d", oid):   "42501",
	} {
		if err := call(name, v, true); code(err) != want {
			t.Errorf("world_role(%q): %v, want %s", name, err, want)
		}
	}
	user := fmt.Sprintf("w_0123456789abcdef_r%d", oid)
	owner := fmt.Sprintf("w_0123456789abcdef_o%d", oid)
	if err := call(user, "plain-password", true); code(err) != "22023" {
		t.Errorf("a plain password: %v", err)
	}
	if err := call(user, v, true); err != nil {
		t.Fatal(err)
	}
	if err := call(owner, v, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), `DROP ROLE IF EXISTS `+user)  //nolint:errcheck // the cluster is the binary's
		admin.Exec(context.Background(), `DROP ROLE IF EXISTS `+owner) //nolint:errcheck // the cluster is the binary's
	})
	var attrs string
	var member, userMember bool
	if err := admin.QueryRow(ctx, `SELECT concat_ws(',', CASE WHEN rolsuper THEN 'super' END, CASE WHEN rolcreaterole THEN 'createrole' END,
		CASE WHEN rolcreatedb THEN 'createdb' END, CASE WHEN rolreplication THEN 'replication' END, CASE WHEN rolbypassrls THEN 'bypassrls' END,
		CASE WHEN rolinherit THEN 'inherit' END, CASE WHEN NOT rolcanlogin THEN 'nologin' END),
		pg_has_role($2, $3, 'MEMBER'), pg_has_role($2, $1, 'MEMBER')
		FROM pg_roles WHERE rolname = $1`, user, appName, owner).Scan(&attrs, &member, &userMember); err != nil {
		t.Fatal(err)
	}
	if attrs != "" || !member || userMember {
		t.Errorf("world role attributes %q; application role member of the owner %v, of the copy role %v", attrs, member, userMember)
	}
	wu, _ := url.Parse(u)
	wu.User = url.UserPassword(user, pw)
	if _, err := admin.Exec(ctx, `GRANT CONNECT ON DATABASE `+pgx.Identifier{strings.TrimPrefix(wu.Path, "/")}.Sanitize()+` TO `+user); err != nil {
		t.Fatal(err)
	}
	connect(t, wu.String()) // the password it was given lets it in
	// Taken over: the login is turned off, settings left by whoever held the
	// name are reset.
	if _, err := admin.Exec(ctx, `ALTER ROLE `+owner+` SET work_mem = '1GB'`); err != nil {
		t.Fatal(err)
	}
	if err := call(owner, v, false); err != nil {
		t.Fatal(err)
	}
	var login bool
	var config []string
	if err := admin.QueryRow(ctx, `SELECT rolcanlogin, coalesce(rolconfig, '{}') FROM pg_roles WHERE rolname = $1`, owner).Scan(&login, &config); err != nil {
		t.Fatal(err)
	}
	if login || len(config) > 0 {
		t.Errorf("owner after NOLOGIN: login %v, settings %v", login, config)
	}
	// A role of that name with a privilege is not taken over.
	if _, err := admin.Exec(ctx, `ALTER ROLE `+user+` CREATEDB`); err != nil {
		t.Fatal(err)
	}
	if err := call(user, v, true); code(err) != "42501" {
		t.Errorf("a privileged role was taken over: %v", err)
	}
	if _, err := admin.Exec(ctx, `ALTER ROLE `+user+` NOCREATEDB; GRANT pg_read_server_files TO `+user); err != nil {
		t.Fatal(err)
	}
	if err := call(user, v, true); code(err) != "42501" {
		t.Errorf("a role with a membership was taken over: %v", err)
	}
}

func TestServerSQLQuotes(t *testing.T) {
	got := migrate.ServerSQL("suite gen", "suitegen", "it's")
	for _, want := range []string{`CREATE ROLE suitegen_admin NOLOGIN CREATEROLE;`, `PASSWORD 'it''s'`, `CREATE DATABASE "suite gen" OWNER suitegen;`} {
		if !strings.Contains(got, want) {
			t.Errorf("ServerSQL lacks %q:\n%s", want, got)
		}
	}
}

// docs/SECURITY.md gives a DBA the exact SQL Setup runs.
func TestSecurityDocShowsTheSetup(t *testing.T) {
	b, err := os.ReadFile("../../docs/SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for what, want := range map[string]string{
		"ServerSQL": migrate.ServerSQL("suitegen", "suitegen", "choose-a-password"),
		"SetupSQL":  migrate.SetupSQL("suitegen", "suitegen"),
	} {
		if !strings.Contains(doc, "```sql\n"+want+"```") {
			t.Errorf("docs/SECURITY.md does not show %s as a sql block:\n%s", what, want)
		}
	}
}
