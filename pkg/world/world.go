package world

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/scram"
	"github.com/suitegen/suitegen/pkg/script"
)

// CodeSeedViolatesSchema is the problem code of a seed row the schema rejects.
const CodeSeedViolatesSchema = "seed-violates-schema"

// Options tunes a world. Zero values take the defaults.
type Options struct {
	StatementTimeout time.Duration // per statement inside a copy, on the server; default 5s
	// Deadline bounds, from this process, each round trip to a copy; past
	// it the server is asked to cancel the statement, which holds even when
	// the session turned its statement_timeout off. Default StatementTimeout
	// + 2s.
	Deadline time.Duration
	// BuildTimeout bounds building the world (schema.sql and seed, both
	// schemas); default 2m.
	BuildTimeout time.Duration
	// MaxResultBytes caps what one statement of a copy may send back (rows
	// read by handlers and checks, and each table of a state); default 64 MiB.
	MaxResultBytes int64
	MaxRetries     int // retries of a copy after a serialization failure or deadlock; default 5
	// SkipGuard sends every statement as given, without the statement guard
	// (guard.go): for tests that show the world's role alone keeps any SQL
	// harmless.
	SkipGuard bool
}

func (o Options) withDefaults() (Options, error) {
	for name, d := range map[string]time.Duration{"StatementTimeout": o.StatementTimeout, "Deadline": o.Deadline, "BuildTimeout": o.BuildTimeout} {
		if d < 0 {
			return o, fmt.Errorf("world options: %s must not be negative, got %s", name, d)
		}
	}
	if o.MaxRetries < 0 {
		return o, fmt.Errorf("world options: MaxRetries must not be negative, got %d", o.MaxRetries)
	}
	if o.MaxResultBytes < 0 {
		return o, fmt.Errorf("world options: MaxResultBytes must not be negative, got %d", o.MaxResultBytes)
	}
	if o.StatementTimeout == 0 {
		o.StatementTimeout = 5 * time.Second
	}
	if o.Deadline == 0 {
		o.Deadline = o.StatementTimeout + 2*time.Second
	}
	if o.BuildTimeout == 0 {
		o.BuildTimeout = 2 * time.Minute
	}
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = 64 << 20
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 5
	}
	return o, nil
}

// ContractError is returned by Open when schema.sql fails or seed rows
// violate the schema (code seed-violates-schema, with file and line); nothing
// of the world stays written.
type ContractError struct {
	Problems contract.Problems
}

func (e *ContractError) Error() string { return "world seed: " + e.Problems.Error() }

// World is a frozen, seeded schema and what is needed to run copies of it.
// It is safe for concurrent use.
type World struct {
	pool  *pgxpool.Pool // the application's: the ledger, never a copy
	c     *contract.Contract
	progs *script.Programs
	opts  Options
	conns *conns // sessions of role, for copies

	schema, twin string
	role, owner  string // the login role copies run as; the NOLOGIN role that owns the schemas
	tag          string // SQL comment that keeps each world's prepared statements apart
	tools        map[string]*tool
	tables       []tableInfo
	stateSQL     string
	seqSQL       map[string]string // per table with a serial or identity column: seqPastSQL of it
	frozen       *frozenDocs       // shared by the views WithPrograms makes
	answers      *answers          // nil: the world keeps none (answers.go)
}

type tableInfo struct {
	name string
	key  []string // primary key columns; empty: every column
	// layered: a plain table (no partitions, no inheritance children) with
	// an immediate primary key, whose snapshot may be sent as the rows the
	// copy wrote over the frozen ones (see stateSQL).
	layered bool
	serial  []string // columns a sequence fills (serial, identity)
}

// Schema is the world's schema name (w_<16 hex>).
func (w *World) Schema() string { return w.schema }

// Role is the login role copies run as (w_<hash>_r<database oid>): it may
// read and write the world's tables and nothing else.
func (w *World) Role() string { return w.role }

// Close closes the world's idle sessions. Copies still open keep theirs
// until they end. A closed world must not be used.
func (w *World) Close() { w.conns.close() }

// Contract is the contract the world was opened for.
func (w *World) Contract() *contract.Contract { return w.c }

// Programs are the compiled handlers and checks.
func (w *World) Programs() *script.Programs { return w.progs }

