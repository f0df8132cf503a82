package canvas

import (
	"context"
	"fmt"
)

// Reason is one kind of gate refusal and how often it happened.
type Reason struct {
	Gate    string
	Code    string
	Count   int
	Example string // the smallest message of the kind, so the same ledger gives the same text
}

// TopRefusals lists a run's most frequent refusal reasons, most frequent
// first, ties by gate and code: the lessons a planner hands later rounds.
func (s *Store) TopRefusals(ctx context.Context, run string, limit int) ([]Reason, error) {
	rows, err := s.pool.Query(ctx, `SELECT gate, code, count(*), min(message) FROM refusals WHERE run_id = $1
		GROUP BY gate, code ORDER BY count(*) DESC, gate, code LIMIT $2`, run, limit)
	if err != nil {
		return nil, fmt.Errorf("canvas: refusal reasons of run %s: %w", run, err)
	}
	defer rows.Close()
	var out []Reason
	for rows.Next() {
		var r Reason
		if err := rows.Scan(&r.Gate, &r.Code, &r.Count, &r.Example); err != nil {
			return nil, fmt.Errorf("canvas: refusal reasons of run %s: %w", run, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("canvas: refusal reasons of run %s: %w", run, err)
	}
	return out, nil
}
