package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/scram"
	"github.com/suitegen/suitegen/pkg/stack"
)

// Patience is how long a test waits for something that must happen (a
// server to listen, a slice to be written, a count to settle) before it
// calls the program hung. It is long on purpose: tests run on busy
// machines, where a wait that ends early fails a right program; the
// package's -timeout stays the last word.
const Patience = 15 * time.Minute

// Option adjusts Main.
type Option func(*mainOptions)

type mainOptions struct {
	leakCheck bool
	leakOpts  []goleak.Option
}

// IgnoreLeaks passes options (e.g. goleak.IgnoreTopFunction) to the leak check.
func IgnoreLeaks(opts ...goleak.Option) Option {
	return func(o *mainOptions) { o.leakOpts = append(o.leakOpts, opts...) }
}

// NoLeakCheck turns the goroutine leak check off.
func NoLeakCheck() Option {
	return func(o *mainOptions) { o.leakCheck = false }
}

var mainActive atomic.Bool

// Main runs the tests, stops the shared cluster and removes its files, then
// (if the tests passed) fails the binary when goroutines are left over, and
// exits. Call it from TestMain.
func Main(m *testing.M, opts ...Option) {
	o := mainOptions{leakCheck: true}
	for _, opt := range opts {
		opt(&o)
	}
	mainActive.Store(true)
	code := m.Run()
	if err := shutdown(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: shutdown: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if code == 0 && o.leakCheck {
		// Keep-alive connections that tests' http.Get left in the default
		// transport are idle, not leaked: close them (their servers' read
		// loops end with them) before looking.
		http.DefaultClient.CloseIdleConnections()
		if err := goleak.Find(o.leakOpts...); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: goroutines leaked by the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// cluster is the binary's shared server and its migrated template.
type cluster struct {
	pg       *stack.Postgres // nil when SUITEGEN_TEST_DATABASE_URL is used
	dir      string
	base     *url.URL      // the application role's URL; Path is replaced per database
	adminURL *url.URL      // a superuser's URL; Path is replaced per database
	admin    *pgxpool.Pool // on the server's maintenance database, for CREATE/DROP
	app      string        // the application role tests connect as
	ownApp   bool          // the role was made for this binary: dropped at shutdown
	template string
}

var (
	clusterMu   sync.Mutex
	shared      *cluster
	sharedErr   error
	dbSeq       atomic.Int64
	quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))
)

func logger() *slog.Logger {
	if os.Getenv("SUITEGEN_TEST_VERBOSE") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return quietLogger
}

// getCluster starts (once) and returns the shared cluster. A failed start is
// remembered so every test reports it without retrying.
func getCluster(t testing.TB) *cluster {
	t.Helper()
	if !mainActive.Load() {
		t.Fatal("testenv: TestMain must call testenv.Main(m), which stops the shared servers")
	}
	clusterMu.Lock()
	defer clusterMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = startCluster(context.Background())
	}
	if sharedErr != nil {
		t.Fatalf("testenv: postgres: %v", sharedErr)
	}
	return shared
}