// Tables lists the world's tables in creation order.
func (w *World) Tables() []string {
	out := make([]string, len(w.tables))
	for i, t := range w.tables {
		out[i] = t.name
	}
	return out
}

// SchemaName is the schema a world hash maps to.
func SchemaName(worldSHA256 string) (string, error) {
	if len(worldSHA256) < 16 {
		return "", fmt.Errorf("world hash %q is shorter than 16 hex digits", worldSHA256)
	}
	h := strings.ToLower(worldSHA256[:16])
	if _, err := hex.DecodeString(h); err != nil {
		return "", fmt.Errorf("world hash %q is not hex", worldSHA256)
	}
	return "w_" + h, nil
}

// Open returns the world of c, creating and seeding it if this database does
// not hold it yet. Any number of processes may race to open the same world;
// one creates it and the others wait for it. pool is the application's, on
// a database migrated and set up (docs/SECURITY.md): the world is built by a
// role of its own and copies log in as another, never as pool's role.
func Open(ctx context.Context, pool *pgxpool.Pool, c *contract.Contract, progs *script.Programs, opts Options) (*World, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	schema, err := SchemaName(c.WorldSHA256)
	if err != nil {
		return nil, fmt.Errorf("open world: %w", err)
	}
	var db uint32
	if err := pool.QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = current_database()`).Scan(&db); err != nil {
		return nil, fmt.Errorf("open world %s: %w", schema, err)
	}
	w := &World{pool: pool, c: c, progs: progs, frozen: &frozenDocs{}, opts: opts, schema: schema, twin: schema + "_b",
		role: fmt.Sprintf("%s_r%d", schema, db), owner: fmt.Sprintf("%s_o%d", schema, db), tag: "/*" + schema + "*/ "}
	if w.tools, err = compileTools(c); err != nil {
		return nil, fmt.Errorf("open world %s: %w", schema, err)
	}
	w.answers = newAnswers(c)
	password, err := w.password(ctx, pool)
	if err != nil {
		return nil, err
	}
	if password == "" {
		if password, err = w.create(ctx); err != nil {
			return nil, err
		}
	}
	if err := w.checkRole(ctx); err != nil {
		return nil, err
	}
	w.conns = newConns(sessionConfig(pool, w.role, password, opts), int(pool.Config().MaxConns))
	if err := w.loadTables(ctx); err != nil {
		return nil, fmt.Errorf("open world %s: %w", schema, err)
	}
	w.learnFrozen(ctx)
	return w, nil
}

// password is the copy role's password from the world's marker; empty
// when the world does not exist yet.
func (w *World) password(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (string, error) {
	var pw string
	err := q.QueryRow(ctx, `SELECT copy_password FROM suitegen_worlds WHERE schema = $1 AND copy_role = $2`, w.schema, w.role).Scan(&pw)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case isCode(err, "42P01"): // undefined_table
		return "", fmt.Errorf("open world %s: the database is not migrated: %w", w.schema, err)
	case err != nil:
		return "", fmt.Errorf("open world %s: %w", w.schema, err)
	}
	return pw, nil
}

// create builds the world under an advisory lock unless another process has
// finished it first, and returns the copy role's password.
//
// The application role has the admin function make the world's two roles
// (migrate.AdminFunction): the owner, which alone builds the schemas
// (schema.sql and the seed run in its session, as untrusted SQL), and the
// copy role, given only what copies need. The owner's login is turned off
// once the world is built.
func (w *World) create(ctx context.Context) (string, error) {
	conn, err := w.pool.Acquire(ctx)
	if err != nil {
		return "", fmt.Errorf("open world %s: %w", w.schema, err)
	}
	sum, _ := hex.DecodeString(strings.TrimPrefix(w.schema, "w_"))
	key := int64(binary.BigEndian.Uint64(sum))
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		conn.Release()
		return "", fmt.Errorf("open world %s: lock: %w", w.schema, err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
			_ = conn.Hijack().Close(uctx) // never hand back a session holding the lock
			return
		}
		conn.Release()
	}()
	if pw, err := w.password(ctx, conn); err != nil || pw != "" {
		return pw, err
	}
	ownerPw, err := scram.Password()
	if err != nil {
		return "", err
	}
	copyPw, err := scram.Password()
	if err != nil {
		return "", err
	}
	locked, err := scram.Password()
	if err != nil {
		return "", err
	}
	built := false
	defer func() {
		if built {
			return
		}
		// Best effort, the next attempt starts over anyway: no role of a
		// world that does not exist may log in, and its schemas go.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = worldRole(cctx, conn.Conn(), w.owner, locked, false)
		_ = worldRole(cctx, conn.Conn(), w.role, locked, false)
		_, _ = conn.Exec(cctx, fmt.Sprintf(`DROP SCHEMA IF EXISTS %s CASCADE; DROP SCHEMA IF EXISTS %s CASCADE`, w.schema, w.twin))
	}()
	if err := worldRole(ctx, conn.Conn(), w.owner, ownerPw, true); err != nil {
		return "", fmt.Errorf("open world %s: %w", w.schema, err)
	}
	if err := worldRole(ctx, conn.Conn(), w.role, copyPw, true); err != nil {
		return "", fmt.Errorf("open world %s: %w", w.schema, err)
	}
	var db string
	if err := conn.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		return "", fmt.Errorf("open world %s: %w", w.schema, err)
	}
	// Schemas left by a build that died before its marker go first. GRANTs
	// on one object rewrite one catalog row, which two worlds made at once
	// would update concurrently: they take turns under a lock of their own.
	prepare := fmt.Sprintf(`SELECT pg_advisory_xact_lock(%[6]d);
DROP SCHEMA IF EXISTS %[1]s CASCADE;
DROP SCHEMA IF EXISTS %[2]s CASCADE;
CREATE SCHEMA %[1]s AUTHORIZATION %[3]s;
CREATE SCHEMA %[2]s AUTHORIZATION %[3]s;
GRANT CONNECT ON DATABASE %[5]s TO %[3]s, %[4]s;
GRANT USAGE ON SCHEMA suitegen_copy TO %[4]s;
GRANT INSERT ON suitegen_copy.uncommittable TO %[4]s`, w.schema, w.twin, w.owner, w.role, pgx.Identifier{db}.Sanitize(), grantLockKey)
	if err := w.retry(ctx, func() (bool, error) {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, prepare); return err })
		return retryable(err) || catalogRace(err), err
	}); err != nil {
		return "", fmt.Errorf("open world %s: schemas: %w", w.schema, err)
	}
	if err := w.buildAsOwner(ctx, ownerPw); err != nil {
		return "", err
	}
	if err := worldRole(ctx, conn.Conn(), w.owner, locked, false); err != nil {
		return "", fmt.Errorf("open world %s: %w", w.schema, err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO suitegen_worlds (schema, contract_sha256, world_sha256, copy_role, copy_password) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (schema) DO UPDATE SET contract_sha256 = EXCLUDED.contract_sha256, world_sha256 = EXCLUDED.world_sha256,
		copy_role = EXCLUDED.copy_role, copy_password = EXCLUDED.copy_password`,
		w.schema, w.c.SHA256, w.c.WorldSHA256, w.role, copyPw); err != nil {
		return "", fmt.Errorf("open world %s: marker: %w", w.schema, err)
	}
	built = true
	return copyPw, nil
}

