package planner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// await waits until every slice of the round is finished in the ledger. A
// slice still unfinished at the round timeout is recorded dead. A slice
// that dies before then is dealt again within the round (redeal), so the
// round's fold and top-up see what a round without the death sees.
//
// Writers record a slice dead once its deliveries reach their bounds (a
// slice that kills its writers is recorded by the writer that finds enough
// of them lost). Should the queue's MaxDeliver, the backstop, run out
// first, no writer records it, so the planner learns of exhausted slices two ways:
// the server's max-deliveries advisory while it listens, and, for advisories
// sent while no planner listened (it was restarted), a queue that has held
// nothing pending or in flight for longer than two ack waits while the
// ledger still shows the round's slices published.
func (p *Planner) await(ctx context.Context, round, maxAttempts int) error {
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
	taken := map[string]bool{} // dead slices dealt again, or with nothing to deal
	for {
		ss, err := p.cfg.Ledger.Slices(ctx, p.cfg.RunID, round)
		redealt := 0
		if err == nil && time.Now().Before(deadline) {
			redealt, err = p.redeal(ctx, round, ss, maxAttempts, taken)
		}
		if err != nil {
			// The ledger restarting or failing over (or the queue, while a
			// dead slice's buckets are dealt again) is not the end of the
			// run: keep polling for a while, as the writers do.
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if ctx.Err() != nil || time.Since(failingSince) > p.cfg.LedgerOutage {
				return err
			}
			p.log.Warn("reading the ledger or dealing a dead slice's buckets again failed; polling again", "err", err)
			if !tick(ctx, t) {
				return ctx.Err()
			}
			continue
		}
		failingSince = time.Time{}
		if redealt > 0 {
			emptySince = time.Time{}
			continue // read the round again, with its new slices
		}
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
				// Buried, they are dealt again on the next pass, as any dead slice.
				if err := p.bury(ctx, ss, fmt.Sprintf("dead-lettered: the queue gave up on the slice (no delivery acknowledged within %d deliveries); every delivery's writer died or went silent past the ack wait", qc.MaxDeliver)); err != nil {
					return err
				}
				emptySince = time.Time{}
			}
		} else {
			emptySince = time.Time{}
		}
		if !tick(ctx, t) {
			return ctx.Err()
		}
	}
}

// redeal deals again, within their round, the buckets that dead slices of
// ss still hold with work outstanding, each in a slice of its own that
// takes over its claim (ledger.RedealSlice) and writes the indices the dead
// slice was given: a bucket that kills its writers then takes no other
// down with it, and the slices of its own single it out. Waiting for them
// before the round is folded is what keeps a run's content from depending
// on which slices died: dealt a round later, a dead slice's shortfall
// would be topped up by another round's top-up, with other buckets' (which
// buckets and indices a top-up deals depends on what it tops up at once).
// A bucket is not dealt again once maxAttempts dead slices single it out
// (ledger.Store.Deaths: slices of it alone that journalled nothing of it;
// the fold blocks it), nor past the budget; those stay with the dead
// slice, for the fold. taken holds the dead slices handled; it returns how
// many slices it published.
func (p *Planner) redeal(ctx context.Context, round int, ss []ledger.Slice, maxAttempts int, taken map[string]bool) (int, error) {
	var dead []ledger.Slice
	for _, s := range ss {
		if s.State == ledger.SliceDead && !taken[s.ID] {
			dead = append(dead, s)
		}
	}
	if len(dead) == 0 {
		return 0, nil
	}
	run, err := p.cfg.Ledger.Run(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	if reached, err := p.budgetReached(ctx, run); err != nil {
		return 0, err
	} else if reached {
		for _, d := range dead {
			taken[d.ID] = true
		}
		p.log.Info("budget reached; dead slices are not dealt again", "round", round, "dead", len(dead))
		return 0, nil
	}
	bs, err := p.cfg.Ledger.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	all, err := p.cfg.Ledger.Slices(ctx, p.cfg.RunID, -1)
	if err != nil {
		return 0, err
	}
	byID := map[string]ledger.Slice{}
	for _, s := range all {
		byID[s.ID] = s
	}
	// Only deaths that single a bucket out count against it, as in the
	// fold: a slice of several buckets, or one that journalled some of its
	// bucket, lost writers that died for reasons of their own (or of
	// another bucket), and holding that against the bucket would block it
	// in a run whose writers are merely unlucky, and change what it writes.
	deaths, err := p.cfg.Ledger.Deaths(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	buckets := make(map[string]ledger.Bucket, len(bs))
	for _, b := range bs {
		buckets[b.ID] = b
	}
	lessons, err := p.lessons(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range dead {
		gap := ""
		if d.Kind == ledger.SliceGap {
			gap = gapReason
		}
		for _, b := range d.BucketIDs {
			id := redealID(d, b)
			if r, ok := byID[id]; ok {
				// Taken over before (this planner was stopped, or the
				// publish failed): publish it again, the queue drops a
				// duplicate.
				if r.State != ledger.SlicePublished {
					continue
				}
			} else {
				bk := buckets[b]
				if bk.State != ledger.BucketClaimed || bk.ClaimedBy != d.ID || bk.Outstanding() == 0 || deaths[b] >= maxAttempts {
					continue
				}
				moved, err := p.cfg.Ledger.RedealSlice(ctx, d.ID, ledger.Slice{RunID: p.cfg.RunID, ID: id, Round: d.Round, Kind: d.Kind, BucketIDs: []string{b}})
				if err != nil {
					return n, err
				}
				if !moved {
					break // done after all: its buckets are settled by it
				}
			}
			if _, err := p.cfg.Queue.Publish(ctx, p.slice(round, dealt{id: id, buckets: []string{b}}, buckets, gap, lessons)); err != nil {
				return n, fmt.Errorf("planner: publish %s: %w", id, err)
			}
			p.cfg.Metrics.SlicesPublished.Inc()
			p.folding.Slices++
			p.log.Warn("dead slice's bucket dealt again in its round", "slice", d.ID, "bucket", b, "as", id)
			n++
		}
		taken[d.ID] = true
	}
	return n, nil
}

// redealID names the slice that takes over bucket of the dead slice d:
// d's id and the bucket's, or for a slice of one bucket its id with ".2",
// or with that number raised (s039.b4 -> s039.b4.2 -> s039.b4.3).
func redealID(d ledger.Slice, bucket string) string {
	if len(d.BucketIDs) > 1 {
		return d.ID + "." + bucket
	}
	if i := strings.LastIndexByte(d.ID, '.'); i >= 0 {
		if n, err := strconv.Atoi(d.ID[i+1:]); err == nil {
			return d.ID[:i+1] + strconv.Itoa(n+1)
		}
	}
	return d.ID + ".2"
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
