package wire

import (
	"context"
	"errors"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/queue/jetstream"
)

// ReadyTimeout bounds one readiness check: a server that does not answer
// within it counts as down.
const ReadyTimeout = 3 * time.Second

var errNoQueue = errors.New("queue: not connected yet")

// Dependencies is what every role needs of its servers: the ledger's
// database reachable and writable (ledger.Store.Ready) and the queue
// reachable (jetstream.Queue.Ready). A writer paused by an outage asks it before
// it works again; Ready answers /readyz with it.
func Dependencies(store *ledger.Store, q *jetstream.Queue) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := store.Ready(ctx); err != nil {
			return err
		}
		if q == nil {
			return errNoQueue
		}
		return q.Ready(ctx)
	}
}

// Ready is a role's readiness (/readyz, suitegen_ready): its dependencies,
// bounded by ReadyTimeout and ctx (a stopping process is not ready), then
// each of more (a writer's provider) in turn.
func Ready(ctx context.Context, deps func(context.Context) error, more ...func() error) func() error {
	return func() error {
		cctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
		defer cancel()
		if err := deps(cctx); err != nil {
			return err
		}
		for _, f := range more {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
}