// catalogRace reports a catalog row rewritten by another session while our
// statement waited to rewrite it: GRANT ON DATABASE rewrites the database's
// row, which sessions outside our lock (an administrator's GRANT, the
// server's own upkeep) may rewrite too. The server raises it as an internal
// error, so the routine that raised it is what tells it apart; the
// transaction, run again, reads the new row.
func catalogRace(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "XX000" && strings.HasPrefix(pe.Routine, "simple_heap_")
}

// grantLockKey is the advisory lock world creations take around their
// GRANTs ("sgworlds" in ASCII).
const grantLockKey int64 = 0x7367776f726c6473

// worldRole has the admin function make role (or reset it) with password,
// which the server sees only as a SCRAM verifier.
func worldRole(ctx context.Context, conn *pgx.Conn, role, password string, login bool) error {
	v, err := scram.Verifier(password)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `SELECT `+migrate.AdminFunction+`($1, $2, $3)`, role, v, login)
	if isCode(err, "42883") || isCode(err, "3F000") { // undefined function or schema
		return fmt.Errorf("role %s: %s is missing: run the setup in docs/SECURITY.md on this database: %w", role, migrate.AdminFunction, err)
	}
	if err != nil {
		return fmt.Errorf("role %s: %w", role, err)
	}
	return nil
}

