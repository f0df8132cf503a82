package canvas

import (
	"context"
	"fmt"
)

// Spend records one model call's token usage. Calls of slices that later fail
// are recorded too: the meter counts what was paid, not what was kept.
func (s *Store) Spend(ctx context.Context, run, slice, writer, model string, prompt, completion int, outcome string) error {
	if prompt < 0 || completion < 0 {
		return fmt.Errorf("canvas: spend in run %s: negative tokens (%d, %d)", run, prompt, completion)
	}
	if outcome == "" {
		outcome = "ok"
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO spend (run_id, slice_id, writer, model, prompt_tokens, completion_tokens, outcome)
		VALUES ($1,$2,$3,$4,$5,$6,$7)`, run, slice, writer, model, prompt, completion, outcome)
	if err != nil {
		return fmt.Errorf("canvas: spend in run %s slice %s: %w", run, slice, err)
	}
	return nil
}

// Spent totals a run's prompt and completion tokens.
func (s *Store) Spent(ctx context.Context, run string) (prompt, completion int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT COALESCE(sum(prompt_tokens), 0)::bigint, COALESCE(sum(completion_tokens), 0)::bigint
		FROM spend WHERE run_id = $1`, run).Scan(&prompt, &completion)
	if err != nil {
		return 0, 0, fmt.Errorf("canvas: spent by run %s: %w", run, err)
	}
	return prompt, completion, nil
}

// SpentBySlice totals a run's tokens (prompt + completion) per slice.
func (s *Store) SpentBySlice(ctx context.Context, run string) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT slice_id, sum(prompt_tokens + completion_tokens)::bigint FROM spend WHERE run_id = $1 GROUP BY slice_id`, run)
	if err != nil {
		return nil, fmt.Errorf("canvas: spend by slice of run %s: %w", run, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("canvas: spend by slice of run %s: %w", run, err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("canvas: spend by slice of run %s: %w", run, err)
	}
	return out, nil
}

// Budget is a run's token cap and what its meter shows spent.
type Budget struct {
	Cap   int64 // the run's --budget-tokens; 0: no cap
	Spent int64 // prompt and completion tokens recorded so far
}

// Reached reports whether a capped run has spent its cap.
func (b Budget) Reached() bool { return b.Cap > 0 && b.Spent >= b.Cap }

// Budget reads a run's meter against its cap; the meter of a run without a
// cap is not read. Every role asks this one question (the planner before
// each slice it deals, a writer before each model call), so what is spent
// past the cap is at most the calls in flight when it was crossed.
func (s *Store) Budget(ctx context.Context, r Run) (Budget, error) {
	b := Budget{Cap: r.BudgetTokens}
	if b.Cap <= 0 {
		return b, nil
	}
	prompt, completion, err := s.Spent(ctx, r.ID)
	if err != nil {
		return b, err
	}
	b.Spent = prompt + completion
	return b, nil
}
