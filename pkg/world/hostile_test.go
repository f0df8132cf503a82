package world

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
)

// The hostile corpus: SQL a contract author or a model might send to read
// or write the host, to become another role, to reach other worlds, other
// runs or the ledger, or to make its copy outlive its rollback. With the
// statement guard off, each must be refused by the server (the world's
// roles may not) or be harmless; what is asserted is what could have
// leaked or changed, never the wording of a refusal.

// host is what the corpus aims at on the host: a file the server's user
// could read if a session were allowed to, and a directory it could write.
type host struct {
	canaryDir, canary, secret string
	outDir                    string
}

// hostTargets makes the canary and the write target, and shows with a
// superuser's session that the server can reach both: a refusal below is
// the role's doing, not the file system's.
func hostTargets(t *testing.T, admin *pgx.Conn) host {
	t.Helper()
	ctx := context.Background()
	dir := func() string {
		d, err := os.MkdirTemp("", "hostile-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := host{canaryDir: dir(), outDir: dir(), secret: "canary-" + hex.EncodeToString(b)}
	h.canary = filepath.Join(h.canaryDir, "canary.txt")
	if err := os.WriteFile(h.canary, []byte(h.secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for d, mode := range map[string]os.FileMode{h.canaryDir: 0o755, h.outDir: 0o777} {
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	var got string
	if err := admin.QueryRow(ctx, `SELECT pg_read_file($1)`, h.canary).Scan(&got); err != nil || !strings.Contains(got, h.secret) {
		t.Fatalf("control: a superuser cannot read the canary (%q, %v): the corpus would prove nothing", got, err)
	}
	control := filepath.Join(h.outDir, "control")
	var lo uint32
	err := admin.QueryRow(ctx, `SELECT lo_from_bytea(0, 'x')`).Scan(&lo)
	if err == nil {
		_, err = admin.Exec(ctx, `SELECT lo_export($1, $2)`, lo, control)
		_, _ = admin.Exec(ctx, `SELECT lo_unlink($1)`, lo)
	}
	if err != nil {
		t.Fatalf("control: a superuser cannot write to %s: %v", h.outDir, err)
	}
	if _, err := os.Stat(control); err != nil {
		t.Fatalf("control: lo_export wrote nothing: %v", err)
	}
	_ = os.Remove(control)
	return h
}

// hostileSQL is the corpus for a world whose other, untouched world is
// victim. Each entry is one statement; sequences are below.
func hostileSQL(h host, victim string) []string {
	c, o := h.canary, h.outDir
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	return []string{
		// The host's files.
		"SELECT pg_read_file(" + q(c) + ")",
		"SELECT pg_read_binary_file(" + q(c) + ")",
		`SELECT "pg_read_file"(` + q(c) + ")",
		`SELECT U&"pg\005fread\005ffile"(` + q(c) + ")",
		`SELECT U&"pg!005fread!005ffile" UESCAPE '!' (` + q(c) + ")",
		"SELECT pg_read_file/* split */(" + q(c) + ")",
		"SELECT pg_ls_dir(" + q(h.canaryDir) + ")",
		"SELECT pg_stat_file(" + q(c) + ")",
		"SELECT lo_import(" + q(c) + ")",
		"SELECT lo_get(lo_import(" + q(c) + "))",
		"SELECT lo_export(lo_from_bytea(0, 'x'), " + q(filepath.Join(o, "lo_export")) + ")",
		"SELECT lo_from_bytea(0, 'x')",
		"COPY (SELECT 1) TO PROGRAM " + q("touch "+filepath.Join(o, "copy_program")),
		"COPY orders FROM " + q(c),
		"COPY orders TO " + q(filepath.Join(o, "copy_to")),
		"COPY (SELECT 1) TO STDOUT",
		"COPY orders FROM STDIN",
		"SELECT current_setting('data_directory')",
		"SHOW hba_file",
		"SELECT * FROM pg_authid",
		// The server and other sessions.
		"SELECT pg_reload_conf()",
		"ALTER SYSTEM SET work_mem = '1GB'",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
		"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
		"SELECT pg_advisory_lock(1)",
		"SELECT pg_try_advisory_lock(" + strconv.FormatInt(0x7375697465676e, 10) + ")",
		"CHECKPOINT",
		"CREATE EXTENSION dblink",
		"SELECT dblink_exec('dbname=postgres', 'SELECT 1')",
		// Other roles.
		"SELECT set_config('role', session_user, true)",
		"SELECT set_config('role', 'postgres', false)",
		`SELECT U&"set\005fconfig"('role', session_user, true)`,
		`SELECT date'x\'; SELECT set_config('role', session_user, true) --'`,
		"SET ROLE postgres",
		"SET SESSION AUTHORIZATION postgres",
		"RESET ROLE",
		"RESET SESSION AUTHORIZATION",
		"RESET ALL",
		"CREATE ROLE intruder SUPERUSER",
		"GRANT pg_read_server_files TO CURRENT_USER",
		"ALTER ROLE CURRENT_USER PASSWORD 'known'",
		"ALTER ROLE CURRENT_USER SET search_path = pg_catalog",
		"ALTER ROLE CURRENT_USER CREATEDB",
		// Code, objects, and expressions that call functions.
		"DO $$ BEGIN PERFORM pg_read_file(" + q(c) + "); END $$",
		"DO $x$ BEGIN EXECUTE 'ALTER ROLE ' || quote_ident(current_user) || ' SET work_mem = ''1GB'''; END $x$",
		"CREATE FUNCTION evil() RETURNS text LANGUAGE sql SECURITY DEFINER AS $$ SELECT pg_read_file(" + q(c) + ") $$",
		"CREATE TABLE public.evil (x text DEFAULT pg_read_file(" + q(c) + "))",
		"CREATE TEMP TABLE evil (x int)",
		"ALTER TABLE orders ADD COLUMN leak text DEFAULT pg_read_file(" + q(c) + ")",
		"ALTER TABLE orders ADD CONSTRAINT leak CHECK (pg_read_file(" + q(c) + ") IS NOT NULL)",
		"ALTER TABLE orders ADD COLUMN leak text GENERATED ALWAYS AS (md5(id)) STORED",
		"DROP TABLE orders",
		"TRUNCATE orders",
		"LOCK TABLE orders IN ACCESS EXCLUSIVE MODE",
		"VACUUM orders",
		"SELECT setval('orders_n_seq', 1)",
		// The transaction itself.
		"COMMIT",
		"END",
		"ROLLBACK",
		"ROLLBACK AND CHAIN",
		"COMMIT AND CHAIN",
		"PREPARE TRANSACTION 'escape'",
		"SET CONSTRAINTS ALL IMMEDIATE",
		"SET statement_timeout = 0",
		"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
		"PREPARE p AS SELECT 1",
		"DEALLOCATE ALL",
		"LISTEN hostile",
		"NOTIFY hostile, 'x'",
		"DELETE FROM suitegen_copy.uncommittable",
		"INSERT INTO suitegen_copy.uncommittable DEFAULT VALUES",
		"UPDATE orders SET status = 'hacked'",
		// Other worlds, other runs, the ledger.
		"SELECT * FROM public.suitegen_worlds",
		"SELECT * FROM runs",
		"UPDATE runs SET state = 'failed'",
		"SELECT * FROM suitegen_migrations",
		"SELECT * FROM " + victim + ".orders",
		"UPDATE " + victim + ".orders SET status = 'hacked'",
		"SELECT suitegen_admin.world_role('w_0123456789abcdef_r1', 'x', true)",
		// Lexical tricks, stacking, size, time.
		"SEL/**/ECT 1",
		"SELECT 1; SELECT pg_read_file(" + q(c) + ")",
		"SELECT $q$;$q$; UPDATE orders SET status = 'hacked'",
		"SELECT 1 -- ; UPDATE orders SET status = 'hacked'",
		"SELECT 1 + " + strings.Repeat("1 + ", 300_000) + "1",
		"SELECT " + strings.Repeat("(", 10_000) + "1" + strings.Repeat(")", 10_000),
		"SELECT repeat('x', 8000000)",
		"SELECT pg_sleep(30)",
	}
}

// hostileSequences are statements sent together, as one setup or one
// handler: the ways out of a copy's transaction, and what would follow
// (names qualified, since a new transaction has lost the copy's
// search_path).
func hostileSequences(h host, schema string) [][]string {
	orders := schema + ".orders"
	return [][]string{
		{"ROLLBACK AND CHAIN", "ALTER ROLE CURRENT_USER PASSWORD 'known'", "COMMIT"},
		{"ROLLBACK AND CHAIN", "UPDATE " + orders + " SET status = 'hacked'", "COMMIT"},
		{"COMMIT", "ALTER ROLE CURRENT_USER SET work_mem = '1GB'", "COMMIT"},
		{"UPDATE orders SET status = 'hacked'", "COMMIT"},
		{"ROLLBACK", "UPDATE " + orders + " SET status = 'hacked'"},
		{"ROLLBACK", "ALTER ROLE CURRENT_USER SET work_mem = '1GB'"},
		{"ROLLBACK", "BEGIN", "UPDATE " + orders + " SET status = 'hacked'", "COMMIT"},
		{"SET CONSTRAINTS ALL IMMEDIATE", "UPDATE orders SET status = 'hacked'", "COMMIT"},
		{"SELECT set_config('role', session_user, true)", "SELECT pg_read_file('" + h.canary + "')"},
		{"SET statement_timeout = 0", "SELECT pg_sleep(30)"},
		{"DEALLOCATE ALL", "SELECT 1"},
		{"PREPARE sg_0 AS SELECT 1", "SELECT count(*) FROM orders"},
	}
}

// outcome is what a model could see of one attempt: rows or a refusal.
type outcome struct {
	where, sql string
	said       string
	superuser  []bool
}

var tools2 = append(append([]contract.Tool(nil), tools...), contract.Tool{Name: "run_sql",
	Params: map[string]any{"type": "object", "properties": map[string]any{"sqls": map[string]any{"type": "array", "items": str()}}, "required": []any{"sqls"}}})

// timedOut reports an error of a copy's time limits: its statement
// timeout or its deadline.
func timedOut(err error) bool {
	return errors.Is(err, script.ErrLimit) || errors.Is(err, context.DeadlineExceeded) || isCode(err, "57014")
}

// hostileStage is what every hostile test stands on: the application pool,
// a superuser connection to look with, the host files an attack would reach,
// and another run's ledger row that must survive.
func hostileStage(t *testing.T) (*pgxpool.Pool, *pgx.Conn, host) {
	t.Helper()
	ctx := context.Background()
	pool, admin, _ := poolAndAdmin(t)
	h := hostTargets(t, admin)
	if _, err := pool.Exec(ctx, `INSERT INTO runs (id, agent, contract_sha256, world_sha256, asked, seed, model) VALUES ('other-run', 'x', 'c', 'w', 5, 1, 'builtin')`); err != nil {
		t.Fatal(err)
	}
	return pool, admin, h
}

func TestHostileSQLIsRefusedOrHarmless(t *testing.T) {
	ctx := context.Background()
	pool, admin, h := hostileStage(t)

	victim := open(t, pool, newContract(t, seeds), script.Options{})
	c := newContract(t, seeds)
	c.Tools = tools2
	c.Sources["handlers/run_sql.star"] = `
def handle(args, db):
    out = []
    for s in args["sqls"]:
        out.append(db.query(s))
    return out
`
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(ctx, pool, c, progs, Options{SkipGuard: true, StatementTimeout: 300 * time.Millisecond,
		Deadline: 1500 * time.Millisecond, MaxResultBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)

	before := dbState(t, admin, false, victim.Schema(), w.Schema())
	var seen []outcome
	record := func(where, sql string, said string, super ...bool) {
		seen = append(seen, outcome{where: where, sql: sql, said: said, superuser: super})
	}
	// ask reports whether the copy's session, or the role it acts as, is a
	// superuser's: asked before the hostile statement (the copy must
	// answer), and after it (a copy the statement broke cannot answer, nor
	// do anything else); with the error when it did not answer.
	ask := func(cp *Copy, mustAnswer bool) (bool, error) {
		rows, err := cp.Query(ctx, `SELECT bool_or(rolsuper) FROM pg_roles WHERE rolname IN (session_user, current_user)`)
		if err != nil || len(rows) != 1 {
			return mustAnswer, err
		}
		return rows[0].Values[0] != false, nil
	}
	super := func(cp *Copy, mustAnswer bool) bool { s, _ := ask(cp, mustAnswer); return s }
	// untilAsked runs attempt until it reports that its copies answered
	// before the hostile statement: a copy that could not ask within its
	// limits (a busy machine) has told nothing. The tenth attempt is judged
	// whatever it says (last).
	untilAsked := func(attempt func(last bool) (asked bool)) {
		for tries := 1; ; tries++ {
			if attempt(tries >= 10) {
				return
			}
		}
	}
	said := func(v any, err error) string { return fmt.Sprintf("%v %v", v, err) }
	copyOf := func(fn func(cp *Copy) (string, []bool)) func(where, label string) {
		return func(where, label string) {
			untilAsked(func(last bool) bool {
				asked := true
				_ = w.Copy(ctx, func(cp *Copy) error {
					pre, err := ask(cp, true)
					if asked = last || !timedOut(err); !asked {
						return nil
					}
					text, more := fn(cp)
					record(where, label, text, append([]bool{pre, super(cp, false)}, more...)...)
					return nil
				})
				return asked
			})
		}
	}

	for _, sql := range hostileSQL(h, victim.Schema()) {
		label := sql
		if len(label) > 80 {
			label = label[:80] + "…"
		}
		copyOf(func(cp *Copy) (string, []bool) {
			return said(nil, cp.ExecBatch(ctx, []scenario.Statement{{SQL: sql}})), nil
		})("setup", label)
		copyOf(func(cp *Copy) (string, []bool) {
			return said(cp.Query(ctx, sql)), nil
		})("ready", label)
		untilAsked(func(last bool) bool {
			asked := true
			_ = w.Pair(ctx, nil, func(cp *Copy, b *Before) error { // a check, on the copy and on world.before
				bc, err := b.Copy()
				if err != nil {
					t.Fatal(err)
				}
				pre, err := ask(cp, true)
				bpre, berr := ask(bc, true)
				if asked = last || !timedOut(err) && !timedOut(berr); !asked {
					return nil
				}
				rows, err := cp.View(nil, b.View).Query(ctx, sql)
				brows, berr := b.View().Query(ctx, sql)
				record("check", label, said(rows, err)+said(brows, berr), pre, bpre, super(cp, false), super(bc, false))
				return nil
			})
			return asked
		})
		copyOf(func(cp *Copy) (string, []bool) { // a sub-goal a model wrote
			p, err := progs.WithSubGoals(c.Sources, []contract.SubGoal{{Name: "hostile",
				Source: "def check(world, calls, params):\n    return str(world.query(" + strconv.Quote(sql) + "))\n"}})
			if err != nil {
				t.Fatal(err)
			}
			held, why, err := p.Check(ctx, "hostile", cp.View(nil, nil), nil, nil)
			return said(fmt.Sprint(held, why), err), nil
		})("sub-goal", label)
		copyOf(func(cp *Copy) (string, []bool) {
			r := cp.Call(ctx, "run_sql", map[string]any{"sqls": []any{sql}})
			return string(r.Result) + r.Error, nil
		})("handler", label)
	}
	for _, seq := range hostileSequences(h, w.Schema()) {
		label := strings.Join(seq, "; ")
		copyOf(func(cp *Copy) (string, []bool) {
			stmts := make([]scenario.Statement, len(seq))
			for i, s := range seq {
				stmts[i] = scenario.Statement{SQL: s}
			}
			return said(nil, cp.ExecBatch(ctx, stmts)), nil
		})("setup", label)
		copyOf(func(cp *Copy) (string, []bool) {
			args := make([]any, len(seq))
			for i, s := range seq {
				args[i] = s
			}
			r := cp.Call(ctx, "run_sql", map[string]any{"sqls": args})
			return string(r.Result) + r.Error, nil
		})("handler", label)
	}

	// Nothing of the host came back, nothing was written to it.
	for _, o := range seen {
		if strings.Contains(o.said, h.secret) {
			t.Errorf("%s %q: the canary's content came back: %s", o.where, o.sql, o.said)
		}
		for i, s := range o.superuser {
			if s {
				t.Errorf("%s %q: session %d is a superuser's", o.where, o.sql, i)
			}
		}
	}
	for _, f := range []string{"lo_export", "copy_program", "copy_to"} {
		if _, err := os.Stat(filepath.Join(h.outDir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written on the host (%v)", f, err)
		}
	}
	// Nothing changed in the database: the ledger, this world, the other
	// world, roles, large objects, prepared transactions.
	after := dbState(t, admin, false, victim.Schema(), w.Schema())
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed:\n before %s\n after  %s", k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s appeared: %s", k, after[k])
		}
	}
	// And the world still works, for anyone.
	err = w.Copy(ctx, func(cp *Copy) error {
		r := cp.Call(ctx, "get_order", map[string]any{"order_id": "#W1"})
		if !r.OK || !strings.Contains(string(r.Result), `"status":"pending"`) {
			return fmt.Errorf("after the corpus: %+v", r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d attempts, none harmful", len(seen))
}

// dbState is what the corpus must not change, as text by name: the tables
// of public (the ledger) and of the given worlds, and the server's roles,
// settings and objects. With newWorlds, the schemas and roles of worlds
// made meanwhile are left out (the schema corpus makes some).
func dbState(t *testing.T, admin *pgx.Conn, newWorlds bool, schemas ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	notWorld := func(col string) string {
		if !newWorlds {
			return "true"
		}
		return col + " !~ '^w_[0-9a-f]{16}(_b|_[or][0-9]+)?$'"
	}
	rows, err := admin.Query(ctx, `SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND (n.nspname = 'public' OR n.nspname = ANY($1) OR n.nspname = ANY(SELECT s || '_b' FROM unnest($1::text[]) s))`, schemas)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tables)
	for _, tbl := range tables {
		where := ""
		if newWorlds && tbl == "public.suitegen_worlds" {
			where = " WHERE x.schema = ANY($1)"
		}
		args := []any{}
		if where != "" {
			args = append(args, schemas)
		}
		var doc string
		if err := admin.QueryRow(ctx, `SELECT coalesce(json_agg(x ORDER BY x::text), '[]')::text FROM `+tbl+` x`+where, args...).Scan(&doc); err != nil {
			t.Fatal(err)
		}
		out["table "+tbl] = doc
	}
	for name, sql := range map[string]string{
		"roles":                 `SELECT json_agg(a ORDER BY rolname)::text FROM (SELECT rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication, rolbypassrls, rolpassword FROM pg_authid WHERE ` + notWorld("rolname") + `) a`,
		"role settings":         `SELECT coalesce(json_agg(s ORDER BY s::text), '[]')::text FROM pg_db_role_setting s WHERE ` + notWorld("setrole::regrole::text"),
		"memberships":           `SELECT coalesce(json_agg(m ORDER BY m::text), '[]')::text FROM (SELECT roleid::regrole::text r, member::regrole::text m FROM pg_auth_members) m WHERE ` + notWorld("r") + ` AND ` + notWorld("m"),
		"large objects":         `SELECT count(*)::text FROM pg_largeobject_metadata`,
		"prepared transactions": `SELECT count(*)::text FROM pg_prepared_xacts`,
		"schemas":               `SELECT json_agg(nspname ORDER BY nspname)::text FROM pg_namespace WHERE ` + notWorld("nspname"),
		"relations":             `SELECT json_agg(c.oid::regclass::text ORDER BY c.oid::regclass::text)::text FROM pg_class c WHERE c.relnamespace <> 'pg_toast'::regnamespace AND c.relpersistence <> 't' AND ` + notWorld("c.relnamespace::regnamespace::text"),
		"functions":             `SELECT json_agg(p.oid::regprocedure::text ORDER BY 1)::text FROM pg_proc p WHERE p.pronamespace <> 'pg_catalog'::regnamespace AND p.pronamespace <> 'information_schema'::regnamespace AND ` + notWorld("p.pronamespace::regnamespace::text"),
		"system settings":       `SELECT coalesce(json_agg(s ORDER BY s::text), '[]')::text FROM pg_file_settings s WHERE sourcefile LIKE '%auto.conf'`,
	} {
		var v string
		if err := admin.QueryRow(ctx, sql).Scan(&v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = v
	}
	return out
}

// hostileSchemas are schema.sql files: run by the world's owner role,
// unguarded, committed when the build succeeds.
func hostileSchemas(h host) []string {
	q := "'" + h.canary + "'"
	return []string{
		"CREATE TABLE t (id int, x text DEFAULT pg_read_file(" + q + ")); INSERT INTO t (id) VALUES (1);",
		"CREATE TABLE t (x text CHECK (pg_read_file(" + q + ") <> '')); INSERT INTO t VALUES ('a');",
		"CREATE FUNCTION leak() RETURNS text IMMUTABLE LANGUAGE sql AS $$ SELECT pg_read_file(" + q + ") $$;\n" +
			"CREATE TABLE t (id int, x text GENERATED ALWAYS AS (leak()) STORED); INSERT INTO t (id) VALUES (1);",
		"CREATE TABLE t (x text); CREATE FUNCTION f() RETURNS trigger SECURITY DEFINER LANGUAGE plpgsql AS $$ BEGIN NEW.x := pg_read_file(" + q + "); RETURN NEW; END $$;\n" +
			"CREATE TRIGGER g BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION f(); INSERT INTO t VALUES ('a');",
		"CREATE TABLE t (x text); COPY t FROM " + q + ";",
		"CREATE TABLE t (x text); COPY t FROM PROGRAM 'cat " + h.canary + "';",
		"COPY (SELECT 1) TO PROGRAM 'touch " + filepath.Join(h.outDir, "schema_program") + "';",
		"SELECT lo_export(lo_from_bytea(0, 'x'), '" + filepath.Join(h.outDir, "schema_lo") + "');",
		"SELECT lo_import(" + q + ");",
		"DO $$ BEGIN RAISE EXCEPTION '%', pg_read_file(" + q + "); END $$;",
		"SELECT pg_ls_dir('" + h.canaryDir + "');",
		"ALTER SYSTEM SET work_mem = '1GB';",
		"SELECT pg_reload_conf();",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid();",
		"SELECT pg_advisory_lock(" + strconv.FormatInt(0x7375697465676e, 10) + ");",
		"SET ROLE postgres;",
		"SET SESSION AUTHORIZATION postgres;",
		"SELECT set_config('role', 'postgres', false);",
		"CREATE SCHEMA evil;",
		"CREATE TABLE public.evil (x int);",
		"CREATE EXTENSION dblink;",
		"CREATE ROLE intruder SUPERUSER;",
		"GRANT pg_read_server_files TO CURRENT_USER;",
		"UPDATE public.runs SET state = 'failed';",
		"SELECT * FROM public.suitegen_worlds;",
		"COMMIT; ALTER SYSTEM SET work_mem = '1GB';",
		// Harmless, and kept: the owner cannot log in afterwards, whatever
		// it did to its own role.
		"ALTER ROLE CURRENT_USER PASSWORD 'known'; CREATE TABLE t (x int);",
		"ALTER ROLE CURRENT_USER SET statement_timeout = 0; CREATE TABLE t (x int);",
		"CREATE FUNCTION whoami() RETURNS text SECURITY DEFINER LANGUAGE sql AS $$ SELECT current_user::text $$; CREATE TABLE t (x int);",
		"COMMIT; CREATE TABLE t (x int); BEGIN;",
		"GRANT ALL ON SCHEMA public TO PUBLIC; CREATE TABLE t (x int); GRANT ALL ON t TO PUBLIC;",
		// Time.
		"SELECT pg_sleep(60);",
		"SET statement_timeout = 0; SELECT pg_sleep(60);",
	}
}

func TestHostileSchemaIsRefusedOrHarmless(t *testing.T) {
	ctx := context.Background()
	pool, admin, h := hostileStage(t)
	victim := open(t, pool, newContract(t, seeds), script.Options{})
	before := dbState(t, admin, true, victim.Schema())
	// Independent worlds: built four at a time.
	schemas := hostileSchemas(h)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	// And a default that only the seed evaluates.
	schemas = append(schemas, "CREATE TABLE t (id int PRIMARY KEY, x text DEFAULT pg_read_file('"+h.canary+"'));")
	errs := make([]error, len(schemas))
	hashes := make([]string, len(schemas))
	for i, sql := range schemas {
		c := &contract.Contract{Agent: "hostile", SchemaSQL: sql, Sources: map[string]string{}, SHA256: "hostile"}
		if i == len(schemas)-1 {
			c.Seeds = []contract.SeedTable{{Table: "t", File: "world/seed/t.jsonl", Lines: []int{1}, Rows: []map[string]any{{"id": int64(1)}}}}
		}
		sum := sha256.Sum256([]byte(fmt.Sprint(t.Name(), i, time.Now())))
		c.WorldSHA256 = hex.EncodeToString(sum[:])
		hashes[i] = c.WorldSHA256[:16]
		progs, err := script.Compile(c, script.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			w, err := Open(ctx, pool, c, progs, Options{BuildTimeout: 2 * time.Second})
			if err == nil {
				w.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if strings.Contains(fmt.Sprint(err), h.secret) {
			t.Errorf("schema %d: the canary's content came back: %v", i, err)
		}
		t.Logf("schema %d (%s): %v", i, hashes[i], err)
	}
	var ce *ContractError
	if last := errs[len(errs)-1]; !errors.As(last, &ce) || ce.Problems[0].Code != CodeSeedViolatesSchema || ce.Problems[0].Line != 1 {
		t.Errorf("a seed row whose default reads a file: %v, want %s at line 1", last, CodeSeedViolatesSchema)
	}
	for _, f := range []string{"schema_program", "schema_lo"} {
		if _, err := os.Stat(filepath.Join(h.outDir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written on the host (%v)", f, err)
		}
	}
	after := dbState(t, admin, true, victim.Schema())
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed:\n before %s\n after  %s", k, v, after[k])
		}
	}
	// The worlds' own roles: powerless, and owners that cannot log in.
	rows, err := admin.Query(ctx, `SELECT rolname, rolcanlogin, rolsuper OR rolcreaterole OR rolcreatedb OR rolreplication OR rolbypassrls,
		EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid)
		FROM pg_roles r WHERE rolname ~ '^w_[0-9a-f]{16}_[or][0-9]+$'`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var name string
		var login, elevated, member bool
		if err := rows.Scan(&name, &login, &elevated, &member); err != nil {
			t.Fatal(err)
		}
		n++
		if elevated || member || (login && strings.Contains(name, "_o")) {
			t.Errorf("%s: login %v, elevated %v, member of a role %v", name, login, elevated, member)
		}
	}
	if rows.Err() != nil || n == 0 {
		t.Fatalf("%d world roles (%v)", n, rows.Err())
	}
}
