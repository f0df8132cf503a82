package planner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// await waits until every slice of the round is finished in the ledger. A
// slice still unfinished at the round timeout is recorded dead.
//
// Writers record a slice dead once its deliveries reach their bounds (a
// slice that kills its writers is recorded by the writer that finds enough
// of them lost). Should the queue's MaxDeliver, the backstop, run out
// first, no writer records it, so the planner learns of exhausted slices two ways:
// the server's max-deliveries advisory while it listens, and, for advisories
// sent while no planner listened (it was restarted), a queue that has held
// nothing pending or in flight for longer than two ack waits while the
// ledger still shows the round's slices published.
func (p *Planner) await(ctx context.Context, round int) error {
	deadline := time.Now().Add(p.cfg.RoundTimeout)
	t := time.NewTicker(p.cfg.Poll)
	defer t.Stop()
	lctx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	if err := p.cfg.Queue.DeadLetters(lctx, func(seq uint64) { p.deadLetter(lctx, seq) }); err != nil {
		p.log.Warn("not listening for dead letters; relying on the empty-queue check", "err", err)
	}
	qc := p.cfg.Queue.Config()
	quiet := 2*qc.AckWait + qc.FetchWait
	var emptySince, failingSince time.Time
	for {
		ss, err := p.cfg.Ledger.Slices(ctx, p.cfg.RunID, round)
		if err != nil {
			// The ledger restarting or failing over is not the end of the
			// run: keep polling for a while, as the writers do.
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if ctx.Err() != nil || time.Since(failingSince) > p.cfg.LedgerOutage {
				return err
			}
			p.log.Warn("reading the ledger failed; polling again", "err", err)
			if !tick(ctx, t) {
				return ctx.Err()
			}
			continue
		}
		failingSince = time.Time{}
		if published(ss) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return p.bury(ctx, ss, "no writer finished the slice within the round timeout")
		}
		if n, a, err := p.cfg.Queue.Pending(ctx); err == nil {
			p.cfg.Metrics.SetQueue(n, a)
			switch {
			case n > 0 || a > 0:
				emptySince = time.Time{}
			case emptySince.IsZero():
				emptySince = time.Now()
			case time.Since(emptySince) > quiet:
				return p.bury(ctx, ss, fmt.Sprintf("dead-lettered: the queue gave up on the slice (no delivery acknowledged within %d deliveries); every delivery's writer died or went silent past the ack wait", qc.MaxDeliver))
			}
		} else {
			emptySince = time.Time{}
		}
		if !tick(ctx, t) {
			return ctx.Err()
		}
	}
}

func published(ss []ledger.Slice) int {
	n := 0
	for _, s := range ss {
		if s.State == ledger.SlicePublished {
			n++
		}
	}
	return n
}

// tick waits for the ticker; false when ctx ended first.
func tick(ctx context.Context, t *time.Ticker) bool {
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// fold folds the ledger, retrying through a ledger outage of up to
// LedgerOutage (Fold is one transaction, so a retry is safe).
func (p *Planner) fold(ctx context.Context, maxAttempts int) error {
	start := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		once := time.Now()
		_, err := p.cfg.Ledger.Fold(ctx, p.cfg.RunID, maxAttempts)
		if err == nil {
			p.folding.Time += time.Since(once)
			p.folding.Folds++
		}
		if err == nil || ctx.Err() != nil || time.Since(start) > p.cfg.LedgerOutage {
			return err
		}
		p.log.Warn("fold failed; retrying", "err", err)
		if !tick(ctx, t) {
			return ctx.Err()
		}
	}
}

// bury records every still-published slice of ss dead with reason. A slice
// a writer finished meanwhile stays as the writer left it.
func (p *Planner) bury(ctx context.Context, ss []ledger.Slice, reason string) error {
	for _, s := range ss {
		if s.State != ledger.SlicePublished {
			continue
		}
		err := p.cfg.Ledger.FinishSlice(ctx, p.cfg.RunID, s.ID, ledger.SliceDead, "", reason, s.Deliveries)
		var te *ledger.TransitionError
		if errors.As(err, &te) {
			continue // done after all
		}
		if err != nil {
			return err
		}
		p.cfg.Metrics.SlicesDeadLettered.Inc()
		p.log.Error("slice dead", "slice", s.ID, "reason", reason)
	}
	return nil
}

// deadLetter records in the ledger a slice of this run the queue gave up on
// after its last delivery (the server's max-deliveries advisory), with why.
func (p *Planner) deadLetter(ctx context.Context, seq uint64) {
	s, err := p.cfg.Queue.Lookup(ctx, seq)
	if err != nil {
		p.log.Warn("reading a dead-lettered slice", "seq", seq, "err", err)
		return
	}
	if s.Run != p.cfg.RunID {
		return
	}
	max := p.cfg.Queue.Config().MaxDeliver
	reason := fmt.Sprintf("dead-lettered after %d deliveries, none acknowledged: every delivery's writer died or went silent past the ack wait", max)
	err = p.cfg.Ledger.FinishSlice(ctx, p.cfg.RunID, s.ID, ledger.SliceDead, "", reason, max)
	var te *ledger.TransitionError
	if errors.As(err, &te) {
		// Done in the ledger: its work committed and every ack of it was
		// lost. The ledger keeps it done.
		p.log.Info("the queue gave up on a slice the ledger has done; it stays done", "slice", s.ID)
		return
	}
	if err != nil {
		p.log.Warn("recording a dead-lettered slice", "slice", s.ID, "err", err)
		return
	}
	p.cfg.Metrics.SlicesDeadLettered.Inc()
	p.log.Error("slice dead", "slice", s.ID, "reason", reason)
}