// buildAsOwner builds both schemas in one transaction of the owner's own
// session, bounded by BuildTimeout however schema.sql sets its timeouts.
func (w *World) buildAsOwner(ctx context.Context, password string) error {
	ctx, cancel := context.WithTimeout(ctx, w.opts.BuildTimeout)
	defer cancel()
	opts := w.opts
	opts.StatementTimeout = w.opts.BuildTimeout
	conn, err := pgx.ConnectConfig(ctx, sessionConfig(w.pool, w.owner, password, opts))
	if err != nil {
		return fmt.Errorf("open world %s: connect as %s: %w", w.schema, w.owner, err)
	}
	defer closeConn(conn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("open world %s: %w", w.schema, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit this is a no-op
	if _, err := tx.Exec(ctx, `SET LOCAL standard_conforming_strings = on`); err != nil {
		return fmt.Errorf("open world %s: %w", w.schema, err)
	}
	for i, s := range []string{w.schema, w.twin} {
		if err := w.build(ctx, tx, s, i == 0); err != nil {
			if ctx.Err() != nil {
				return &ContractError{Problems: contract.Problems{{File: "world/schema.sql", Code: contract.CodeSchemaSQL,
					Message: fmt.Sprintf("building the world took longer than %s", w.opts.BuildTimeout)}}}
			}
			return err
		}
	}
	var grants string
	for _, s := range []string{w.schema, w.twin} {
		grants += fmt.Sprintf(`GRANT USAGE ON SCHEMA %[1]s TO %[2]s;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %[1]s TO %[2]s;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA %[1]s TO %[2]s;
`, s, w.role)
	}
	if _, err := tx.Exec(ctx, grants); err != nil {
		return fmt.Errorf("open world %s: grants: %w", w.schema, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("open world %s: commit: %w", w.schema, err)
	}
	return nil
}

// checkRole refuses a copy role that can do more than its world needs: a
// database not set up for least privilege, or grants made since.
func (w *World) checkRole(ctx context.Context) error {
	var elevated, member, temp, create bool
	var fns []string
	err := w.pool.QueryRow(ctx, `SELECT r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls,
		EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid),
		has_database_privilege(r.oid, current_database(), 'TEMP'),
		has_schema_privilege(r.oid, 'public', 'CREATE'),
		ARRAY(SELECT DISTINCT p.proname::text FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace
		      AND p.proname = ANY($2) AND has_function_privilege(r.oid, p.oid, 'EXECUTE') ORDER BY 1)
		FROM pg_roles r WHERE r.rolname = $1`, w.role, migrate.Restricted).Scan(&elevated, &member, &temp, &create, &fns)
	if err != nil {
		return fmt.Errorf("open world %s: role %s: %w", w.schema, w.role, err)
	}
	var has []string
	for what, yes := range map[string]bool{"a role attribute beyond LOGIN": elevated, "membership in a role": member,
		"TEMP on the database": temp, "CREATE on schema public": create} {
		if yes {
			has = append(has, what)
		}
	}
	sort.Strings(has)
	for _, f := range fns {
		has = append(has, "EXECUTE on "+f)
	}
	if len(has) > 0 {
		return &PrivilegeError{Role: w.role, Has: has}
	}
	return nil
}

// build creates one schema and seeds it. Seed problems are reported with
// the file and line of the row.
func (w *World) build(ctx context.Context, tx pgx.Tx, schema string, first bool) error {
	if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+schema+"; SET LOCAL TimeZone = 'UTC'"); err != nil {
		return fmt.Errorf("open world %s: %w", w.schema, err)
	}
	if strings.TrimSpace(w.c.SchemaSQL) != "" {
		if _, err := tx.Conn().PgConn().Exec(ctx, w.c.SchemaSQL).ReadAll(); err != nil {
			return &ContractError{Problems: contract.Problems{{File: "world/schema.sql", Code: contract.CodeSchemaSQL, Message: pgMessage(err)}}}
		}
	}
	var stmts []string
	type origin struct {
		file string
		line int
	}
	var origins []origin
	for _, st := range w.c.Seeds {
		tbl := w.c.Table(st.Table)
		for i, row := range st.Rows {
			sql, err := insertSQL(st.Table, tbl, row)
			line := 0
			if i < len(st.Lines) {
				line = st.Lines[i]
			}
			if err != nil {
				return &ContractError{Problems: contract.Problems{{File: st.File, Line: line, Code: CodeSeedViolatesSchema, Message: err.Error()}}}
			}
			stmts = append(stmts, sql)
			origins = append(origins, origin{st.File, line})
		}
	}
	if len(stmts) == 0 {
		return nil
	}
	mrr := tx.Conn().PgConn().Exec(ctx, strings.Join(stmts, ";\n"))
	done := 0
	for mrr.NextResult() {
		if _, err := mrr.ResultReader().Close(); err != nil {
			break
		}
		done++
	}
	if err := mrr.Close(); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && done < len(origins) {
			o := origins[done]
			return &ContractError{Problems: contract.Problems{{File: o.file, Line: o.line, Code: CodeSeedViolatesSchema, Message: pgMessage(err)}}}
		}
		return fmt.Errorf("open world %s: seed: %w", w.schema, err)
	}
	// A seed row that sets an identity or serial key leaves its sequence
	// behind: a handler's INSERT would then take a key the seed holds.
	if _, err := tx.Exec(ctx, sequencesPastSeed); err != nil {
		return fmt.Errorf("open world %s: sequences: %w", w.schema, err)
	}
	return nil
}

// sequencesPastSeed moves every sequence a column of the world's schema
// owns (serial and identity columns) past the largest value the seed wrote.
const sequencesPastSeed = `DO $$
DECLARE r record; m bigint;
BEGIN
    FOR r IN
        SELECT c.relname AS tbl, a.attname AS col,
               pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) AS seq
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
    LOOP
        CONTINUE WHEN r.seq IS NULL;
        EXECUTE format('SELECT max(%I)::bigint FROM %I', r.col, r.tbl) INTO m;
        IF m IS NOT NULL THEN
            PERFORM setval(r.seq, m);
        END IF;
    END LOOP;
END $$`

// insertSQL renders one seed row as an INSERT with literal values (typed by
// their columns, as Postgres reads unknown literals).
func insertSQL(table string, tbl *contract.Table, row map[string]any) (string, error) {
	cols := make([]string, 0, len(row))
	for k := range row {
		cols = append(cols, k)
	}
	if tbl != nil {
		pos := map[string]int{}
		for i, c := range tbl.Columns {
			pos[c.Name] = i
		}
		sort.Slice(cols, func(i, j int) bool {
			pi, iok := pos[cols[i]]
			pj, jok := pos[cols[j]]
			if iok && jok {
				return pi < pj
			}
			if iok != jok {
				return iok
			}
			return cols[i] < cols[j]
		})
	} else {
		sort.Strings(cols)
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO ")
	sb.WriteString(pgx.Identifier{table}.Sanitize())
	if len(cols) == 0 {
		sb.WriteString(" DEFAULT VALUES")
		return sb.String(), nil
	}
	sb.WriteString(" (")
	for i, c := range cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(pgx.Identifier{c}.Sanitize())
	}
	sb.WriteString(") VALUES (")
	for i, c := range cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		typ := ""
		if tbl != nil {
			if col := tbl.Column(c); col != nil {
				typ = col.Type
			}
		}
		lit, err := literal(row[c], strings.HasSuffix(strings.TrimSpace(typ), "]"))
		if err != nil {
			return "", fmt.Errorf("column %s: %w", c, err)
		}
		sb.WriteString(lit)
	}
	sb.WriteString(")")
	return sb.String(), nil
}

