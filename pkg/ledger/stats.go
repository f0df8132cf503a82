package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RunStates lists every run state, in lifecycle order, as the label
// values an exporter initialises.
var RunStates = []string{string(RunPlanned), string(RunWriting), string(RunReviewing), string(RunDone), string(RunFailed), string(RunCancelled)}

// BucketStates lists every bucket state.
var BucketStates = []string{string(BucketOpen), string(BucketClaimed), string(BucketDone), string(BucketBlocked)}

// SliceStates lists every slice state.
var SliceStates = []string{string(SlicePublished), string(SliceDone), string(SliceDead)}

// Why a slice died, read from who recorded it: the ledger keeps the reason
// as text, so the cause is the one structured fact there is.
const (
	// DeadFailed: a writer ran the slice's last delivery and recorded the
	// error it failed with.
	DeadFailed = "failed"
	// DeadLost: no writer finished the slice; the queue or the planner gave
	// up on it (writers died or went silent past the ack wait, or the round
	// timed out).
	DeadLost = "lost"
)

// DeadCauses lists the causes of a dead slice.
var DeadCauses = []string{DeadFailed, DeadLost}

// GateCode is one kind of gate refusal.
type GateCode struct{ Gate, Code string }

// RunStats are one run's figures as the ledger holds them, read in one
// snapshot: what exporters and the progress page show.
type RunStats struct {
	Run
	// At is the database's clock when the figures were read; ages (since the
	// last activity, since the run began) are measured against it.
	At     time.Time
	Proved int
	// ProvedRecent is the scenarios journalled within the query's Recent
	// window: the run's current throughput.
	ProvedRecent int
	Buckets      map[string]int   // buckets by state
	Slices       map[string]int   // slices by state
	Dead         map[string]int   // dead slices by cause (DeadFailed, DeadLost)
	Refusals     map[GateCode]int // refusals by gate and code
	// Spend: model calls and their tokens, including calls of slices that
	// later failed; cached prompt and reasoning tokens are inside prompt and
	// completion, as providers report them; dollars at the model's price,
	// leaving out UnpricedCalls.
	Calls                               int64
	PromptTokens, CompletionTokens      int64
	CachedPromptTokens, ReasoningTokens int64
	CostUSD                             float64
	UnpricedCalls                       int64
	// LastActivity is the latest ledger write of the run: a slice dealt or
	// finished, a scenario journalled, a refusal or a model call recorded
	// (the run's creation when there is none).
	LastActivity time.Time
}

// Idle is how long the run has had no ledger activity.
func (r RunStats) Idle() time.Duration { return max(0, r.At.Sub(r.LastActivity)) }

// StatsQuery says which runs Stats reads.
type StatsQuery struct {
	// IDs, when set, reads exactly these runs (those that exist).
	IDs []string
	// Since, when set, leaves out finished runs that finished before it and
	// unfinished runs with no activity since it.
	Since time.Time
	// Limit reads at most this many runs, newest first (0: 100).
	Limit int
	// Recent is the window of ProvedRecent (0: 5 minutes).
	Recent time.Duration
}

// Stats reads the figures of the runs q selects, newest first. The cost is
// bounded by q.Limit: one aggregate query per ledger table over those runs,
// each on the table's run index.
func (s *Store) Stats(ctx context.Context, q StatsQuery) ([]RunStats, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	if q.Recent <= 0 {
		q.Recent = 5 * time.Minute
	}
	var out []RunStats
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		out, err = readStats(ctx, tx, q)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ledger: run stats: %w", err)
	}
	return out, nil
}

// RunStats reads one run's figures, or ErrNotFound.
func (s *Store) RunStats(ctx context.Context, id string) (RunStats, error) {
	rs, err := s.Stats(ctx, StatsQuery{IDs: []string{id}, Limit: 1})
	if err != nil {
		return RunStats{}, err
	}
	if len(rs) == 0 {
		return RunStats{}, fmt.Errorf("ledger: run %s: %w", id, ErrNotFound)
	}
	return rs[0], nil
}

