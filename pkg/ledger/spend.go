package ledger

import (
	"context"
	"fmt"
)

// Spend records one model call's token usage, unpriced (SpendCall records
// the rest of what a call cost). Calls of slices that later fail are recorded
// too: the meter counts what was paid, not what was kept.
func (s *Store) Spend(ctx context.Context, run, slice, writer, model string, prompt, completion int, outcome string) error {
	return s.SpendCall(ctx, Call{Run: run, Slice: slice, Writer: writer, Model: model, Prompt: prompt, Completion: completion, Outcome: outcome})
}

// Spent totals a run's prompt and completion tokens.
func (s *Store) Spent(ctx context.Context, run string) (prompt, completion int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT COALESCE(sum(prompt_tokens), 0)::bigint, COALESCE(sum(completion_tokens), 0)::bigint
		FROM spend WHERE run_id = $1`, run).Scan(&prompt, &completion)
	if err != nil {
		return 0, 0, fmt.Errorf("ledger: spent by run %s: %w", run, err)
	}
	return prompt, completion, nil
}

// SpentBySlice totals a run's tokens (prompt + completion) per slice.
func (s *Store) SpentBySlice(ctx context.Context, run string) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT slice_id, sum(prompt_tokens + completion_tokens)::bigint FROM spend WHERE run_id = $1 GROUP BY slice_id`, run)
	if err != nil {
		return nil, fmt.Errorf("ledger: spend by slice of run %s: %w", run, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("ledger: spend by slice of run %s: %w", run, err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: spend by slice of run %s: %w", run, err)
	}
	return out, nil
}

// Budget is a run's caps and what its meter shows spent.
type Budget struct {
	Cap      int64   // the run's --budget-tokens; 0: no cap
	CapUSD   float64 // the run's --budget-usd; 0: no cap
	Spent    int64   // prompt and completion tokens recorded so far
	SpentUSD float64 // their cost at the model's price
}

// Reached reports whether a capped run has spent a cap, in tokens or in
// dollars.
func (b Budget) Reached() bool {
	return (b.Cap > 0 && b.Spent >= b.Cap) || (b.CapUSD > 0 && b.SpentUSD >= b.CapUSD)
}

// Budget reads a run's meter against its caps; the meter of a run without a
// cap is not read. Every role asks this one question (a writer before each
// model call, the reviewer when a run ends short), so what is spent past the
// cap is at most the calls in flight when it was crossed.
func (s *Store) Budget(ctx context.Context, r Run) (Budget, error) {
	b := Budget{Cap: r.BudgetTokens, CapUSD: r.BudgetUSD}
	if b.Cap <= 0 && b.CapUSD <= 0 {
		return b, nil
	}
	m, err := s.Meter(ctx, r.ID)
	if err != nil {
		return b, err
	}
	b.Spent, b.SpentUSD = m.Tokens(), m.CostUSD
	return b, nil
}