func literal(v any, array bool) (string, error) {
	switch v := v.(type) {
	case nil:
		return "NULL", nil
	case bool: // quoted: unknown literals take the column's type (bool, jsonb, text)
		if v {
			return "'true'", nil
		}
		return "'false'", nil
	case int:
		return "'" + strconv.Itoa(v) + "'", nil
	case int64:
		return "'" + strconv.FormatInt(v, 10) + "'", nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Errorf("non-finite number %v", v)
		}
		return "'" + strconv.FormatFloat(v, 'g', -1, 64) + "'", nil
	case json.Number:
		return "'" + v.String() + "'", nil
	case string:
		return quote(v), nil
	case []any:
		if array {
			return arrayLiteral(v)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return quote(string(b)), nil
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// arrayLiteral renders a JSON list as a Postgres array literal ('{"a","b"}').
func arrayLiteral(v []any) (string, error) {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, e := range v {
		if i > 0 {
			sb.WriteByte(',')
		}
		switch e := e.(type) {
		case nil:
			sb.WriteString("NULL")
		case string:
			sb.WriteByte('"')
			sb.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e))
			sb.WriteByte('"')
		case []any:
			inner, err := arrayLiteral(e)
			if err != nil {
				return "", err
			}
			sb.WriteString(strings.Trim(inner, "'"))
		default:
			b, err := json.Marshal(e)
			if err != nil {
				return "", err
			}
			sb.WriteByte('"')
			sb.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(string(b)))
			sb.WriteByte('"')
		}
	}
	sb.WriteByte('}')
	return quote(sb.String()), nil
}

