package run

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// outageModel holds its first call until go1 is closed and answers it
// without a tool call; every later call finishes the slice.
type outageModel struct {
	first, go1 chan struct{}
	mu         sync.Mutex
	calls      int
}

func (m *outageModel) Name() string { return "outage" }
func (m *outageModel) Complete(ctx context.Context, _ model.Request) (model.Response, error) {
	m.mu.Lock()
	m.calls++
	n := m.calls
	m.mu.Unlock()
	if n == 1 {
		close(m.first)
		select {
		case <-ctx.Done():
			return model.Response{}, ctx.Err()
		case <-m.go1:
		}
		return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "thinking"}}, nil
	}
	return model.Response{Message: model.Message{Role: model.RoleAssistant,
		ToolCalls: []model.ToolCall{{ID: "call_1", Name: brief.ToolFinish, Arguments: "{}"}}}}, nil
}

// TestOutageSpendsNoDelivery: PostgreSQL stops while a writer holds a
// slice; the writer pauses on the delivery, and once PostgreSQL is back on
// its data it finishes the slice on that same delivery: the ledger records
// it done after one delivery, and no slice is dead.
func TestOutageSpendsNoDelivery(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pgDir := filepath.Join(testenv.ServerDir(t), "pg")
	pg, err := stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: pgDir, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	port, dbURL := pg.Port(), pg.URL()

	m := &outageModel{first: make(chan struct{}), go1: make(chan struct{})}
	paused := testenv.NewLogSignal("an outage paused the writer")
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Dirs: []string{"../../examples/retail"}, Asked: 2, Writers: 1, Out: t.TempDir(),
			RunID: "outage", Client: m, DatabaseURL: dbURL, NATSURL: testenv.NATS(t), Logger: slog.New(paused)})
		done <- err
	}()
	<-m.first // a writer holds a slice and waits on the model
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	close(m.go1) // the answer's spend cannot be metered: an outage
	<-paused.Seen()
	if pg, err = stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: pgDir, Port: port, Fast: true}); err != nil {
		t.Fatal(err)
	}

	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := ledger.New(pool)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		slices, err := store.Slices(ctx, "outage", -1)
		finished := 0
		for _, s := range slices {
			switch s.State {
			case ledger.SliceDone:
				finished++
				if s.Deliveries != 1 {
					t.Errorf("slice %s done after %d deliveries, want 1", s.ID, s.Deliveries)
				}
			case ledger.SliceDead:
				t.Errorf("slice %s dead: %s", s.ID, s.Reason)
			}
		}
		if err == nil && finished > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slice finished two minutes after the database came back (%v): %+v", err, slices)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	<-done
}
