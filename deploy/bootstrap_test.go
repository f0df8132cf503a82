package deploy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql, as CloudNativePG's instance manager runs bootstrap SQL

	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/scram"
	"github.com/suitegen/suitegen/pkg/stack"
)

// TestBootstrapSQL runs the database setup the two ways the overlays run it, each on a server
// as new as initdb leaves it:
//   - as CloudNativePG bootstraps the production ledger (pkg/management/postgres/initdb.go,
//     ConfigureNewInstance, of v1.30.0): the owner role made with LOGIN alone, the database
//     made owned by it, then the postInitApplicationSQLRefs file run as the superuser on that
//     database in one exec through database/sql, the search path set to "$user", public;
//   - as the postgres image bootstraps the small overlay's: the database made by the
//     superuser, then psql runs each file of /docker-entrypoint-initdb.d in name order
//     (roles.sql with SUITEGEN_DB_PASSWORD in its environment, then setup.sql).
//
// Either way the application role can then log in, is no superuser and cannot make roles,
// migrates the ledger, and makes a world role through the admin function.
func TestBootstrapSQL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Run as root, the server runs as the postgres user, which must be able to enter it.
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	pg, err := stack.StartPostgres(ctx, stack.PostgresConfig{
		DataDir: filepath.Join(dir, "pg"), Fast: true,
		AppRole: "bootstrap_probe", Database: "bootstrap_probe",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	admin, err := pgx.Connect(ctx, pg.AdminURL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	run := func(t *testing.T, stmts ...string) {
		t.Helper()
		for _, s := range stmts {
			if _, err := admin.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	// The server as initdb leaves it: without what the embedded stack makes at start (its role,
	// its database, and the admin role the setup makes).
	run(t, `DROP DATABASE bootstrap_probe WITH (FORCE)`, `DROP ROLE bootstrap_probe`, `DROP ROLE `+migrate.AdminRole)
	reset := func(t *testing.T) {
		run(t, `DROP DATABASE IF EXISTS suitegen WITH (FORCE)`)
		rows, err := admin.Query(ctx, `SELECT rolname FROM pg_roles WHERE rolname ~ '^w_'`)
		if err != nil {
			t.Fatal(err)
		}
		worlds, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range worlds {
			run(t, `DROP ROLE `+pgx.Identifier{w}.Sanitize())
		}
		run(t, `DROP ROLE IF EXISTS suitegen`, `DROP ROLE IF EXISTS `+migrate.AdminRole)
	}
	setup := readFile(t, setupSQLFile)
	password, err := scram.Password()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("cloudnative-pg", func(t *testing.T) {
		defer reset(t)
		run(t, fmt.Sprintf("CREATE ROLE %v LOGIN", pgx.Identifier{"suitegen"}.Sanitize()),
			fmt.Sprintf("CREATE DATABASE %v OWNER %v", pgx.Identifier{"suitegen"}.Sanitize(), pgx.Identifier{"suitegen"}.Sanitize()))
		db, err := sql.Open("pgx", pg.AdminURL("suitegen"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, `SET search_path TO "$user", public`); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, setup); err != nil {
			t.Fatalf("%s, run as CloudNativePG runs it: %v", setupSQLFile, err)
		}
		conn.Close()
		// The operator then gives the owner the password of <cluster>-app.
		v, err := scram.Verifier(password)
		if err != nil {
			t.Fatal(err)
		}
		run(t, `ALTER ROLE suitegen PASSWORD '`+v+`'`)
		checkApplicationRole(t, pg.Port(), password)
	})

	t.Run("postgres image", func(t *testing.T) {
		psql := findPsql(t)
		defer reset(t)
		run(t, `CREATE DATABASE suitegen`) // POSTGRES_DB, owned by the superuser
		files := map[string]string{
			"00-roles.sql": readFile(t, "k8s/components/postgres-single/roles.sql"),
			"10-setup.sql": setup,
		}
		initdb := t.TempDir()
		var names []string
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(initdb, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			// docker-entrypoint.sh's docker_process_sql: psql -v ON_ERROR_STOP=1 --no-psqlrc.
			cmd := exec.CommandContext(ctx, psql, "-v", "ON_ERROR_STOP=1", "--no-psqlrc", "--no-password",
				"--dbname", pg.AdminURL("suitegen"), "-f", filepath.Join(initdb, name))
			cmd.Env = append(os.Environ(), "SUITEGEN_DB_PASSWORD="+password)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("psql -f %s: %v\n%s", name, err, out)
			}
		}
		checkApplicationRole(t, pg.Port(), password)
	})
}

// checkApplicationRole logs in as suitegen with password and checks what the deployment needs
// of it.
func checkApplicationRole(t *testing.T, port int, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u := url.URL{Scheme: "postgres", User: url.UserPassword("suitegen", password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/suitegen", RawQuery: "sslmode=disable"}
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var super, createRole, createDB, owner bool
	var oid uint32
	if err := pool.QueryRow(ctx, `SELECT r.rolsuper, r.rolcreaterole, r.rolcreatedb, pg_get_userbyid(d.datdba) = current_user, d.oid
		FROM pg_roles r, pg_database d WHERE r.rolname = current_user AND d.datname = current_database()`).Scan(&super, &createRole, &createDB, &owner, &oid); err != nil {
		t.Fatalf("log in as suitegen: %v", err)
	}
	if super || createRole || createDB || !owner {
		t.Errorf("suitegen: superuser %v, createrole %v, createdb %v, owns its database %v", super, createRole, createDB, owner)
	}
	if _, err := pool.Exec(ctx, `CREATE ROLE sneaky LOGIN`); !isCode(err, "42501") {
		t.Errorf("suitegen made a role: %v", err)
	}
	if err := migrate.Apply(ctx, pool); err != nil {
		t.Fatalf("suitegen migrates the ledger: %v", err)
	}
	pw, _ := scram.Password()
	v, err := scram.Verifier(pw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT `+migrate.AdminFunction+`($1, $2, true)`, fmt.Sprintf("w_0123456789abcdef_r%d", oid), v); err != nil {
		t.Errorf("suitegen makes a world role: %v", err)
	}
}

func isCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// findPsql finds the psql of the PostgreSQL the tests run.
func findPsql(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("psql"); err == nil {
		return p
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/psql")
	if len(found) == 0 {
		t.Skip("no psql on this machine: the postgres image's way is not run")
	}
	sort.Strings(found)
	return found[len(found)-1]
}