// loadTables reads the world's tables and primary keys from the catalog, in
// creation order, and prepares the one-query State statement.
func (w *World) loadTables(ctx context.Context) error {
	rows, err := w.pool.Query(ctx, `
SELECT c.relname,
       coalesce((SELECT array_agg(a.attname ORDER BY k.ord)
                 FROM pg_index i
                 CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                 WHERE i.indrelid = c.oid AND i.indisprimary), '{}'),
       c.relkind = 'r' AND NOT c.relhassubclass
         AND coalesce((SELECT i.indimmediate FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary), false),
       coalesce((SELECT array_agg(a.attname ORDER BY a.attnum) FROM pg_attribute a
                 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                   AND pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) IS NOT NULL), '{}')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
ORDER BY c.oid`, w.schema)
	if err != nil {
		return err
	}
	w.tables, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableInfo, error) {
		var t tableInfo
		err := r.Scan(&t.name, &t.key, &t.layered, &t.serial)
		return t, err
	})
	if err != nil {
		return err
	}
	// Contract order (schema.sql order) when the contract knows the tables.
	if len(w.c.Tables) > 0 {
		pos := map[string]int{}
		for i, t := range w.c.Tables {
			pos[t.Name] = i
		}
		sort.SliceStable(w.tables, func(i, j int) bool {
			pi, iok := pos[w.tables[i].name]
			pj, jok := pos[w.tables[j].name]
			return iok && (!jok || pi < pj)
		})
	}
	w.stateSQL = stateSQL(w.tag, w.tables)
	w.seqSQL = map[string]string{}
	for _, t := range w.tables {
		if q := seqPastSQL(w.tag, t.name, t.serial); q != "" {
			w.seqSQL[t.name] = q
		}
	}
	return nil
}

// maxSeqSteps bounds how far seqPastSQL moves one sequence. The copy's role
// may only call nextval (setval needs more than a copy is granted), one
// step a row; a key further ahead than this is beyond the reach of every
// proof of a run anyway.
const maxSeqSteps = 10000

// seqPastSQL moves each sequence of t's serial and identity columns past the
// largest key the copy's rows hold ("" when t has none). A setup may insert
// rows with keys of their own; sequences are shared by every copy and never
// rolled back, so after enough proofs a handler's INSERT would draw a key a
// setup row already holds and crash: that crash depends on what was proved
// before, not on the scenario. Only forward: another copy may hold keys
// drawn since.
func seqPastSQL(tag, table string, serial []string) string {
	var parts []string
	for _, c := range serial {
		col := pgx.Identifier{c}.Sanitize()
		parts = append(parts, fmt.Sprintf(`SELECT count(nextval(q.s)) FROM (SELECT pg_get_serial_sequence(%s, %s)::regclass AS s) q,
  LATERAL generate_series(1, LEAST(%d, COALESCE((SELECT max(%s)::bigint FROM %s), 0) - COALESCE(pg_sequence_last_value(q.s), 0)))`,
			quote(pgx.Identifier{table}.Sanitize()), quote(c), maxSeqSteps, col, pgx.Identifier{table}.Sanitize()))
	}
	if len(parts) == 0 {
		return ""
	}
	return tag + strings.Join(parts, "\nUNION ALL\n")
}

