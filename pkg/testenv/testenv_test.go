package testenv_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) {
	if os.Getenv("TESTENV_LEAK") != "" {
		go func() { select {} }() // a goroutine nobody stops
	}
	testenv.Main(m)
}

// Main must fail an otherwise passing binary that leaks a goroutine.
func TestMainFailsOnLeakedGoroutine(t *testing.T) {
	if os.Getenv("TESTENV_LEAK") != "" {
		return // the child run: pass, and let Main find the leak
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainFailsOnLeakedGoroutine$")
	cmd.Env = append(os.Environ(), "TESTENV_LEAK=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "goroutines leaked") {
		t.Fatalf("leaking binary: err=%v output:\n%s", err, out)
	}
}

func TestPostgresGivesEachTestItsOwnMigratedDatabase(t *testing.T) {
	var mu sync.Mutex
	names := map[string]bool{}
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool := testenv.Postgres(t)
			var db string
			if err := pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if names[db] {
				t.Errorf("database %s handed out twice", db)
			}
			names[db] = true
			mu.Unlock()

			got, err := migrate.Applied(ctx, pool)
			if err != nil || !slices.Equal(got, migrate.Versions()) {
				t.Fatalf("Applied = %v, %v; want %v", got, err, migrate.Versions())
			}
			// Same table name in both tests: would collide in a shared database.
			if _, err := pool.Exec(ctx, `CREATE TABLE mine (who text); INSERT INTO mine VALUES ('`+name+`')`); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM mine`).Scan(&n); err != nil || n != 1 {
				t.Fatalf("mine has %d rows (%v), want 1", n, err)
			}
		})
	}
}

func TestPostgresURLDroppedAtCleanup(t *testing.T) {
	ctx := context.Background()
	var db string
	t.Run("inner", func(t *testing.T) {
		p, err := pgxpool.New(ctx, testenv.PostgresURL(t))
		if err != nil {
			t.Fatal(err)
		}
		// Deliberately left open: the FORCE drop must still succeed.
		_ = p
		if err := p.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close) // registered last, runs first; ends the pool's goroutines
	})
	pool := testenv.Postgres(t)
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, db).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if db == "" || exists {
		t.Fatalf("database %q still exists after its test ended", db)
	}
}

func TestEmptyPostgresURLHasNoMigrations(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.EmptyPostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	got, err := migrate.Applied(ctx, pool)
	if err != nil || len(got) != 0 {
		t.Fatalf("Applied = %v, %v; want none", got, err)
	}
}

func TestNATSJetStreamRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := testenv.NATS(t)
	if url == testenv.NATS(t) {
		t.Fatal("two NATS calls returned the same server")
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "WORK", Subjects: []string{"work.>"}, Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "work.slice", []byte("s-1")); err != nil {
		t.Fatal(err)
	}
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "writers", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for msg := range batch.Messages() {
		got = append(got, string(msg.Data()))
		if err := msg.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, []string{"s-1"}) {
		t.Fatalf("consumed %q, want [s-1]", got)
	}
}

// BenchmarkPostgresURL measures creating a per-test database from the
// template; the drops happen at the benchmark's cleanup.
func BenchmarkPostgresURL(b *testing.B) {
	testenv.PostgresURL(b) // start the cluster and build the template outside the timing
	for b.Loop() {
		testenv.PostgresURL(b)
	}
}

// Tests connect as suitegen does: an application role that is no
// superuser, to a database set up for least privilege; AdminURL is a
// superuser's way into the same database.
func TestPostgresIsTheApplicationRole(t *testing.T) {
	ctx := context.Background()
	u := testenv.PostgresURL(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var super, createRole, publicConnect, publicTemp, terminate bool
	var db string
	if err := conn.QueryRow(ctx, `SELECT rolsuper, rolcreaterole, current_database(),
		has_database_privilege('public', current_database(), 'CONNECT'),
		has_database_privilege('public', current_database(), 'TEMP'),
		has_function_privilege('public', 'pg_catalog.pg_terminate_backend(integer, bigint)', 'EXECUTE')
		FROM pg_roles WHERE rolname = current_user`).Scan(&super, &createRole, &db, &publicConnect, &publicTemp, &terminate); err != nil {
		t.Fatal(err)
	}
	if super || createRole || publicConnect || publicTemp || terminate {
		t.Fatalf("superuser %v, createrole %v; PUBLIC may connect %v, make temp tables %v, terminate backends %v",
			super, createRole, publicConnect, publicTemp, terminate)
	}
	admin, err := pgx.Connect(ctx, testenv.AdminURL(t, u))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var adminDB string
	if err := admin.QueryRow(ctx, `SELECT current_database() FROM pg_roles WHERE rolname = current_user AND rolsuper`).Scan(&adminDB); err != nil || adminDB != db {
		t.Fatalf("AdminURL: %s, %v; want a superuser in %s", adminDB, err, db)
	}
}

// A server given by SUITEGEN_TEST_DATABASE_URL: the binary makes its own
// application role and template there and leaves nothing behind.
func TestGivenServerLeavesNothingBehind(t *testing.T) {
	if os.Getenv("SUITEGEN_TEST_DATABASE_URL") != "" {
		t.Skip("the child run")
	}
	ctx := context.Background()
	// A superuser the child reaches over TCP, as it would a server of its
	// own (the embedded server's own superuser never logs in over TCP).
	app, err := url.Parse(testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, testenv.AdminURL(t, app.String()))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	pw, _ := app.User.Password()
	if _, err := admin.Exec(ctx, `CREATE ROLE given_super LOGIN SUPERUSER PASSWORD '`+pw+`'`); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(ctx, `DROP ROLE given_super`) //nolint:errcheck // the cluster is the test binary's
	u := *app
	u.User = url.UserPassword("given_super", pw)
	u.Path = "/postgres"
	cmd := exec.Command(os.Args[0], "-test.run=^(TestPostgresIsTheApplicationRole|TestPostgresGivesEachTestItsOwnMigratedDatabase)$", "-test.v")
	cmd.Env = append(os.Environ(), "SUITEGEN_TEST_DATABASE_URL="+u.String())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPostgresIsTheApplicationRole") {
		t.Fatalf("child run on the given server: %v\n%s", err, out)
	}
	var roles, dbs int
	if err := admin.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_roles WHERE rolname LIKE 'sgtest\_%'),
		(SELECT count(*) FROM pg_database WHERE datname LIKE 'suitegen\_tmpl\_sgtest%' OR datname LIKE 't' || $1 || '\_%')`,
		strconv.Itoa(cmd.Process.Pid)).Scan(&roles, &dbs); err != nil {
		t.Fatal(err)
	}
	if roles != 0 || dbs != 0 {
		t.Fatalf("the child left %d roles and %d databases", roles, dbs)
	}
}

