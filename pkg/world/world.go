package world

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/script"
)

// CodeSeedViolatesSchema is the problem code of a seed row the schema rejects.
const CodeSeedViolatesSchema = "seed-violates-schema"

// Options tunes a world. Zero values take the defaults.
type Options struct {
	StatementTimeout time.Duration // per statement inside a copy; default 5s
	MaxRetries       int           // retries of a copy after a serialization failure or deadlock; default 5
}

func (o Options) withDefaults() (Options, error) {
	if o.StatementTimeout < 0 {
		return o, fmt.Errorf("world options: StatementTimeout must not be negative, got %s", o.StatementTimeout)
	}
	if o.MaxRetries < 0 {
		return o, fmt.Errorf("world options: MaxRetries must not be negative, got %d", o.MaxRetries)
	}
	if o.StatementTimeout == 0 {
		o.StatementTimeout = 5 * time.Second
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
	pool  *pgxpool.Pool
	c     *contract.Contract
	progs *script.Programs
	opts  Options

	schema, twin, role string
	tag                string // SQL comment that keeps each world's prepared statements apart
	tools              map[string]*tool
	tables             []tableInfo
	stateSQL           string
	stmtSets           stmtSets
}

type tableInfo struct {
	name string
	key  []string // primary key columns; empty: every column
}

// Schema is the world's schema name (w_<16 hex>).
func (w *World) Schema() string { return w.schema }

// Role is the role copies run as.
func (w *World) Role() string { return w.role }

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

// markerLockKey is the advisory lock taken while creating the marker table
// ("suitegen" in ASCII).
const markerLockKey int64 = 0x7375697465676e

const markerTable = `CREATE TABLE IF NOT EXISTS public.suitegen_worlds (
	schema          text PRIMARY KEY,
	contract_sha256 text NOT NULL,
	world_sha256    text NOT NULL,
	created_at      timestamptz NOT NULL DEFAULT now()
)`

// Open returns the world of c, creating and seeding it if this database does
// not hold it yet. Any number of processes may race to open the same world;
// one creates it and the others wait for it.
func Open(ctx context.Context, pool *pgxpool.Pool, c *contract.Contract, progs *script.Programs, opts Options) (*World, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	schema, err := SchemaName(c.WorldSHA256)
	if err != nil {
		return nil, fmt.Errorf("open world: %w", err)
	}
	w := &World{pool: pool, c: c, progs: progs, opts: opts, schema: schema, twin: schema + "_b", role: schema + "_r", tag: "/*" + schema + "*/ "}
	if w.tools, err = compileTools(c); err != nil {
		return nil, fmt.Errorf("open world %s: %w", schema, err)
	}
	var exists bool
	err = pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM public.suitegen_worlds WHERE schema = $1)`, schema).Scan(&exists)
	if err != nil && !isCode(err, "42P01") { // undefined_table: no world was ever made here
		return nil, fmt.Errorf("open world %s: %w", schema, err)
	}
	if !exists {
		if err := w.create(ctx); err != nil {
			return nil, err
		}
	}
	if err := w.loadTables(ctx); err != nil {
		return nil, fmt.Errorf("open world %s: %w", schema, err)
	}
	return w, nil
}

// create builds the world under an advisory lock unless another process has
// finished it first.
func (w *World) create(ctx context.Context) error {
	// Concurrent CREATE TABLE IF NOT EXISTS can still collide on the
	// catalog's unique indexes, so the marker table is made under a lock of
	// its own.
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, markerLockKey); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, markerTable)
		return err
	})
	if err != nil {
		return fmt.Errorf("open world %s: marker table: %w", w.schema, err)
	}
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("open world %s: %w", w.schema, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit this is a no-op
	sum, _ := hex.DecodeString(strings.TrimPrefix(w.schema, "w_"))
	key := int64(binary.BigEndian.Uint64(sum))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, key); err != nil {
		return fmt.Errorf("open world %s: lock: %w", w.schema, err)
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM public.suitegen_worlds WHERE schema = $1)`, w.schema).Scan(&exists); err != nil {
		return fmt.Errorf("open world %s: %w", w.schema, err)
	}
	if exists {
		return tx.Commit(ctx)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL TimeZone = 'UTC'; SET LOCAL standard_conforming_strings = on`); err != nil {
		return fmt.Errorf("open world %s: %w", w.schema, err)
	}
	for i, s := range []string{w.schema, w.twin} {
		if err := w.build(ctx, tx, s, i == 0); err != nil {
			return err
		}
	}
	grants := fmt.Sprintf(`DO $do$ BEGIN
  BEGIN CREATE ROLE %[1]s NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  BEGIN EXECUTE format('GRANT %[1]s TO %%I', current_user); EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
END $do$;
`, w.role)
	for _, s := range []string{w.schema, w.twin} {
		grants += fmt.Sprintf(`GRANT USAGE ON SCHEMA %[1]s TO %[2]s;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %[1]s TO %[2]s;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA %[1]s TO %[2]s;
`, s, w.role)
	}
	if _, err := tx.Exec(ctx, grants); err != nil {
		return fmt.Errorf("open world %s: role: %w", w.schema, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO public.suitegen_worlds (schema, contract_sha256, world_sha256) VALUES ($1, $2, $3)`,
		w.schema, w.c.SHA256, w.c.WorldSHA256); err != nil {
		return fmt.Errorf("open world %s: marker: %w", w.schema, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("open world %s: commit: %w", w.schema, err)
	}
	return nil
}

// build creates one schema and seeds it. Seed problems are reported with
// the file and line of the row.
func (w *World) build(ctx context.Context, tx pgx.Tx, schema string, first bool) error {
	setup := fmt.Sprintf("CREATE SCHEMA %[1]s; SET LOCAL search_path TO %[1]s", schema)
	if _, err := tx.Exec(ctx, setup); err != nil {
		return fmt.Errorf("open world %s: create schema: %w", w.schema, err)
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
	return nil
}

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
                 WHERE i.indrelid = c.oid AND i.indisprimary), '{}')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
ORDER BY c.oid`, w.schema)
	if err != nil {
		return err
	}
	w.tables, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableInfo, error) {
		var t tableInfo
		err := r.Scan(&t.name, &t.key)
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
	var parts []string
	for _, t := range w.tables {
		id := pgx.Identifier{t.name}.Sanitize()
		order := "x::text"
		if len(t.key) > 0 {
			keys := make([]string, len(t.key))
			for i, k := range t.key {
				keys[i] = "x." + pgx.Identifier{k}.Sanitize()
			}
			order = strings.Join(keys, ", ")
		}
		parts = append(parts, fmt.Sprintf("SELECT %s::text, coalesce((SELECT json_agg(x ORDER BY %s) FROM %s x), '[]')::text", quote(t.name), order, id))
	}
	if len(parts) > 0 {
		w.stateSQL = w.tag + strings.Join(parts, " UNION ALL ")
	}
	return nil
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
