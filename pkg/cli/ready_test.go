package cli

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/queue/jetstream"
	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/wire"
)

// TestReadinessFollowsTheServers: a role's readiness (/readyz and the
// suitegen_ready gauge, as the planner, reviewer and writer serve them)
// turns false when its database goes away, true again when the database
// returns on its data, and false when the queue goes away. Each change is
// polled for under a generous deadline; nothing waits a fixed time.
func TestReadinessFollowsTheServers(t *testing.T) {
	ctx := t.Context()
	pgDir := filepath.Join(testenv.ServerDir(t), "pg")
	pg, err := stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: pgDir, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	port := pg.Port()
	pool, err := pgxpool.New(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ns, err := stack.StartNATS(stack.NATSConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	q, err := jetstream.Connect(ctx, queue.Config{URL: ns.URL(), OpTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()

	ready := wire.Ready(ctx, wire.Dependencies(ledger.New(pool), q))
	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewReady("planner", ready))
	mux := metrics.Mux(reg, ready)
	// Both /readyz and the gauge must say want.
	await := func(want bool, what string) {
		t.Helper()
		deadline := time.Now().Add(testenv.Patience)
		for {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			gauge := readyGauge(t, reg) == 1
			if (rec.Code == http.StatusOK) == want && gauge == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: /readyz %d %q, gauge ready=%v after 90s; want ready=%v", what, rec.Code, rec.Body.String(), gauge, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	await(true, "both servers up")
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	await(false, "database stopped")
	pg, err = stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: pgDir, Port: port, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	await(true, "database back")
	ns.Shutdown()
	await(false, "queue stopped")
}

// readyGauge reads suitegen_ready from reg.
func readyGauge(t *testing.T, reg interface {
	Gather() ([]*dto.MetricFamily, error)
}) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "suitegen_ready" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no suitegen_ready series")
	return 0
}

// TestReadinessFailsWithoutItsDependencies: the readiness the planner and
// reviewer serve is "starting" until they reach their servers, ready while
// the ledger's pool and the queue answer, and not ready, at the next check,
// once either is gone (a closed pool, a closed queue) or the queue was never
// connected. Each change is synchronous: nothing is waited for.
func TestReadinessFailsWithoutItsDependencies(t *testing.T) {
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	q, err := jetstream.Connect(ctx, queue.Config{URL: testenv.NATS(t), OpTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()

	var r readiness
	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewReady("planner", r.check))
	mux := metrics.Mux(reg, r.check)
	is := func(want bool, what string) {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		gauge := readyGauge(t, reg) == 1
		if (rec.Code == http.StatusOK) != want || gauge != want {
			t.Fatalf("%s: /readyz %d %q, gauge ready=%v; want ready=%v", what, rec.Code, rec.Body.String(), gauge, want)
		}
	}

	is(false, "before the servers are reached")
	if err := r.check(); !errors.Is(err, errStarting) {
		t.Fatalf("before the servers are reached: %v, want errStarting", err)
	}
	r.set(wire.Ready(ctx, wire.Dependencies(ledger.New(pool), nil)))
	is(false, "a queue not connected yet")
	r.set(wire.Ready(ctx, wire.Dependencies(ledger.New(pool), q)))
	is(true, "both servers answer")

	pool.Close()
	is(false, "the ledger's pool closed")
	other, err := pgxpool.New(ctx, testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	r.set(wire.Ready(ctx, wire.Dependencies(ledger.New(other), q)))
	is(true, "a pool that answers")

	q.Close()
	is(false, "the queue closed")
	if err := r.check(); !errors.Is(err, queue.ErrClosed) {
		t.Fatalf("the queue closed: %v, want queue.ErrClosed", err)
	}
}
