package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/plan"
)

// SavePlan stores the plan a run was derived with. A run keeps the first
// plan stored for it: whoever resumes the run works from that plan. A run
// that does not exist is ErrNotFound.
func (s *Store) SavePlan(ctx context.Context, run string, p *plan.Plan) error {
	js, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("ledger: run %s: plan: %w", run, err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO run_plans (run_id, plan) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING`, run, js)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" { // foreign_key_violation: no such run
		return fmt.Errorf("ledger: run %s: plan: %w", run, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("ledger: run %s: plan: %w", run, err)
	}
	return nil
}

// Plan is the plan stored for a run, or ErrNotFound (a run created before
// plans were stored, or none).
func (s *Store) Plan(ctx context.Context, run string) (*plan.Plan, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT plan FROM run_plans WHERE run_id = $1`, run).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("ledger: run %s: plan: %w", run, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: run %s: plan: %w", run, err)
	}
	var p plan.Plan
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("ledger: run %s: plan: %w", run, err)
	}
	return &p, nil
}