// TestNATSCluster: a 3-server cluster holds a stream on all three.
func TestNATSCluster(t *testing.T) {
	u := testenv.NATSCluster(t, 3)
	if n := strings.Count(u, ",") + 1; n != 3 {
		t.Fatalf("cluster URL %q lists %d servers, want 3", u, n)
	}
	nc, err := nats.Connect(u)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream cluster info %+v: want a leader and two replicas", info.Cluster)
	}
}

// recorder keeps what a helper reports instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// SameFiles names the first differing line of a file and a file one set
// lacks, and says nothing of equal sets.
func TestSameFiles(t *testing.T) {
	a := map[string][]byte{"x.json": []byte("a\nb\nc"), "y.json": []byte("y")}
	b := map[string][]byte{"x.json": []byte("a\nB\nc"), "y.json": []byte("y"), "z.json": nil}
	r := &recorder{TB: t}
	testenv.SameFiles(r, a, b, [2]string{"one", "three"})
	want := []string{`x.json differs between one and three at line 2: "b", "B"`, "z.json is written with three only"}
	if !slices.Equal(r.errs, want) {
		t.Fatalf("reported %q, want %q", r.errs, want)
	}
	r.errs = nil
	testenv.SameFiles(r, a, a, [2]string{"one", "three"})
	if len(r.errs) > 0 {
		t.Fatalf("equal sets reported %q", r.errs)
	}
}
