package ledger

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/plan"
)

// ErrNotFound is returned when a run or slice does not exist.
var ErrNotFound = errors.New("not found")

// Store is the ledger of every run in one database.
type Store struct{ pool *pgxpool.Pool }

// New returns a Store on a migrated database.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// ErrStandby is Ready's answer from a database that takes no writes: a
// standby in recovery, as a client may reach during a failover.
var ErrStandby = errors.New("ledger: the database is a standby in recovery and takes no writes")

// Ready reports whether the ledger's database answers and takes writes: one
// round trip that asks whether the server is in recovery. Bound it with ctx.
func (s *Store) Ready(ctx context.Context) error {
	var standby bool
	if err := s.pool.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil {
		return fmt.Errorf("ledger: database: %w", err)
	}
	if standby {
		return ErrStandby
	}
	return nil
}

// Pool is the store's pool, for callers that read the ledger in their own ways.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Run is one suite being written.
type Run struct {
	ID             string     `json:"id"`
	Agent          string     `json:"agent"`
	ContractSHA256 string     `json:"contract_sha256"`
	WorldSHA256    string     `json:"world_sha256"`
	Model          string     `json:"model"`
	State          RunState   `json:"state"`
	Message        string     `json:"message"`
	Asked          int        `json:"asked"`
	Seed           int64      `json:"seed"`
	Round          int        `json:"round"`
	BudgetTokens   int64      `json:"budget_tokens"`
	BudgetUSD      float64    `json:"budget_usd"`
	Config         RunConfig  `json:"config"`
	CreatedAt      time.Time  `json:"created_at"`
	FinishedAt     *time.Time `json:"finished_at,omitempty"`
}

// RunConfig is what a run was planned with and what its plan said of
// itself, recorded on the run so a reviewer or a resumed planner derives the
// same plan (MaxWant, AllowPartial) and the ledger shows what was planned.
// Zero fields are left out of the record.
type RunConfig struct {
	Coverage     plan.Coverage `json:"coverage,omitzero"`
	Capacity     int           `json:"capacity,omitzero"`
	Axes         []plan.Axis   `json:"axes,omitzero"`
	MaxWant      int           `json:"max_want,omitzero"`
	AllowPartial bool          `json:"allow_partial,omitzero"`
}

// ConfigError is a run whose recorded config does not decode as a
// RunConfig. Field is the JSON path at fault, "" when the record is not a
// JSON object at all.
type ConfigError struct {
	Run   string
	Field string
	Err   error
}

// Error leaves the run to the wrapping read, which names it.
func (e *ConfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("config: %v", e.Err)
	}
	return fmt.Sprintf("config field %s: %v", e.Field, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// decodeConfig reads run id's recorded config.
func decodeConfig(id string, raw []byte) (RunConfig, error) {
	var c RunConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		ce := &ConfigError{Run: id, Err: err}
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			ce.Field = te.Field
		}
		return RunConfig{}, ce
	}
	return c, nil
}

const runCols = `id, agent, contract_sha256, world_sha256, model, state, message, asked, seed, round, budget_tokens, budget_usd, config, created_at, finished_at`

func scanRun(row pgx.Row) (Run, error) {
	var r Run
	var cfg []byte
	err := row.Scan(&r.ID, &r.Agent, &r.ContractSHA256, &r.WorldSHA256, &r.Model, &r.State, &r.Message,
		&r.Asked, &r.Seed, &r.Round, &r.BudgetTokens, &r.BudgetUSD, &cfg, &r.CreatedAt, &r.FinishedAt)
	if err != nil {
		return Run{}, err
	}
	r.Config, err = decodeConfig(r.ID, cfg)
	return r, err
}

// CreateRun records a run. It is idempotent on ID: when the run exists it is
// left unchanged and created is false.
func (s *Store) CreateRun(ctx context.Context, r Run) (created bool, err error) {
	if r.ID == "" {
		return false, errors.New("ledger: Run.ID is required")
	}
	if r.Asked < 0 {
		return false, fmt.Errorf("ledger: Run.Asked %d is negative", r.Asked)
	}
	state := cmp.Or(r.State, RunPlanned)
	if !state.Known() {
		return false, fmt.Errorf("ledger: run %s: unknown state %q", r.ID, state)
	}
	cfg, err := json.Marshal(r.Config)
	if err != nil {
		return false, fmt.Errorf("ledger: run %s: config: %w", r.ID, err)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO runs (id, agent, contract_sha256, world_sha256, model, state, message, asked, seed, round, budget_tokens, config, budget_usd)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12::jsonb,$13) ON CONFLICT (id) DO NOTHING`,
		r.ID, r.Agent, r.ContractSHA256, r.WorldSHA256, r.Model, state, r.Message, r.Asked, r.Seed, r.Round, r.BudgetTokens, string(cfg), r.BudgetUSD)
	if err != nil {
		return false, fmt.Errorf("ledger: create run %s: %w", r.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Run returns one run, or ErrNotFound.
func (s *Store) Run(ctx context.Context, id string) (Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, fmt.Errorf("ledger: run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("ledger: run %s: %w", id, err)
	}
	return r, nil
}

// Runs lists every run, newest first.
func (s *Store) Runs(ctx context.Context) ([]Run, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+runCols+` FROM runs ORDER BY created_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("ledger: runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if ce, ok := errors.AsType[*ConfigError](err); ok {
			return nil, fmt.Errorf("ledger: runs: run %s: %w", ce.Run, err)
		}
		if err != nil {
			return nil, fmt.Errorf("ledger: runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: runs: %w", err)
	}
	return out, nil
}

// MoveRun moves a run to state to with a message, checking the move against
// the lifecycle (RunState.To) under the run's row lock, so two processes
// cannot move one run two ways. A move to the state the run is already in
// only updates the message. Done and failed stamp finished_at; any other
// state clears it (a resumed run is unfinished again). It returns the state
// the run was in.
func (s *Store) MoveRun(ctx context.Context, id string, to RunState, message string) (from RunState, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT state FROM runs WHERE id = $1 FOR UPDATE`, id).Scan(&from); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		if err := from.To(to); err != nil {
			var te *TransitionError
			if errors.As(err, &te) {
				te.ID = id
			}
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE runs SET state = $2, message = $3,
			finished_at = CASE WHEN $4 THEN COALESCE(finished_at, now()) ELSE NULL END
			WHERE id = $1`, id, to, message, to.Final())
		return err
	})
	if err != nil {
		return from, fmt.Errorf("ledger: move run %s to %s: %w", id, to, err)
	}
	return from, nil
}

// SetRound records the planning round a run is in.
func (s *Store) SetRound(ctx context.Context, id string, round int) error {
	tag, err := s.pool.Exec(ctx, `UPDATE runs SET round = $2 WHERE id = $1`, id, round)
	if err != nil {
		return fmt.Errorf("ledger: set run %s round: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("ledger: run %s: %w", id, ErrNotFound)
	}
	return nil
}

// inTx runs fn in a transaction, retrying serialization failures and
// deadlocks, which concurrent writers can provoke and which are safe to redo.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 5 * time.Millisecond):
		}
	}
	return err
}

func retryable(err error) bool {
	if errors.Is(err, errRetry) {
		return true
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}
