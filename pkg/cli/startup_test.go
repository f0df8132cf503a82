package cli

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestRoleWaitsForTheDatabase: a distributed role started while its
// database is down (a failover, a server restarting) waits for it within
// --startup-timeout and starts once it answers, instead of exiting.
func TestRoleWaitsForTheDatabase(t *testing.T) {
	ctx := t.Context()
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
	env := &Env{Getenv: func(string) string { return "" }, Log: slog.New(h)}
	f := newFlags(env, "writer", "", "")
	cn := f.roleConn()
	if _, err := f.parse([]string{"--nats", testenv.NATS(t), "--database", dbURL}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		in  *infra
		err error
	}
	done := make(chan result, 1)
	go func() {
		in, err := openInfra(ctx, env, cn)
		done <- result{in, err}
	}()
	<-h.Seen() // it met the database down
	pg, err = stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: pgDir, Port: port, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("the role did not start once the database answered: %v", r.err)
	}
	defer r.in.close(ctx)
	q, err := r.in.queue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
}

// TestCommandFailsFastWithoutItsDatabase: a command run by hand
// (--startup-timeout 0 by default) fails at once when the database is out
// of reach.
func TestCommandFailsFastWithoutItsDatabase(t *testing.T) {
	env := &Env{Getenv: func(string) string { return "" }, Log: discard()}
	f := newFlags(env, "validate", "", "")
	cn := f.conn()
	if _, err := f.parse([]string{"--nats", "nats://127.0.0.1:1", "--database", "postgres://x:y@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"}); err != nil {
		t.Fatal(err)
	}
	if in, err := openInfra(t.Context(), env, cn); err == nil {
		in.close(t.Context())
		t.Fatal("openInfra succeeded without a database")
	}
}
