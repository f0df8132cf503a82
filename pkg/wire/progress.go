package wire

import (
	"context"
	"fmt"
	"net"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/progress"
)

// ServeProgress serves the progress page and API (progress.Handler over the
// ledger) on addr until ctx ends, then shuts down. When listening is given, it
// is told the bound address (useful with port 0). It returns nil after a
// shutdown caused by ctx.
func ServeProgress(ctx context.Context, addr string, store *ledger.Store, opts progress.Options, listening func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("progress: listen %s: %w", addr, err)
	}
	if listening != nil {
		listening(ln.Addr())
	}
	if err := metrics.ServeHandler(ctx, ln, progress.Handler(store, opts)); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	return nil
}