func startCluster(ctx context.Context) (_ *cluster, err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c := &cluster{}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.close())
		}
	}()
	if raw := os.Getenv("SUITEGEN_TEST_DATABASE_URL"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, fmt.Errorf("SUITEGEN_TEST_DATABASE_URL must be a postgres:// URL")
		}
		c.adminURL = u
		if c.admin, err = pgxpool.New(ctx, u.String()); err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		if err := c.makeApp(ctx); err != nil {
			return nil, err
		}
	} else {
		dir, err := os.MkdirTemp("", "suitegen-testenv-")
		if err != nil {
			return nil, err
		}
		c.dir = dir
		// Run as root, the server runs as the postgres user, which must be
		// able to enter this directory (its own: nothing else changes).
		if err := os.Chmod(dir, 0o711); err != nil {
			return nil, err
		}
		c.pg, err = stack.StartPostgres(ctx, stack.PostgresConfig{
			DataDir: dir + "/pg",
			Fast:    true,
			Logger:  logger(),
		})
		if err != nil {
			return nil, err
		}
		c.base, _ = url.Parse(c.pg.URL())
		c.adminURL, _ = url.Parse(c.pg.AdminURL("postgres"))
		c.app = c.pg.AppRole()
		if c.admin, err = pgxpool.New(ctx, c.adminURL.String()); err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
	}
	c.template, err = c.buildTemplate(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// makeApp makes, on a server given by URL, the application role this
// binary's tests connect as: like the one a DBA makes (docs/SECURITY.md),
// with a name of its own so binaries sharing the server never share it.
func (c *cluster) makeApp(ctx context.Context) error {
	pw, err := scram.Password()
	if err != nil {
		return err
	}
	v, err := scram.Verifier(pw)
	if err != nil {
		return err
	}
	c.app = fmt.Sprintf("sgtest_%d_%s", os.Getpid(), pw[:8])
	if _, err := c.admin.Exec(ctx, "CREATE ROLE "+ident(c.app)+" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '"+v+"'"); err != nil {
		return fmt.Errorf("create role %s: %w", c.app, err)
	}
	c.ownApp = true
	u := *c.adminURL
	u.User = url.UserPassword(c.app, pw)
	c.base = &u
	return nil
}

// buildTemplate makes a set-up, migrated database to copy, named by the
// migrations' hash (and, on a server given by URL, by the application
// role, who owns what it holds). An advisory lock keeps test binaries
// sharing a server from building it twice; building under a temporary name
// and renaming means a half-built template is never used.
func (c *cluster) buildTemplate(ctx context.Context) (string, error) {
	h := sha256.New()
	for _, m := range migrate.All() {
		fmt.Fprintf(h, "%d %s %d\n%s\n", m.Version, m.Name, len(m.SQL), m.SQL)
	}
	fmt.Fprintf(h, "setup\n%s\n", migrate.SetupSQL("x", c.app))
	name := "suitegen_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16]
	if c.ownApp {
		name = "suitegen_tmpl_" + c.app
	}

	conn, err := c.admin.Acquire(ctx)
	if err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	defer conn.Release()
	const lockKey int64 = 0x7375697465746d70 // "suitetmp"
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return "", fmt.Errorf("lock template: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey) //nolint:errcheck // the session ends with the pool anyway

	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", fmt.Errorf("look up template: %w", err)
	}
	if exists {
		return name, nil
	}
	build := fmt.Sprintf("%s_build", name)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(build)+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("drop stale template build: %w", err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident(build)+" TEMPLATE template0 OWNER "+ident(c.app)); err != nil {
		return "", fmt.Errorf("create template: %w", err)
	}
	admin, err := pgx.Connect(ctx, c.adminURLFor(build))
	if err != nil {
		return "", fmt.Errorf("connect to template: %w", err)
	}
	err = migrate.Setup(ctx, admin, build, c.app)
	admin.Close(context.WithoutCancel(ctx))
	if err != nil {
		return "", fmt.Errorf("set up template: %w", err)
	}
	pool, err := pgxpool.New(ctx, c.urlFor(build))
	if err != nil {
		return "", fmt.Errorf("connect to template: %w", err)
	}
	err = migrate.Apply(ctx, pool)
	pool.Close()
	if err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	// RENAME needs the build database idle; FORCE-drop semantics are not
	// available for ALTER, so end any lingering sessions first.
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, build); err != nil {
		return "", fmt.Errorf("end template sessions: %w", err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident(build)+" RENAME TO "+ident(name)); err != nil {
		return "", fmt.Errorf("publish template: %w", err)
	}
	return name, nil
}

func (c *cluster) urlFor(db string) string {
	u := *c.base
	u.Path = "/" + db
	return u.String()
}

func (c *cluster) adminURLFor(db string) string {
	u := *c.adminURL
	u.Path = "/" + db
	return u.String()
}

func (c *cluster) close() error {
	if c.admin != nil {
		if c.ownApp {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			var err error
			for _, db := range []string{"suitegen_tmpl_" + c.app, "suitegen_tmpl_" + c.app + "_build"} {
				if err == nil {
					_, err = c.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(db)+" WITH (FORCE)")
				}
			}
			if err == nil {
				_, err = c.admin.Exec(ctx, "DROP ROLE IF EXISTS "+ident(c.app))
			}
			cancel()
			if err != nil {
				fmt.Fprintf(os.Stderr, "testenv: drop role %s: %v\n", c.app, err)
			}
		}
		c.admin.Close()
	}
	var err error
	if c.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = c.pg.Stop(ctx)
		cancel()
	}
	if c.dir != "" {
		err = errors.Join(err, os.RemoveAll(c.dir))
	}
	return err
}

func shutdown() error {
	clusterMu.Lock()
	defer clusterMu.Unlock()
	if shared == nil {
		return nil
	}
	err := shared.close()
	shared = nil
	return err
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)

