package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"

	"github.com/suitegen/suitegen/internal/wire"
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/testenv"
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
	q, err := queue.Connect(ctx, queue.Config{URL: ns.URL(), OpTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()

	ready := wire.Ready(ctx, wire.Dependencies(canvas.New(pool), q))
	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewReady("planner", ready))
	mux := metrics.Mux(reg, ready)
	// Both /readyz and the gauge must say want.
	await := func(want bool, what string) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
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
