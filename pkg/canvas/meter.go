package canvas

import (
	"context"
	"encoding/json"
	"fmt"
)

// Refuse records a gate refusal of a scenario a writer submitted.
func (s *Store) Refuse(ctx context.Context, run, slice, bucket, gate, code, message string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO refusals (run_id, slice_id, bucket_id, gate, code, message) VALUES ($1,$2,$3,$4,$5,$6)`,
		run, slice, bucket, gate, code, message)
	if err != nil {
		return fmt.Errorf("canvas: refuse in run %s slice %s: %w", run, slice, err)
	}
	return nil
}

// Refusals counts a run's gate refusals by "gate/code".
func (s *Store) Refusals(ctx context.Context, run string) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT gate || '/' || code, count(*) FROM refusals WHERE run_id = $1 GROUP BY gate, code`, run)
	if err != nil {
		return nil, fmt.Errorf("canvas: refusals of run %s: %w", run, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("canvas: refusals of run %s: %w", run, err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("canvas: refusals of run %s: %w", run, err)
	}
	return out, nil
}

// BucketRefusal is the most frequent refusal of a bucket: its gate and code,
// how often, out of how many refusals in all, and an example message.
type BucketRefusal struct {
	Gate    string `json:"gate"`
	Code    string `json:"code"`
	Count   int    `json:"count"`
	Of      int    `json:"of"`
	Example string `json:"example"`
}

// BucketRefusals returns, per bucket of a run, its most frequent refusal
// (ties broken by gate and code), with the smallest message of that kind as
// its example, so the same ledger always gives the same text.
func (s *Store) BucketRefusals(ctx context.Context, run string) (map[string]BucketRefusal, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT bucket_id, gate, code, n, total, example FROM (
			SELECT bucket_id, gate, code, count(*) AS n,
				sum(count(*)) OVER (PARTITION BY bucket_id) AS total,
				min(message) AS example,
				row_number() OVER (PARTITION BY bucket_id ORDER BY count(*) DESC, gate, code) AS rank
			FROM refusals WHERE run_id = $1 GROUP BY bucket_id, gate, code) t
		WHERE rank = 1`, run)
	if err != nil {
		return nil, fmt.Errorf("canvas: top refusals of run %s: %w", run, err)
	}
	defer rows.Close()
	out := map[string]BucketRefusal{}
	for rows.Next() {
		var b string
		var r BucketRefusal
		var total int64
		if err := rows.Scan(&b, &r.Gate, &r.Code, &r.Count, &total, &r.Example); err != nil {
			return nil, fmt.Errorf("canvas: top refusals of run %s: %w", run, err)
		}
		r.Of = int(total)
		out[b] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("canvas: top refusals of run %s: %w", run, err)
	}
	return out, nil
}

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

// SubGoal is a sub-goal a writer added to the catalogue during a run.
type SubGoal struct {
	Name   string            `json:"name"`
	What   string            `json:"what"`
	Judged bool              `json:"judged"`
	Params map[string]string `json:"params"`
	Source string            `json:"source,omitempty"`
}

// AddSubGoal records a run-time sub-goal; idempotent on name (the first wins).
func (s *Store) AddSubGoal(ctx context.Context, run string, g SubGoal) (created bool, err error) {
	if g.Name == "" {
		return false, fmt.Errorf("canvas: add sub-goal to run %s: no name", run)
	}
	params := g.Params
	if params == nil {
		params = map[string]string{}
	}
	pj, err := json.Marshal(params)
	if err != nil {
		return false, fmt.Errorf("canvas: add sub-goal %s: %w", g.Name, err)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO subgoals (run_id, name, what, judged, params, source) VALUES ($1,$2,$3,$4,$5::jsonb,$6)
		ON CONFLICT (run_id, name) DO NOTHING`, run, g.Name, g.What, g.Judged, string(pj), g.Source)
	if err != nil {
		return false, fmt.Errorf("canvas: add sub-goal %s to run %s: %w", g.Name, run, err)
	}
	return tag.RowsAffected() == 1, nil
}

// SubGoals lists a run's run-time sub-goals by name.
func (s *Store) SubGoals(ctx context.Context, run string) ([]SubGoal, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, what, judged, params, source FROM subgoals WHERE run_id = $1 ORDER BY name`, run)
	if err != nil {
		return nil, fmt.Errorf("canvas: sub-goals of run %s: %w", run, err)
	}
	defer rows.Close()
	var out []SubGoal
	for rows.Next() {
		var g SubGoal
		var pj []byte
		if err := rows.Scan(&g.Name, &g.What, &g.Judged, &pj, &g.Source); err != nil {
			return nil, fmt.Errorf("canvas: sub-goals of run %s: %w", run, err)
		}
		if err := json.Unmarshal(pj, &g.Params); err != nil {
			return nil, fmt.Errorf("canvas: sub-goal %s params: %w", g.Name, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("canvas: sub-goals of run %s: %w", run, err)
	}
	return out, nil
}
