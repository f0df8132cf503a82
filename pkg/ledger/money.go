package ledger

import (
	"context"
	"fmt"
)

// Call is one model call as the meter records it: the provider's counts
// (cached prompt tokens are part of Prompt, reasoning tokens part of
// Completion, as providers report them) and its cost at the model's price
// when the writer knew one (Priced).
type Call struct {
	Run, Slice, Writer, Model string
	Prompt, Completion        int
	CachedPrompt, Reasoning   int
	CostUSD                   float64
	Priced                    bool
	Outcome                   string
}

// SpendCall records one model call. Calls of slices that later fail are
// recorded too: the meter counts what was paid, not what was kept.
func (s *Store) SpendCall(ctx context.Context, c Call) error {
	if c.Prompt < 0 || c.Completion < 0 || c.CachedPrompt < 0 || c.Reasoning < 0 || c.CostUSD < 0 {
		return fmt.Errorf("ledger: spend in run %s: negative counts (%d, %d, %d, %d, $%v)", c.Run, c.Prompt, c.Completion, c.CachedPrompt, c.Reasoning, c.CostUSD)
	}
	if c.Outcome == "" {
		c.Outcome = "ok"
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO spend (run_id, slice_id, writer, model, prompt_tokens, completion_tokens, outcome,
		cached_tokens, reasoning_tokens, cost_usd, priced) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		c.Run, c.Slice, c.Writer, c.Model, c.Prompt, c.Completion, c.Outcome, c.CachedPrompt, c.Reasoning, c.CostUSD, c.Priced)
	if err != nil {
		return fmt.Errorf("ledger: spend in run %s slice %s: %w", c.Run, c.Slice, err)
	}
	return nil
}

// Meter is a run's spend so far.
type Meter struct {
	Calls              int64   `json:"calls"`
	PromptTokens       int64   `json:"prompt_tokens"`
	CachedPromptTokens int64   `json:"cached_prompt_tokens"`
	CompletionTokens   int64   `json:"completion_tokens"`
	ReasoningTokens    int64   `json:"reasoning_tokens"`
	CostUSD            float64 `json:"cost_usd"`
	// UnpricedCalls are calls that used tokens at no known price: CostUSD
	// leaves them out.
	UnpricedCalls int64 `json:"unpriced_calls"`
	// Kept is the scenarios journalled so far, for the cost per kept scenario.
	Kept int64 `json:"kept"`
}

// Over reports whether the meter has reached r's cap in tokens or in dollars.
func (m Meter) Over(r Run) bool {
	return (r.BudgetTokens > 0 && m.Tokens() >= r.BudgetTokens) || (r.BudgetUSD > 0 && m.CostUSD >= r.BudgetUSD)
}

// PerKept is what one kept scenario cost on average: prompt and completion
// tokens and dollars (zeros before the first is kept).
func (m Meter) PerKept() (prompt, completion, usd float64) {
	if m.Kept == 0 {
		return 0, 0, 0
	}
	k := float64(m.Kept)
	return float64(m.PromptTokens) / k, float64(m.CompletionTokens) / k, m.CostUSD / k
}

// Tokens is prompt plus completion tokens.
func (m Meter) Tokens() int64 { return m.PromptTokens + m.CompletionTokens }

// Meter totals a run's spend.
func (s *Store) Meter(ctx context.Context, run string) (Meter, error) {
	var m Meter
	err := s.pool.QueryRow(ctx, `SELECT count(*), COALESCE(sum(prompt_tokens), 0)::bigint, COALESCE(sum(cached_tokens), 0)::bigint,
		COALESCE(sum(completion_tokens), 0)::bigint, COALESCE(sum(reasoning_tokens), 0)::bigint, COALESCE(sum(cost_usd), 0)::float8,
		count(*) FILTER (WHERE NOT priced AND prompt_tokens + completion_tokens > 0),
		(SELECT count(*) FROM scenarios WHERE run_id = $1)
		FROM spend WHERE run_id = $1`, run).Scan(&m.Calls, &m.PromptTokens, &m.CachedPromptTokens, &m.CompletionTokens,
		&m.ReasoningTokens, &m.CostUSD, &m.UnpricedCalls, &m.Kept)
	if err != nil {
		return Meter{}, fmt.Errorf("ledger: meter of run %s: %w", run, err)
	}
	return m, nil
}
