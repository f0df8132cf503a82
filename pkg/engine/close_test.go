package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/world"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// ledgerFiles is the ledger as a Cache sees it: contract files by hash.
type ledgerFiles map[string]map[string][]byte

func (l ledgerFiles) ContractFiles(_ context.Context, sha string) (map[string][]byte, error) {
	if f, ok := l[sha]; ok {
		return f, nil
	}
	return nil, errors.New("no such contract")
}

func loadRetail(t *testing.T) *contract.Contract {
	t.Helper()
	c, err := contract.LoadValid("../../examples/retail")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sessions counts the database sessions of a world's login role.
func sessions(t *testing.T, pool *pgxpool.Pool, w *world.World) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND datname = current_database()`, w.Role()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sessionsAfterClose waits for the server to end the sessions a client
// closed (their backends exit after the client's Terminate) and returns
// how many are left when they stop going down or a minute passed.
func sessionsAfterClose(t *testing.T, pool *pgxpool.Pool, w *world.World) int {
	t.Helper()
	n := sessions(t, pool, w)
	for deadline := time.Now().Add(time.Minute); n > 0 && time.Now().Before(deadline); n = sessions(t, pool, w) {
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// useWorld runs a copy, which leaves an idle session of the world's role.
func useWorld(t *testing.T, e *Engine) {
	t.Helper()
	if err := e.World.Copy(context.Background(), func(cp *world.Copy) error {
		_, err := cp.Query(context.Background(), "SELECT 1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCloseReleasesTheWorld: an engine holds sessions of its world's role
// until Close, which leaves no goroutine behind and may be called again.
func TestCloseReleasesTheWorld(t *testing.T) {
	pool := testenv.Postgres(t)
	c := loadRetail(t)
	before := goleak.IgnoreCurrent()
	e, err := Open(context.Background(), pool, c)
	if err != nil {
		t.Fatal(err)
	}
	useWorld(t, e)
	if n := sessions(t, pool, e.World); n == 0 {
		t.Fatal("an engine that ran a copy holds no session of its world: the test shows nothing")
	}
	e.Close()
	e.Close()
	if n := sessionsAfterClose(t, pool, e.World); n != 0 {
		t.Errorf("%d session(s) of the world's role left after Close", n)
	}
	goleak.VerifyNone(t, before)
}

// TestCacheClose: a cache closes the engines it built and those given to
// it, answers ErrClosed afterwards, and closes what is put into it then.
func TestCacheClose(t *testing.T) {
	pool := testenv.Postgres(t)
	c := loadRetail(t)
	before := goleak.IgnoreCurrent()
	cache := NewCache(pool, ledgerFiles{c.SHA256: c.Files})
	built, err := cache.Get(context.Background(), c.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	useWorld(t, built)
	if n := sessions(t, pool, built.World); n == 0 {
		t.Fatal("a cached engine that ran a copy holds no session: the test shows nothing")
	}
	cache.Close()
	cache.Close()
	if n := sessionsAfterClose(t, pool, built.World); n != 0 {
		t.Errorf("%d session(s) of the world's role left after the cache closed", n)
	}
	if _, err := cache.Get(context.Background(), c.SHA256); !errors.Is(err, ErrClosed) {
		t.Errorf("Get on a closed cache: %v, want ErrClosed", err)
	}

	late, err := Open(context.Background(), pool, c)
	if err != nil {
		t.Fatal(err)
	}
	useWorld(t, late)
	cache.Put(late)
	if n := sessionsAfterClose(t, pool, late.World); n != 0 {
		t.Errorf("an engine put into a closed cache kept %d session(s)", n)
	}
	// A closed pgx connection's background reader ends once its read
	// returns, after Close has: waiting for it would race the clock. The
	// sessions are counted on the server above instead.
	goleak.VerifyNone(t, before, goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgconn/internal/bgreader.(*BGReader).bgRead"))
}

// TestCachePutIsOwned: an engine given by Put is closed with the cache.
func TestCachePutIsOwned(t *testing.T) {
	pool := testenv.Postgres(t)
	c := loadRetail(t)
	e, err := Open(context.Background(), pool, c)
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache(pool, ledgerFiles{})
	cache.Put(e)
	got, err := cache.Get(context.Background(), c.SHA256)
	if err != nil || got != e {
		t.Fatalf("Get after Put: %p, %v; want the engine put", got, err)
	}
	useWorld(t, e)
	cache.Close()
	if n := sessionsAfterClose(t, pool, e.World); n != 0 {
		t.Errorf("%d session(s) of a put engine's world left after the cache closed", n)
	}
}
