package planner

import (
	"context"
	"fmt"
	"slices"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
)

// maxLessons bounds the refusal reasons a round's briefs carry.
const maxLessons = 5

// dealt is one slice of a round before it is published: its ledger id, its
// buckets, and whether the ledger already has it (dealt by an earlier run of
// this planner, so it is republished but not claimed again).
type dealt struct {
	id      string
	buckets []string
	claimed bool
}

// deal claims and publishes a round's slices and returns how many it
// published. Its phases: what to deal (picks), each slice as the queue
// carries it (slice), then claim and publish each, checking the budget before
// every one.
func (p *Planner) deal(ctx context.Context, round int, kind ledger.SliceKind, gap string) (int, error) {
	run, err := p.cfg.Ledger.Run(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	bs, err := p.cfg.Ledger.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	p.observe(bs)
	picks, err := p.picks(ctx, round, bs)
	if err != nil {
		return 0, err
	}
	lessons, err := p.lessons(ctx)
	if err != nil {
		return 0, err
	}
	byID := make(map[string]ledger.Bucket, len(bs))
	for _, b := range bs {
		byID[b.ID] = b
	}
	n := 0
	for _, d := range picks {
		if reached, err := p.budgetReached(ctx, run); err != nil {
			return n, err
		} else if reached {
			p.log.Info("budget reached; dealing stops", "round", round, "dealt", n, "left", len(picks)-n)
			break
		}
		s := p.slice(round, d, byID, gap, lessons)
		if !d.claimed {
			if err := p.cfg.Ledger.ClaimSlice(ctx, ledger.Slice{RunID: p.cfg.RunID, ID: d.id, Round: round, Kind: kind, BucketIDs: d.buckets}); err != nil {
				return n, fmt.Errorf("planner: claim %s: %w", d.id, err)
			}
		}
		if _, err := p.cfg.Queue.Publish(ctx, s); err != nil {
			return n, fmt.Errorf("planner: publish %s: %w", d.id, err)
		}
		p.cfg.Metrics.SlicesPublished.Inc()
		n++
	}
	p.folding.Slices += n
	if n > 0 {
		p.log.Info("round dealt", "round", round, "slices", n)
	}
	return n, nil
}

// picks is what a round deals: every open bucket with work outstanding,
// ranked and grouped, never two of one cell in a slice. A round the ledger
// already has slices for (a restarted planner) deals those of them still
// published, under their ids, which the queue drops as duplicates if they
// are still there; and, when the round is not folded yet (a bucket is still
// claimed by one of its slices), the open buckets the stopped planner had
// not dealt yet, so they are written in this round, as they would have been
// had it not stopped, rather than after its fold and top-up.
func (p *Planner) picks(ctx context.Context, round int, bs []ledger.Bucket) ([]dealt, error) {
	existing, err := p.cfg.Ledger.Slices(ctx, p.cfg.RunID, round)
	if err != nil {
		return nil, err
	}
	var out []dealt
	taken := map[string]bool{}
	for _, s := range existing {
		taken[s.ID] = true
		if s.State == ledger.SlicePublished {
			out = append(out, dealt{id: s.ID, buckets: s.BucketIDs, claimed: true})
		}
	}
	if len(existing) > 0 && !slices.ContainsFunc(bs, func(b ledger.Bucket) bool { return b.State == ledger.BucketClaimed && taken[b.ClaimedBy] }) {
		return out, nil // folded: what is open is the next round's
	}
	themeAll, themeUntouched := map[string]int{}, map[string]int{}
	for _, b := range bs {
		themeAll[b.Theme]++
		if b.Done == 0 {
			themeUntouched[b.Theme]++
		}
	}
	var open []plan.Open
	for _, b := range bs {
		if b.State != ledger.BucketOpen || b.Outstanding() == 0 {
			continue
		}
		open = append(open, plan.Open{ID: b.ID, Theme: b.Theme, Cell: b.Cell, Ord: b.Ord, Outstanding: b.Outstanding(),
			ThemeUntouched: float64(themeUntouched[b.Theme]) / float64(themeAll[b.Theme])})
	}
	n := 0
	for _, group := range plan.Deal(plan.Rank(open), p.cfg.PerSlice, p.cfg.SliceScenarios) {
		ids := make([]string, len(group))
		for j, o := range group {
			ids[j] = o.ID
		}
		id := ""
		for id == "" || taken[id] {
			n++
			id = fmt.Sprintf("%s-r%d-s%03d", p.cfg.RunID, round, n)
		}
		out = append(out, dealt{id: id, buckets: ids})
	}
	return out, nil
}

// slice is d as the queue carries it: the callers of the scenarios its
// buckets still need (dealt by their suite-wide indices) and a turn budget
// that grows with them.
func (p *Planner) slice(round int, d dealt, byID map[string]ledger.Bucket, gap string, lessons []string) queue.Slice {
	c := p.cfg.Engine.C
	var indices []int
	outstanding := 0
	for _, id := range d.buckets {
		b := byID[id]
		for k := b.Done; k < b.Want; k++ {
			indices = append(indices, b.Spec.Index(k))
		}
		outstanding += b.Outstanding()
	}
	return queue.Slice{Run: p.cfg.RunID, ID: d.id, Round: round, Buckets: d.buckets,
		Spread: queue.Spread(plan.SpreadFor(c, indices)), TurnBudget: 6 + 5*outstanding,
		Gap: gap, Lessons: lessons}
}

// lessons are what earlier rounds were refused for, read once when a round is
// dealt: every slice of the round gets the same snapshot, so what a writer
// learns never depends on which slices of its own round finished first.
func (p *Planner) lessons(ctx context.Context) ([]string, error) {
	rs, err := p.cfg.Ledger.TopRefusals(ctx, p.cfg.RunID, maxLessons)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		ex := r.Example
		if len(ex) > 200 {
			ex = ex[:200] + "…"
		}
		out = append(out, fmt.Sprintf("%d submissions were refused by the %s gate (%s), e.g.: %s", r.Count, r.Gate, r.Code, ex))
	}
	return out, nil
}