// stateSQL is the one query a snapshot sends: per table its name, whether
// this transaction may have changed it, and what changed as little text as
// it can:
//
//   - a table the transaction has not touched is not rendered at all (unless
//     $1, "all", is true): it holds the frozen world's rows, which the World
//     keeps (frozenDocs), learnt from the first snapshots of its schema;
//   - a touched layered table (tableInfo.layered) whose frozen rows are all
//     still there — their count, read by their xmin (the transactions that
//     built the world, $2), is the frozen count ($3) — sends only the rows
//     this transaction wrote ("ours": any other xmin);
//   - any other touched table is rendered whole ("doc").
//
// Rows are rendered by json_agg, ordered by primary key (by the whole row
// without one). The fifth column, on the first snapshots only, is the
// distinct xmins of an untouched table: the frozen world's.
//
// "Touched" is read from the transaction's own row counters
// (pg_stat_get_xact_tuples_*: inserts, updates and deletes this session made
// since its counters were last flushed, live subtransactions included,
// aborted ones counted too; a copy flushes them when it ends), so it errs
// only towards rendering. The counters are kept by the session's backend,
// cannot be reset or turned off by the copy role (track_counts is a
// superuser setting; when it is off every table counts as touched), and do
// not see rows that changed through another relation: a partitioned table
// or one with inheritance children is always rendered.
//
// A row of ours is told from a frozen one by its xmin. Transaction ids wrap
// after 2^32: a copy whose own id equals one that built the world would
// take its rows for frozen ones, and would still be caught by the count
// unless it also deleted exactly as many frozen rows; this is accepted.
func stateSQL(tag string, tables []tableInfo) string {
	if len(tables) == 0 {
		return ""
	}
	// The list of touched tables is a CTE whose name no table has (a CTE
	// shadows a table of its name).
	cte := "suitegen_touched"
	for slices.ContainsFunc(tables, func(t tableInfo) bool { return t.name == cte }) {
		cte += "_"
	}
	parts := make([]string, 0, len(tables))
	for i, t := range tables {
		id := pgx.Identifier{t.name}.Sanitize()
		order := "x::text"
		if len(t.key) > 0 {
			keys := make([]string, len(t.key))
			for i, k := range t.key {
				keys[i] = "x." + pgx.Identifier{k}.Sanitize()
			}
			order = strings.Join(keys, ", ")
		}
		parts = append(parts, fmt.Sprintf(`SELECT %[1]s::text, t.touched,
  CASE WHEN $1::bool OR t.touched AND k.kept IS DISTINCT FROM ($3::int8[])[%[5]d]
       THEN coalesce((SELECT json_agg(x ORDER BY %[2]s) FROM %[3]s x), '[]')::text END,
  CASE WHEN NOT $1::bool AND t.touched AND k.kept = ($3::int8[])[%[5]d]
       THEN coalesce((SELECT json_agg(x ORDER BY %[2]s) FROM %[3]s x WHERE x.xmin <> ALL((($2::text[])[%[5]d])::xid[])), '[]')::text END,
  CASE WHEN $1::bool AND NOT t.touched THEN (SELECT array_agg(DISTINCT x.xmin::text) FROM %[3]s x)::text END
FROM (SELECT %[1]s = ANY (SELECT name FROM %[4]s) AS touched) t
CROSS JOIN LATERAL (SELECT CASE WHEN NOT $1::bool AND t.touched AND ($2::text[])[%[5]d] IS NOT NULL
  THEN (SELECT count(*) FROM %[3]s x WHERE x.xmin = ANY((($2::text[])[%[5]d])::xid[])) END AS kept) k`,
			quote(t.name), order, id, cte, i+1))
	}
	return tag + `WITH ` + cte + ` AS MATERIALIZED (
SELECT c.relname::text AS name FROM pg_catalog.pg_class c
WHERE c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = pg_catalog.current_schema())
  AND (c.relkind <> 'r' OR c.relhassubclass OR NOT pg_catalog.current_setting('track_counts')::bool
       OR pg_catalog.pg_stat_get_xact_tuples_inserted(c.oid) + pg_catalog.pg_stat_get_xact_tuples_updated(c.oid)
          + pg_catalog.pg_stat_get_xact_tuples_deleted(c.oid) > 0))
` + strings.Join(parts, "\nUNION ALL\n")
}

func isCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.Detail != "" {
			msg += " (" + pe.Detail + ")"
		}
		return msg
	}
	return err.Error()
}

// WithPrograms is a view of the world whose handlers are progs (a mutant of
// the contract's): the same frozen schema, sessions and snapshots, other
// code. Closing the world closes its views; a view is never closed itself.
func (w *World) WithPrograms(progs *script.Programs) *World {
	v := *w
	v.progs = progs
	v.answers = newAnswers(v.c) // other handlers may answer otherwise
	return &v
}