func readStats(ctx context.Context, tx pgx.Tx, q StatsQuery) ([]RunStats, error) {
	var since *time.Time
	if !q.Since.IsZero() {
		since = &q.Since
	}
	var at time.Time
	if err := tx.QueryRow(ctx, `SELECT now()`).Scan(&at); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT `+runCols+` FROM runs
		WHERE ($1::text[] IS NULL OR id = ANY($1))
		  AND ($2::timestamptz IS NULL OR finished_at IS NULL OR finished_at >= $2)
		ORDER BY created_at DESC, id LIMIT $3`, q.IDs, since, q.Limit)
	if err != nil {
		return nil, err
	}
	var out []RunStats
	index := map[string]int{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		index[r.ID] = len(out)
		out = append(out, RunStats{Run: r, At: at, LastActivity: r.CreatedAt, Buckets: map[string]int{},
			Slices: map[string]int{}, Dead: map[string]int{}, Refusals: map[GateCode]int{}})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.ID
	}
	touch := func(r *RunStats, t *time.Time) {
		if t != nil && t.After(r.LastActivity) {
			r.LastActivity = *t
		}
	}
	// each runs one aggregate over the runs, scanning (run id, rest...) rows.
	each := func(sql string, args []any, scan func(r *RunStats, row pgx.Rows) error) error {
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			vals := rows.RawValues()
			if len(vals) == 0 {
				continue
			}
			id = string(vals[0])
			i, ok := index[id]
			if !ok {
				return fmt.Errorf("an aggregate returned run %q, which was not asked for", id)
			}
			if err := scan(&out[i], rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	recent := at.Add(-q.Recent)
	if err := each(`SELECT run_id, count(*), count(*) FILTER (WHERE created_at >= $2), max(created_at)
		FROM scenarios WHERE run_id = ANY($1) GROUP BY run_id`, []any{ids, recent}, func(r *RunStats, row pgx.Rows) error {
		var id string
		var last *time.Time
		err := row.Scan(&id, &r.Proved, &r.ProvedRecent, &last)
		touch(r, last)
		return err
	}); err != nil {
		return nil, err
	}
	if err := each(`SELECT run_id, state, count(*) FROM buckets WHERE run_id = ANY($1) GROUP BY run_id, state`,
		[]any{ids}, func(r *RunStats, row pgx.Rows) error {
			var id, state string
			var n int
			err := row.Scan(&id, &state, &n)
			r.Buckets[state] += n
			return err
		}); err != nil {
		return nil, err
	}
	if err := each(`SELECT run_id, state, writer <> '', count(*), max(created_at), max(finished_at)
		FROM slices WHERE run_id = ANY($1) GROUP BY run_id, state, writer <> ''`, []any{ids}, func(r *RunStats, row pgx.Rows) error {
		var id, state string
		var byWriter bool
		var n int
		var created, finished *time.Time
		if err := row.Scan(&id, &state, &byWriter, &n, &created, &finished); err != nil {
			return err
		}
		r.Slices[state] += n
		if SliceState(state) == SliceDead {
			if byWriter {
				r.Dead[DeadFailed] += n
			} else {
				r.Dead[DeadLost] += n
			}
		}
		touch(r, created)
		touch(r, finished)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := each(`SELECT run_id, gate, code, count(*), max(created_at) FROM refusals WHERE run_id = ANY($1) GROUP BY run_id, gate, code`,
		[]any{ids}, func(r *RunStats, row pgx.Rows) error {
			var id string
			var gc GateCode
			var n int
			var last *time.Time
			err := row.Scan(&id, &gc.Gate, &gc.Code, &n, &last)
			r.Refusals[gc] += n
			touch(r, last)
			return err
		}); err != nil {
		return nil, err
	}
	if err := each(`SELECT run_id, count(*), COALESCE(sum(prompt_tokens), 0)::bigint, COALESCE(sum(completion_tokens), 0)::bigint, max(created_at),
		COALESCE(sum(cached_tokens), 0)::bigint, COALESCE(sum(reasoning_tokens), 0)::bigint, COALESCE(sum(cost_usd), 0)::float8,
		count(*) FILTER (WHERE NOT priced AND prompt_tokens + completion_tokens > 0)
		FROM spend WHERE run_id = ANY($1) GROUP BY run_id`, []any{ids}, func(r *RunStats, row pgx.Rows) error {
		var id string
		var last *time.Time
		err := row.Scan(&id, &r.Calls, &r.PromptTokens, &r.CompletionTokens, &last, &r.CachedPromptTokens, &r.ReasoningTokens, &r.CostUSD, &r.UnpricedCalls)
		touch(r, last)
		return err
	}); err != nil {
		return nil, err
	}
	if since == nil {
		return out, nil
	}
	kept := out[:0]
	for _, r := range out {
		if r.FinishedAt != nil || !r.LastActivity.Before(*since) {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// DeadReason is one reason slices of a run died, with how many and which.
type DeadReason struct {
	Reason string   `json:"reason"`
	Cause  string   `json:"cause"` // DeadFailed or DeadLost
	Count  int      `json:"count"`
	Slices []string `json:"slices"` // the first few, by id
	Writer string   `json:"writer,omitempty"`
}

// DeadReasons groups a run's dead slices by reason, most frequent first, at
// most limit reasons each naming at most 5 slices.
func (s *Store) DeadReasons(ctx context.Context, run string, limit int) ([]DeadReason, error) {
	rows, err := s.pool.Query(ctx, `SELECT reason, writer <> '', count(*), (array_agg(id ORDER BY id))[1:5], max(writer)
		FROM slices WHERE run_id = $1 AND state = 'dead'
		GROUP BY reason, writer <> '' ORDER BY count(*) DESC, reason LIMIT $2`, run, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger: dead slices of run %s: %w", run, err)
	}
	defer rows.Close()
	out := []DeadReason{}
	for rows.Next() {
		var d DeadReason
		var byWriter bool
		if err := rows.Scan(&d.Reason, &byWriter, &d.Count, &d.Slices, &d.Writer); err != nil {
			return nil, fmt.Errorf("ledger: dead slices of run %s: %w", run, err)
		}
		d.Cause = DeadLost
		if byWriter {
			d.Cause = DeadFailed
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: dead slices of run %s: %w", run, err)
	}
	return out, nil
}

// RunCount is the number of runs in the ledger.
func (s *Store) RunCount(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM runs`).Scan(&n); err != nil {
		return 0, fmt.Errorf("ledger: count runs: %w", err)
	}
	return n, nil
}
