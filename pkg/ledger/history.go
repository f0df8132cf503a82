package ledger

import (
	"context"
	"fmt"
	"time"
)

// Version is an earlier version of a scenario: its file as it was before a
// revision replaced it, what was asked, and the suite it was in.
type Version struct {
	Run   string    `json:"run"`
	Name  string    `json:"name"`
	Ask   string    `json:"ask"`
	Suite string    `json:"suite"`
	Body  []byte    `json:"body"`
	At    time.Time `json:"replaced_at"`
}

// KeepVersion records a scenario's replaced version under the run that wrote
// its replacement; recording it again is a no-op.
func (s *Store) KeepVersion(ctx context.Context, v Version) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO scenario_history (run_id, name, ask, suite, body) VALUES ($1,$2,$3,$4,$5::jsonb)
		ON CONFLICT DO NOTHING`, v.Run, v.Name, v.Ask, v.Suite, string(v.Body))
	if err != nil {
		return fmt.Errorf("ledger: keep version of %s: %w", v.Name, err)
	}
	return nil
}

// History is every replaced version of the scenario name, oldest first.
func (s *Store) History(ctx context.Context, name string) ([]Version, error) {
	rows, err := s.pool.Query(ctx, `SELECT run_id, name, ask, suite, body::text, replaced_at FROM scenario_history
		WHERE name = $1 ORDER BY replaced_at, run_id`, name)
	if err != nil {
		return nil, fmt.Errorf("ledger: history of %s: %w", name, err)
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		var v Version
		var body string
		if err := rows.Scan(&v.Run, &v.Name, &v.Ask, &v.Suite, &body, &v.At); err != nil {
			return nil, fmt.Errorf("ledger: history of %s: %w", name, err)
		}
		v.Body = []byte(body)
		out = append(out, v)
	}
	return out, rows.Err()
}
