package writer

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/suitegen/suitegen/pkg/outage"
)

// An outage of the ledger, the world's database or the queue is not the
// model's business, nor the slice's: a rehearsal, proof or journal write
// that fails because a server went away must not reach the conversation,
// where a model (and the builtin) would take it as the record failing and
// write something else, and it must not spend one of the slice's deliveries.
// The session stops instead and the writer pauses: it keeps the delivery
// (its heartbeat holds it on the queue), takes nothing new, and waits with
// backoff until its servers answer (Config.Dependencies); then it writes the
// slice again on the same delivery, picking up from the journal.
//
// What an outage is, is outage.Is's to say (the prover asks it too).

// outageError ends a session on an infrastructure failure.
type outageError struct{ err error }

func (e *outageError) Error() string {
	return "writer: database unavailable; pausing until it answers: " + e.err.Error()
}
func (e *outageError) Unwrap() error { return e.err }

// isOutage: a slice's work ended on an outage, seen by a tool or the budget
// meter (outageError) or by the writer's own reads. A model call that kept
// failing is the provider's trouble, not one (modelError).
func isOutage(err error) bool {
	var oe *outageError
	var me *modelError
	switch {
	case errors.As(err, &oe):
		return true
	case errors.As(err, &me):
		return false
	}
	return outage.Is(err)
}

// maxUnprovenOutages bounds how often one delivery is written again after an
// "outage" while the dependencies answered at the first probe every time:
// past it the error is the slice's, whatever its type says, so a slice that
// keeps failing that way is released like any failed slice instead of held
// for ever.
const maxUnprovenOutages = 3

// writeThrough writes the slice, pausing through outages on the same
// delivery. stop is closed when the writer is stopping: a paused slice is
// then released at once rather than after the drain period.
func (w *Writer) writeThrough(ctx context.Context, stop <-chan struct{}, log *slog.Logger, d Delivery) error {
	unproven := 0
	for {
		err := w.writeSlice(ctx, d)
		if err == nil {
			w.cfg.Up.Signal() // its ledger writes went through: the servers answer
		}
		if !isOutage(err) || ctx.Err() != nil {
			return err
		}
		w.cfg.Metrics.For(d.Slice().Run).OutagePauses.Inc()
		log.Warn("an outage paused the writer; holding the slice until its servers answer", "err", err)
		down, ok := w.await(ctx, stop, log)
		if !ok {
			return err // stopping: released as on any shutdown
		}
		if down {
			unproven = 0
		} else if unproven++; unproven >= maxUnprovenOutages {
			log.Warn("the slice keeps failing as in an outage while the servers answer; releasing it", "err", err)
			return err
		}
		log.Info("the servers answer again; writing the slice again on the same delivery")
	}
}

// await waits, with backoff, until the writer's dependencies answer: at
// least one backoff step, then a probe after each. Each wait is drawn
// between half and all of the step (outage.Jitter), so writers paused
// together do not probe together, and a probe comes at once when another
// writer of the process sees the servers answer (Config.Up). down reports
// that a probe failed on the way (the outage was seen); ok is false when ctx
// ended or stop was closed first.
func (w *Writer) await(ctx context.Context, stop <-chan struct{}, log *slog.Logger) (down, ok bool) {
	wait := w.cfg.OutageBackoff
	for {
		up := w.cfg.Up.Wait()
		t, cancel := w.after(outage.Jitter(wait, w.jitter()))
		select {
		case <-ctx.Done():
			cancel()
			return down, false
		case <-stop:
			cancel()
			return down, false
		case <-up:
			cancel()
		case <-t:
		}
		err := w.probe(ctx)
		if err == nil {
			w.cfg.Up.Signal()
			return down, true
		}
		if ctx.Err() != nil {
			return down, false
		}
		down = true
		wait = min(2*wait, w.cfg.MaxOutageBackoff)
		log.Warn("the writer's servers do not answer yet", "err", err, "next", wait)
	}
}

// after is a timer on the wall clock: the channel fires after d; cancel
// stops it.
func after(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// probe asks the writer's dependencies whether they answer, each ask
// bounded so a server that hangs counts as down.
func (w *Writer) probe(ctx context.Context) error {
	if w.cfg.Dependencies == nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, w.cfg.ProbeTimeout)
	defer cancel()
	return w.cfg.Dependencies(pctx)
}

// untilUp runs f, and again after each outage once the dependencies answer,
// until it succeeds, fails otherwise, or ctx ends.
func (w *Writer) untilUp(ctx context.Context, log *slog.Logger, f func(context.Context) error) error {
	for {
		err := f(ctx)
		if err == nil || !outage.Is(err) || ctx.Err() != nil {
			return err
		}
		log.Warn("an outage paused the writer; waiting for its servers to answer", "err", err)
		if _, ok := w.await(ctx, nil, log); !ok {
			return err
		}
	}
}
