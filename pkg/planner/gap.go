package planner

import (
	"context"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// Gap rounds are the reviewer's: slices for buckets still open after the
// planner's rounds, dealt through the planner so they obey the same claims,
// cells and folding as any other. They are counted in the ledger (slices of
// kind gap), so a reviewer started again deals no more gap rounds than one
// started once.

// GapRounds counts the gap rounds the run has had, an unfinished one included.
func (p *Planner) GapRounds(ctx context.Context) (int, error) {
	ss, err := p.cfg.Ledger.Slices(ctx, p.cfg.RunID, -1)
	if err != nil {
		return 0, err
	}
	rounds := map[int]bool{}
	for _, s := range ss {
		if s.Kind == ledger.SliceGap {
			rounds[s.Round] = true
		}
	}
	return len(rounds), nil
}

// Settle finishes the run's current round when a stopped process left it
// unfinished: it republishes the round's published slices (the queue drops
// those it still has), waits for them and folds. A finished round is only
// folded again, which changes nothing.
func (p *Planner) Settle(ctx context.Context) error {
	run, err := p.cfg.Ledger.Run(ctx, p.cfg.RunID)
	if err != nil {
		return err
	}
	ss, err := p.cfg.Ledger.Slices(ctx, p.cfg.RunID, run.Round)
	if err != nil || published(ss) == 0 {
		return err
	}
	kind, gap, attempts := ledger.SliceWork, "", p.cfg.MaxAttempts
	if ss[0].Kind == ledger.SliceGap {
		kind, gap, attempts = ledger.SliceGap, gapReason, p.cfg.MaxAttempts+1
	}
	if _, err := p.deal(ctx, run.Round, kind, gap); err != nil {
		return err
	}
	if err := p.await(ctx, run.Round, attempts); err != nil {
		return err
	}
	return p.fold(ctx, attempts)
}

// gapReason is what a gap slice's brief says it is for.
const gapReason = "the suite review found buckets short of their want"

// Gap deals one round of gap slices for buckets still open, waits for them
// and folds, giving each bucket one attempt more than the planner's rounds
// did. It returns how many slices it dealt; a round that deals nothing is
// not recorded.
func (p *Planner) Gap(ctx context.Context) (int, error) {
	run, err := p.cfg.Ledger.Run(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	if reached, err := p.budgetReached(ctx, run); err != nil || reached {
		return 0, err
	}
	bs, err := p.cfg.Ledger.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	open := false
	for _, b := range bs {
		open = open || (b.State == ledger.BucketOpen && b.Outstanding() > 0)
	}
	if !open {
		return 0, nil
	}
	round := run.Round + 1
	if err := p.cfg.Ledger.SetRound(ctx, p.cfg.RunID, round); err != nil {
		return 0, err
	}
	n, err := p.deal(ctx, round, ledger.SliceGap, gapReason)
	if err != nil || n == 0 {
		return n, err
	}
	if err := p.await(ctx, round, p.cfg.MaxAttempts+1); err != nil {
		return n, err
	}
	return n, p.fold(ctx, p.cfg.MaxAttempts+1)
}
