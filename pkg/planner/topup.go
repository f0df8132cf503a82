package planner

import (
	"context"
	"slices"

	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/plan"
)

// topUp keeps "asking for N returns N": what blocked buckets will not write
// is re-dealt to buckets with spare capacity, one at a time across use cases
// in plan order, so the same ledger always tops up the same way. It returns
// how many scenarios it added to wants.
func (p *Planner) topUp(ctx context.Context, asked int) (int, error) {
	bs, err := p.cfg.Ledger.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	short := asked - committed(bs)
	if short <= 0 {
		return 0, nil
	}
	next := nextIndex(bs)
	if p.Plan != nil && p.Plan.Most > 0 {
		// Indices past Most would mint codes the contract's shapes cannot
		// hold apart.
		short = min(short, p.Plan.Most-next)
		if short <= 0 {
			p.log.Warn("cannot top up: every distinct code the contract supports is dealt", "most", p.Plan.Most)
			return 0, nil
		}
	}
	raise := raises(bs, short)
	total := 0
	for i, b := range bs {
		n := raise[i]
		if n == 0 {
			continue
		}
		// Scenarios past the plan's sizing take suite-wide indices no bucket
		// has used, so callers and codes stay unique.
		sp := b.Spec
		sp.Spans = append(slices.Clone(sp.Spans), plan.Span{K: b.Want, Index: next})
		next += n
		if err := p.cfg.Ledger.Raise(ctx, p.cfg.RunID, b.ID, b.Want+n, sp); err != nil {
			return total, err
		}
		total += n
	}
	if total > 0 {
		p.log.Info("topped up", "short", short, "added", total)
	}
	return total, nil
}

// committed is what the buckets will write as they stand: a blocked bucket
// only what it has, any other its want.
func committed(bs []canvas.Bucket) int {
	n := 0
	for _, b := range bs {
		if b.State == canvas.BucketBlocked {
			n += min(b.Done, b.Want)
		} else {
			n += b.Want
		}
	}
	return n
}

// nextIndex is the first suite-wide scenario index no bucket's plan or
// top-up has taken.
func nextIndex(bs []canvas.Bucket) int {
	next := 0
	for _, b := range bs {
		next = max(next, b.Spec.End(b.Want))
	}
	return next
}

// raises deals short scenarios to buckets (by index in bs) with spare
// capacity, one at a time per use case in the order use cases first appear,
// each use case's buckets in order; blocked and claimed buckets take none.
func raises(bs []canvas.Bucket, short int) map[int]int {
	raise := map[int]int{}
	var order []string
	byUC := map[string][]int{}
	for i, b := range bs {
		if b.State == canvas.BucketBlocked || b.State == canvas.BucketClaimed || b.Spec.Capacity <= b.Want {
			continue
		}
		if _, ok := byUC[b.UseCase]; !ok {
			order = append(order, b.UseCase)
		}
		byUC[b.UseCase] = append(byUC[b.UseCase], i)
	}
	for added := 0; added < short; {
		progress := false
		for _, uc := range order {
			for _, i := range byUC[uc] {
				if bs[i].Want+raise[i] < bs[i].Spec.Capacity {
					raise[i]++
					added++
					progress = true
					break
				}
			}
			if added >= short {
				break
			}
		}
		if !progress {
			break
		}
	}
	return raise
}
