package migrate

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/*.sql
var embedded embed.FS

// LockKey is the pg_advisory_lock key that serialises Apply across processes
// ("suitegen" in ASCII).
const LockKey int64 = 0x7375697465676e

// Migration is one schema step.
type Migration struct {
	Version int
	Name    string // file name without the version prefix and .sql
	SQL     string
}

var fileName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Load reads NNNN_name.sql files from the root of fsys, sorted by version.
// Any other file, or two files with one version, is an error.
func Load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("migrate: read migrations: %w", err)
	}
	var ms []Migration
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrate: %s: file name must be NNNN_name.sql (lower case)", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if v == 0 {
			return nil, fmt.Errorf("migrate: %s: version 0000 is reserved", e.Name())
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrate: %s and %s share version %d", prev, e.Name(), v)
		}
		seen[v] = e.Name()
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("migrate: read %s: %w", e.Name(), err)
		}
		ms = append(ms, Migration{Version: v, Name: m[2], SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// All returns the embedded migrations in order. It panics if the embedded
// set is malformed, which is a build mistake caught by this package's tests.
func All() []Migration {
	sub, err := fs.Sub(embedded, "sql")
	if err != nil {
		panic(err)
	}
	ms, err := Load(sub)
	if err != nil {
		panic(err)
	}
	return ms
}

// Versions lists the embedded migration versions in order.
func Versions() []int {
	ms := All()
	vs := make([]int, len(ms))
	for i, m := range ms {
		vs[i] = m.Version
	}
	return vs
}

// Apply brings the database behind pool up to date with the embedded
// migrations, using one connection from the pool for the whole run.
func Apply(ctx context.Context, pool *pgxpool.Pool) error {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: acquire connection: %w", err)
	}
	err = Run(ctx, c.Conn(), All())
	if errors.Is(err, errLockHeld) {
		// The session may still hold the advisory lock; never hand it back.
		_ = c.Hijack().Close(context.WithoutCancel(ctx))
		return err
	}
	c.Release()
	return err
}

// ApplyConn is Apply on a connection the caller owns.
func ApplyConn(ctx context.Context, conn *pgx.Conn) error {
	return Run(ctx, conn, All())
}

// errLockHeld marks a failure to release the advisory lock: the connection
// must be closed rather than reused.
var errLockHeld = errors.New("migrate: advisory lock may still be held")

// Run applies the migrations in ms not yet recorded in the database, under
// the advisory lock. Callers normally use Apply; Run exists for tests and
// tools that bring their own set.
func Run(ctx context.Context, conn *pgx.Conn, ms []Migration) (err error) {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, LockKey); err != nil {
		// Interrupted, the lock may have been granted without our seeing it.
		return fmt.Errorf("migrate: take advisory lock: %w", errors.Join(err, errLockHeld))
	}
	defer func() {
		// Unlock even when ctx is cancelled, or the session keeps the lock.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, LockKey); uerr != nil {
			err = errors.Join(err, errLockHeld, uerr)
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS suitegen_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("migrate: create suitegen_migrations: %w", err)
	}
	done, err := appliedConn(ctx, conn)
	if err != nil {
		return err
	}
	have := make(map[int]bool, len(done))
	for _, v := range done {
		have[v] = true
	}
	for _, m := range ms {
		if have[m.Version] {
			continue
		}
		if err := applyOne(ctx, conn, m); err != nil {
			return err
		}
	}
	return nil
}

func applyOne(ctx context.Context, conn *pgx.Conn, m Migration) error {
	label := fmt.Sprintf("%04d_%s", m.Version, m.Name)
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// No arguments: sent as a simple query, so a file may hold many statements.
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO suitegen_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
		return err
	})
	if err != nil {
		return fmt.Errorf("migrate: apply %s.sql: %w", label, err)
	}
	return nil
}

// Applied lists the versions recorded in the database, in order; none when
// the database has never been migrated.
func Applied(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer c.Release()
	var exists bool
	if err := c.QueryRow(ctx, `SELECT to_regclass('suitegen_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("migrate: look for suitegen_migrations: %w", err)
	}
	if !exists {
		return nil, nil
	}
	return appliedConn(ctx, c.Conn())
}

func appliedConn(ctx context.Context, conn *pgx.Conn) ([]int, error) {
	rows, err := conn.Query(ctx, `SELECT version FROM suitegen_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("migrate: read suitegen_migrations: %w", err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("migrate: read suitegen_migrations: %w", err)
	}
	return vs, nil
}
