package run

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestRunWaitsForTheDatabase: `suitegen run` against a database that is
// down when it starts (restarting, failing over) tries again within its
// --startup-timeout and writes the suite once the database answers.
func TestRunWaitsForTheDatabase(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pgDir := filepath.Join(testenv.ServerDir(t), "pg")
	pg, err := stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: pgDir, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	port, dbURL := pg.Port(), pg.URL()
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h := testenv.NewLogSignal("database: the server is not ready")
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Dirs: []string{filepath.Join("..", "..", "examples", "retail")}, Asked: 2, Writers: 1,
			Out: t.TempDir(), Seed: 7, NATSURL: testenv.NATS(t), DatabaseURL: dbURL, Logger: slog.New(h),
			Queue: queue.Config{StartupTimeout: 2 * time.Minute}})
		done <- err
	}()
	select {
	case <-h.Seen(): // it met the database down
	case err := <-done:
		t.Fatalf("the run ended without waiting for its database: %v", err)
	}
	pg, err = stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: pgDir, Port: port, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the run did not go on once the database answered: %v", err)
	}
}
