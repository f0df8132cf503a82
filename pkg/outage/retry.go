package outage

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"
)

// Backoff is how a start-up step is tried again while its server is out of
// reach: first after First, each wait doubled up to Max, no try begun past
// Timeout from the first.
type Backoff struct {
	First, Max time.Duration
	// Timeout bounds the whole; 0 or less means a single try.
	Timeout time.Duration
}

// Retry calls f until it succeeds, fails with an error that is no outage
// (Is), ctx ends, or the next try would begin past b.Timeout; the last
// error is returned. A try that ran out of a deadline of its own (a request
// timeout inside f) while ctx lives counts as an outage: the server did not
// answer in time, as a server starting or electing does not.
func (b Backoff) Retry(ctx context.Context, log *slog.Logger, what string, f func(context.Context) error) error {
	first := cmp.Or(b.First, 250*time.Millisecond)
	maxWait := max(cmp.Or(b.Max, 10*time.Second), first)
	deadline := time.Now().Add(b.Timeout)
	wait := first
	for {
		err := f(ctx)
		if err == nil || b.Timeout <= 0 || ctx.Err() != nil || !(Is(err) || errors.Is(err, context.DeadlineExceeded)) {
			return err
		}
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		if log != nil {
			log.Warn(what+": the server is not ready; trying again", "err", err, "in", wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, maxWait)
	}
}
