package planner

import (
	"context"
	"slices"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
)

// topUp keeps "asking for N returns N": what blocked buckets will not write
// is re-dealt to buckets with spare capacity, one at a time across use cases
// in plan order, so the same ledger always tops up the same way. A bucket
// that fell short after proving some of its want cedes the rest while
// buckets that never fell short have room for it: its templates' later
// drafts are what failed, so retrying it mostly fails again, while fresh
// buckets elsewhere write at their first try. It returns how many
// scenarios it added to wants. What it cedes and raises is written in one
// ledger transaction: a planner stopped in the middle of a top-up would
// otherwise top up the rest anew, from another state, on its restart.
func (p *Planner) topUp(ctx context.Context, asked int) (int, error) {
	bs, err := p.cfg.Ledger.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	next := nextIndex(bs)
	most := 0
	if p.Plan != nil {
		most = p.Plan.Most
	}
	// What blocked buckets left short takes the room first.
	spare := room(bs, next, most) - max(asked-committed(bs), 0)
	var rs []ledger.Raising
	for _, i := range cedes(bs, spare) {
		b := &bs[i]
		// The spec keeps every index the bucket was dealt reserved (a span
		// at its old want), so no later top-up deals them again.
		sp := b.Spec
		sp.Spans = append(slices.Clone(sp.Spans), plan.Span{K: b.Want, Index: sp.End(b.Want)})
		rs = append(rs, ledger.Raising{ID: b.ID, Want: b.Done, Spec: sp})
		p.log.Info("bucket cedes what it could not write", "bucket", b.ID, "done", b.Done, "want", b.Want, "attempts", b.Attempts)
		b.Want, b.Spec = b.Done, sp
	}
	more, total := p.raise(bs, asked, next)
	rs = append(rs, more...)
	if len(rs) == 0 {
		return 0, nil
	}
	if err := p.cfg.Ledger.Raise(ctx, p.cfg.RunID, rs...); err != nil {
		return 0, err
	}
	if total > 0 {
		p.log.Info("topped up", "added", total)
	}
	return total, nil
}

// raise is the raises that deal what bs (as ceded) leave short of asked,
// at suite-wide indices from next on, and how many scenarios they add.
func (p *Planner) raise(bs []ledger.Bucket, asked, next int) ([]ledger.Raising, int) {
	short := asked - committed(bs)
	if short <= 0 {
		return nil, 0
	}
	if p.Plan != nil && p.Plan.Most > 0 {
		// Indices past Most would mint codes the contract's shapes cannot
		// hold apart.
		short = min(short, p.Plan.Most-next)
		if short <= 0 {
			p.log.Warn("cannot top up: every distinct code the contract supports is dealt", "most", p.Plan.Most)
			return nil, 0
		}
	}
	raise := raises(bs, short)
	var rs []ledger.Raising
	total := 0
	for i, b := range bs {
		n := raise[i]
		if n == 0 {
			continue
		}
		// Scenarios past the plan's sizing take suite-wide indices no bucket
		// has used, so callers and codes stay unique. (A bucket that cedes
		// and is raised too comes twice; the later, which keeps both spans,
		// is what it gets.)
		sp := b.Spec
		sp.Spans = append(slices.Clone(sp.Spans), plan.Span{K: b.Want, Index: next})
		next += n
		rs = append(rs, ledger.Raising{ID: b.ID, Want: b.Want + n, Spec: sp})
		total += n
	}
	return rs, total
}

// committed is what the buckets will write as they stand: a blocked bucket
// only what it has, any other its want.
func committed(bs []ledger.Bucket) int {
	n := 0
	for _, b := range bs {
		if b.State == ledger.BucketBlocked {
			n += min(b.Done, b.Want)
		} else {
			n += b.Want
		}
	}
	return n
}

// nextIndex is the first suite-wide scenario index no bucket's plan or
// top-up has taken.
func nextIndex(bs []ledger.Bucket) int {
	next := 0
	for _, b := range bs {
		next = max(next, b.Spec.End(b.Want))
	}
	return next
}

// fresh is a bucket a top-up may raise first: open or done, with spare
// capacity, and never short after an attempt.
func fresh(b ledger.Bucket) bool {
	return raisable(b) && b.Attempts == 0
}

// raisable is a bucket a top-up may raise: neither blocked nor claimed, with
// spare capacity.
func raisable(b ledger.Bucket) bool {
	return b.State != ledger.BucketBlocked && b.State != ledger.BucketClaimed && b.Spec.Capacity > b.Want
}

// room is the spare capacity of fresh buckets, within the indices the code
// shapes still hold (most, 0: no limit).
func room(bs []ledger.Bucket, next, most int) int {
	n := 0
	for _, b := range bs {
		if fresh(b) {
			n += b.Spec.Capacity - b.Want
		}
	}
	if most > 0 {
		n = min(n, max(most-next, 0))
	}
	return n
}

// cedes is the buckets (by index in bs, in plan order) that give up what
// they did not write, as long as room holds it: open buckets short of their
// want after an attempt that proved some of it. A bucket that proved none
// keeps its attempts, so no cell loses its only bucket to one bad try.
func cedes(bs []ledger.Bucket, room int) []int {
	var out []int
	for i, b := range bs {
		if b.State != ledger.BucketOpen || b.Attempts == 0 || b.Done == 0 || b.Done >= b.Want {
			continue
		}
		if n := b.Want - b.Done; n <= room {
			room -= n
			out = append(out, i)
		}
	}
	return out
}

// raises deals short scenarios to buckets (by index in bs) with spare
// capacity, one at a time per use case in the order use cases first appear,
// each use case's buckets in order: fresh buckets first, then, when they
// are full, buckets that fell short before; blocked and claimed buckets
// take none.
func raises(bs []ledger.Bucket, short int) map[int]int {
	raise := map[int]int{}
	for _, pick := range []func(ledger.Bucket) bool{fresh, raisable} {
		short -= raisePass(bs, short, raise, pick)
	}
	return raise
}

// raisePass is one pass of raises over the buckets pick admits; it returns how
// many it added to raise.
func raisePass(bs []ledger.Bucket, short int, raise map[int]int, pick func(ledger.Bucket) bool) int {
	var order []string
	byUC := map[string][]int{}
	for i, b := range bs {
		if !pick(b) {
			continue
		}
		if _, ok := byUC[b.UseCase]; !ok {
			order = append(order, b.UseCase)
		}
		byUC[b.UseCase] = append(byUC[b.UseCase], i)
	}
	added := 0
	for added < short {
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
	return added
}
