package cli

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/suitegen/suitegen/internal/wire"
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/progress"
)

func init() {
	register(command{"serve", "[--addr ADDR] [--database URL] [--token T]", "serve the progress page and API over a ledger", cmdServe})
}

func cmdServe(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen serve", "[--addr ADDR] [--database URL] [--token T]",
		"Serve the live progress page (GET /) and its read-only JSON API (GET /api/runs, /api/runs/{id}) over the\nledger at --database, until signalled. Any number of these may run beside the planners and writers.")
	addr := f.str("addr", ":8080", "listen address")
	database := f.str("database", env.Getenv("SUITEGEN_DATABASE_URL"), "PostgreSQL URL of the ledger (required)")
	databaseFile := f.str("database-url-file", "", "read the PostgreSQL URL from this file (e.g. a mounted secret); used when --database is empty")
	token := f.str("token", "", "bearer token that state-changing endpoints will require (every endpoint today is read-only)")
	if _, err := f.parse(args); err != nil {
		return err
	}
	cn := conn{database: database, databaseFile: databaseFile}
	url, err := cn.databaseURL()
	if err != nil {
		return &UsageError{err.Error()}
	}
	if url == "" {
		return &UsageError{"--database (or SUITEGEN_DATABASE_URL) is required: serve reads an existing ledger"}
	}
	pool, err := engine.Pool(ctx, url, 1)
	if err != nil {
		return err
	}
	defer pool.Close()
	// The schema the API reads, so serve may start before the first planner.
	if err := migrate.Apply(ctx, pool); err != nil {
		return err
	}
	store := canvas.New(pool)
	return wire.ServeProgress(ctx, *addr, store, progress.Options{Token: *token, Logger: env.Log}, func(a net.Addr) {
		fmt.Fprintf(env.Stdout, "progress page on http://%s/ (API at /api/runs)\n", a)
	})
}

// serveProgress serves the progress page and API on addr in the background
// and returns the function that stops it and waits (defer it before the
// store's pool closes).
func serveProgress(ctx context.Context, env *Env, addr string, store *canvas.Store) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := wire.ServeProgress(ctx, addr, store, progress.Options{Logger: env.Log}, func(a net.Addr) {
			env.Log.Info("progress page", "url", "http://"+a.String()+"/")
		}); err != nil && !errors.Is(err, context.Canceled) {
			env.Log.Error("progress server", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}
