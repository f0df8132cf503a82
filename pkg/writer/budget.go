package writer

import (
	"context"
	"errors"
	"fmt"
)

// errBudgetReached ends a session whose run has spent its --budget-tokens
// or --budget-usd.
var errBudgetReached = errors.New("writer: the run's spend budget is reached")

// checkBudget is asked before every model call of a run with a cap. The
// planner stops dealing at the cap, but slices already dealt would otherwise
// run to their end; checking per call bounds the overshoot to the calls in
// flight when the cap was crossed (one per writer), well inside one slice's
// reservation. The meter is the ledger, so every writer sees every other's
// spend the moment it is recorded.
func (ss *session) checkBudget(ctx context.Context) error {
	if ss.run.BudgetTokens <= 0 && ss.run.BudgetUSD <= 0 {
		return nil
	}
	m, err := ss.w.cfg.Store.Meter(ctx, ss.b.Run)
	if err != nil {
		return fmt.Errorf("budget meter: %w", err)
	}
	if m.Over(ss.run) {
		return errBudgetReached
	}
	return nil
}
