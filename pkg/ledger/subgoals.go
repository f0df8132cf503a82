package ledger

import (
	"context"
	"encoding/json"
	"fmt"
)

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
		return false, fmt.Errorf("ledger: add sub-goal to run %s: no name", run)
	}
	params := g.Params
	if params == nil {
		params = map[string]string{}
	}
	pj, err := json.Marshal(params)
	if err != nil {
		return false, fmt.Errorf("ledger: add sub-goal %s: %w", g.Name, err)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO subgoals (run_id, name, what, judged, params, source) VALUES ($1,$2,$3,$4,$5::jsonb,$6)
		ON CONFLICT (run_id, name) DO NOTHING`, run, g.Name, g.What, g.Judged, string(pj), g.Source)
	if err != nil {
		return false, fmt.Errorf("ledger: add sub-goal %s to run %s: %w", g.Name, run, err)
	}
	return tag.RowsAffected() == 1, nil
}

// SubGoals lists a run's run-time sub-goals by name.
func (s *Store) SubGoals(ctx context.Context, run string) ([]SubGoal, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, what, judged, params, source FROM subgoals WHERE run_id = $1 ORDER BY name`, run)
	if err != nil {
		return nil, fmt.Errorf("ledger: sub-goals of run %s: %w", run, err)
	}
	defer rows.Close()
	var out []SubGoal
	for rows.Next() {
		var g SubGoal
		var pj []byte
		if err := rows.Scan(&g.Name, &g.What, &g.Judged, &pj, &g.Source); err != nil {
			return nil, fmt.Errorf("ledger: sub-goals of run %s: %w", run, err)
		}
		if err := json.Unmarshal(pj, &g.Params); err != nil {
			return nil, fmt.Errorf("ledger: sub-goal %s params: %w", g.Name, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: sub-goals of run %s: %w", run, err)
	}
	return out, nil
}
