package migrate_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func emptyPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), testenv.EmptyPostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestEmbeddedSet(t *testing.T) {
	vs := migrate.Versions()
	if len(vs) == 0 || vs[0] != 1 {
		t.Fatalf("Versions() = %v, want a list starting with 1 (0001_base.sql)", vs)
	}
	if !slices.IsSorted(vs) {
		t.Fatalf("Versions() not sorted: %v", vs)
	}
}

func TestLoadRejectsMalformedSets(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"bad name":      {"1_x.sql": {Data: []byte("SELECT 1")}},
		"upper case":    {"0001_X.sql": {Data: []byte("SELECT 1")}},
		"not sql":       {"0001_x.txt": {Data: []byte("SELECT 1")}},
		"version zero":  {"0000_x.sql": {Data: []byte("SELECT 1")}},
		"duplicate ver": {"0002_a.sql": {Data: []byte("SELECT 1")}, "0002_b.sql": {Data: []byte("SELECT 1")}},
	} {
		if _, err := migrate.Load(fsys); err == nil {
			t.Errorf("%s: Load accepted %v", name, fsys)
		}
	}
	ms, err := migrate.Load(fstest.MapFS{
		"0020_b.sql": {Data: []byte("B")},
		"0003_a.sql": {Data: []byte("A")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Version != 3 || ms[0].Name != "a" || ms[1].SQL != "B" {
		t.Fatalf("Load = %+v", ms)
	}
}

func TestApplyTwiceIsNoop(t *testing.T) {
	ctx := context.Background()
	pool := emptyPool(t)
	if got, err := migrate.Applied(ctx, pool); err != nil || len(got) != 0 {
		t.Fatalf("Applied on empty database = %v, %v", got, err)
	}
	if err := migrate.Apply(ctx, pool); err != nil {
		t.Fatal(err)
	}
	got, err := migrate.Applied(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, migrate.Versions()) {
		t.Fatalf("Applied = %v, want %v", got, migrate.Versions())
	}
	var stamp time.Time
	if err := pool.QueryRow(ctx, `SELECT max(applied_at) FROM suitegen_migrations`).Scan(&stamp); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT key FROM suitegen_meta`); err != nil {
		t.Fatalf("0001_base did not create suitegen_meta: %v", err)
	}

	if err := migrate.Apply(ctx, pool); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	var n int
	var stamp2 time.Time
	if err := pool.QueryRow(ctx, `SELECT count(*), max(applied_at) FROM suitegen_migrations`).Scan(&n, &stamp2); err != nil {
		t.Fatal(err)
	}
	if n != len(migrate.Versions()) || !stamp2.Equal(stamp) {
		t.Fatalf("second Apply changed the record: %d rows (want %d), applied_at %v -> %v", n, len(migrate.Versions()), stamp, stamp2)
	}
}

// Concurrent runs must take turns: the migration below is not idempotent
// (CREATE TABLE without IF NOT EXISTS) and slow, so two runs overlapping, or
// both applying it, would fail or insert twice.
func TestConcurrentRunsApplyOnce(t *testing.T) {
	ctx := context.Background()
	pool := emptyPool(t)
	ms := []migrate.Migration{
		{Version: 1, Name: "slow", SQL: `SELECT pg_sleep(0.2); CREATE TABLE once (n int); INSERT INTO once VALUES (1);`},
		{Version: 2, Name: "more", SQL: `INSERT INTO once VALUES (2);`},
	}
	const runners = 4
	var wg sync.WaitGroup
	errs := make([]error, runners)
	for i := range runners {
		wg.Go(func() {
			c, err := pool.Acquire(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Release()
			errs[i] = migrate.Run(ctx, c.Conn(), ms)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Run: %v", err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM once`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 2 {
		t.Fatalf("once has %d rows, want 2 (each migration applied exactly once)", rows)
	}
}

func TestConcurrentApplyEmbedded(t *testing.T) {
	ctx := context.Background()
	u := testenv.EmptyPostgresURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			p, err := pgxpool.New(ctx, u)
			if err != nil {
				errs[i] = err
				return
			}
			defer p.Close()
			errs[i] = migrate.Apply(ctx, p)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	p := emptyPoolFor(t, u)
	got, err := migrate.Applied(ctx, p)
	if err != nil || !slices.Equal(got, migrate.Versions()) {
		t.Fatalf("Applied = %v, %v; want %v", got, err, migrate.Versions())
	}
}

func emptyPoolFor(t *testing.T, u string) *pgxpool.Pool {
	p, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestFailedMigrationRollsBackAndReleasesLock(t *testing.T) {
	ctx := context.Background()
	pool := emptyPool(t)
	ms := []migrate.Migration{
		{Version: 1, Name: "good", SQL: `CREATE TABLE good (n int);`},
		{Version: 2, Name: "bad", SQL: `CREATE TABLE half (n int); SELECT 1/0;`},
		{Version: 3, Name: "after", SQL: `CREATE TABLE after (n int);`},
	}
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = migrate.Run(ctx, c.Conn(), ms)
	c.Release()
	if err == nil {
		t.Fatal("Run with a failing migration returned nil")
	}
	got, err := migrate.Applied(ctx, pool)
	if err != nil || !slices.Equal(got, []int{1}) {
		t.Fatalf("Applied = %v, %v; want [1]", got, err)
	}
	var half, after bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('half') IS NOT NULL, to_regclass('after') IS NOT NULL`).Scan(&half, &after); err != nil {
		t.Fatal(err)
	}
	if half || after {
		t.Fatalf("failed run left tables: half=%v after=%v", half, after)
	}
	var free bool
	if err := pool.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, migrate.LockKey).Scan(&free); err != nil {
		t.Fatal(err)
	}
	if !free {
		t.Fatal("advisory lock still held after a failed run")
	}
}

func TestRunWaitsForLockAndHonoursContext(t *testing.T) {
	ctx := context.Background()
	u := testenv.EmptyPostgresURL(t)
	holder, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrate.LockKey); err != nil {
		t.Fatal(err)
	}
	waiter, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close(ctx)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := migrate.ApplyConn(short, waiter); err == nil {
		t.Fatal("ApplyConn succeeded while another session held the lock")
	}
}
