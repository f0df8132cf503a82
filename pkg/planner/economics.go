package planner

import (
	"context"
	"fmt"

	"github.com/suitegen/suitegen/pkg/canvas"
)

// maxLessons bounds the refusal reasons a round's briefs carry.
const maxLessons = 5

// lessons are what earlier rounds were refused for, read once when a round is
// dealt: every slice of the round gets the same snapshot, so what a writer
// learns never depends on which slices of its own round finished first.
func (p *Planner) lessons(ctx context.Context) ([]string, error) {
	rs, err := p.cfg.Store.TopRefusals(ctx, p.cfg.RunID, maxLessons)
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

// spentOut reports whether the run's meter has reached its cap. It is asked
// before each slice is published, not once a round: a round deals many
// slices, and the ones already out keep spending while it deals. Writers ask
// the same meter before every model call, so what is spent past the cap is at
// most the calls in flight when it was crossed.
func (p *Planner) spentOut(ctx context.Context, run canvas.Run) (bool, error) {
	if run.BudgetTokens <= 0 && run.BudgetUSD <= 0 {
		return false, nil
	}
	m, err := p.cfg.Store.Meter(ctx, p.cfg.RunID)
	if err != nil {
		return false, err
	}
	p.cfg.Metrics.SetSpend(m.Tokens(), m.CostUSD, run.BudgetTokens, run.BudgetUSD)
	if m.Over(run) {
		p.budgetHit = true
		return true, nil
	}
	return false, nil
}