// newDatabase creates a database copied from template (empty: template0),
// owned by the application role and closed to PUBLIC like a set-up one,
// registers its FORCE drop at cleanup and returns its URL.
func newDatabase(t testing.TB, c *cluster, template string) string {
	t.Helper()
	// pid and sequence keep names unique across binaries sharing a server;
	// the test name is there for whoever reads pg_database.
	hint := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "_"), "_")
	name := fmt.Sprintf("t%d_%d_%s", os.Getpid(), dbSeq.Add(1), hint)
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "_")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The database ACL is not copied from the template.
	if _, err := c.admin.Exec(ctx, "CREATE DATABASE "+ident(name)+" TEMPLATE "+ident(template)+" OWNER "+ident(c.app)); err != nil {
		t.Fatalf("testenv: create database %s: %v", name, err)
	}
	if _, err := c.admin.Exec(ctx, "REVOKE ALL ON DATABASE "+ident(name)+" FROM PUBLIC"); err != nil {
		t.Fatalf("testenv: close database %s: %v", name, err)
	}
	var oid uint32
	if err := c.admin.QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = $1`, name).Scan(&oid); err != nil {
		t.Fatalf("testenv: database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := c.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); err != nil {
			t.Errorf("testenv: drop database %s: %v", name, err)
			return
		}
		if c.pg == nil {
			// A server given by URL outlives the binary: the roles the
			// database's worlds made go with it.
			if err := dropWorldRoles(ctx, c.admin, oid); err != nil {
				t.Errorf("testenv: drop world roles of %s: %v", name, err)
			}
		}
	})
	return c.urlFor(name)
}

// dropWorldRoles drops the login roles of the worlds of a dropped database
// (pkg/world names them w_<hash>_o<oid> and w_<hash>_r<oid>).
func dropWorldRoles(ctx context.Context, admin *pgxpool.Pool, oid uint32) error {
	rows, err := admin.Query(ctx, `SELECT rolname FROM pg_roles WHERE rolname ~ ('^w_[0-9a-f]{16}_[or]' || $1 || '$')`, strconv.FormatUint(uint64(oid), 10))
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := admin.Exec(ctx, "DROP ROLE IF EXISTS "+ident(n)); err != nil {
			return err
		}
	}
	return nil
}

// Postgres gives the test its own database, with the embedded migrations
// applied, as a pool closed and a database dropped at cleanup.
func Postgres(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return pool(t, PostgresURL(t))
}

// PostgresURL is Postgres as a URL, for subprocesses or custom pools. The
// database is dropped WITH (FORCE) at cleanup, ending any sessions still on it.
func PostgresURL(t testing.TB) string {
	t.Helper()
	c := getCluster(t)
	return newDatabase(t, c, c.template)
}

// EmptyPostgresURL gives the test its own database with no migrations
// applied and no setup (copied from template0), dropped at cleanup: for
// testing migrations.
func EmptyPostgresURL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, getCluster(t), "template0")
}

// AdminURL is a superuser's URL of the database a URL from this package
// names: for tests that must look where the application role cannot.
func AdminURL(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return getCluster(t).adminURLFor(strings.TrimPrefix(u.Path, "/"))
}

// ServerDir is a new directory, removed at cleanup, that a PostgreSQL
// started by pkg/stack may keep its data in where it is: run as root, the
// server runs as the postgres user, who cannot enter t.TempDir() (a data dir
// there would be placed in that user's home).
func ServerDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "suitegen-server-")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// pool opens a pool on u that is closed at cleanup, before the database
// is dropped.
func pool(t testing.TB, u string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatalf("testenv: open pool: %v", err)
	}
	t.Cleanup(p.Close) // runs before the drop registered earlier
	return p
}

// NATS gives the test its own JetStream server (temporary store, free port),
// shut down at cleanup, and returns its client URL.
func NATS(t testing.TB) string {
	t.Helper()
	n, err := stack.StartNATS(stack.NATSConfig{StoreDir: t.TempDir(), Logger: logger()})
	if err != nil {
		t.Fatalf("testenv: nats: %v", err)
	}
	t.Cleanup(n.Shutdown)
	return n.URL()
}

func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

// planCache are the variables that name the plan cache (pkg/plan's
// EnvCacheDir and EnvCacheBuild): make test points every test binary at one,
// so that a command a test runs reads the plans other tests derived.
var planCache = []string{"SUITEGEN_PLAN_CACHE", "SUITEGEN_PLAN_CACHE_BUILD"}

// Getenv is a command's environment lookup that points it at servers of
// the test's own: SUITEGEN_DATABASE_URL a database of its own, made on
// first lookup, and SUITEGEN_NATS_URL a JetStream server of its own. The
// plan cache's variables are the process's; every other variable is unset.
func Getenv(t testing.TB) func(string) string {
	var (
		mu       sync.Mutex
		db, nats string
	)
	return func(k string) string {
		mu.Lock()
		defer mu.Unlock()
		switch k {
		case "SUITEGEN_DATABASE_URL":
			if db == "" {
				db = PostgresURL(t)
			}
			return db
		case "SUITEGEN_NATS_URL":
			if nats == "" {
				nats = NATS(t)
			}
			return nats
		}
		if slices.Contains(planCache, k) {
			return os.Getenv(k)
		}
		return ""
	}
}
