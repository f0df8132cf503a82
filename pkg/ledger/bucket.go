package ledger

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/plan"
)

// Bucket is a bucket of the plan (plan.Bucket: what kind of case, how many,
// its working spec) with what the ledger knows of it in a run.
type Bucket struct {
	plan.Bucket
	RunID     string      `json:"run_id"`
	Attempts  int         `json:"attempts"`
	Refused   int         `json:"refused"`
	State     BucketState `json:"state"`
	ClaimedBy string      `json:"claimed_by,omitempty"`
	Notes     string      `json:"notes,omitempty"`
	Origin    Origin      `json:"origin"`
	// Done is derived: the number of scenarios credited to the bucket.
	Done int `json:"done"`
}

// Outstanding is how many scenarios the bucket still wants.
func (b Bucket) Outstanding() int { return max(b.Want-b.Done, 0) }

func bucketArgs(run string, b Bucket) ([]any, error) {
	axes := b.Axes
	if axes == nil {
		axes = map[string]string{}
	}
	ax, err := json.Marshal(axes)
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(b.Spec)
	if err != nil {
		return nil, err
	}
	state := cmp.Or(b.State, BucketOpen)
	if !state.Known() {
		return nil, fmt.Errorf("unknown state %q", state)
	}
	origin := cmp.Or(b.Origin, OriginPlan)
	var claimed *string
	if b.ClaimedBy != "" {
		claimed = &b.ClaimedBy
	}
	return []any{run, b.ID, b.Ord, b.Theme, b.Cell, b.UseCase, b.Angle, b.Outcome, b.Overlay, b.Kind,
		string(ax), b.Want, b.Attempts, b.Refused, state, claimed, b.Notes, origin, string(spec)}, nil
}

const insertBucket = `INSERT INTO buckets (run_id, id, ord, theme, cell, use_case, angle, outcome, overlay, kind,
	axes, want, attempts, refused, state, claimed_by, notes, origin, spec)
	VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11::jsonb,$12,$13,$14,$15,$16,$17,$18,$19::jsonb)
	ON CONFLICT (run_id, id) DO NOTHING`

// PutBuckets inserts a plan's buckets; buckets already present are left as
// they are, so a restarted planner can re-put the same plan.
func (s *Store) PutBuckets(ctx context.Context, run string, bs []Bucket) error {
	for _, b := range bs {
		if b.ID == "" {
			return fmt.Errorf("ledger: put buckets of run %s: bucket at ord %d has no ID", run, b.Ord)
		}
		if b.Want < 0 {
			return fmt.Errorf("ledger: put buckets of run %s: bucket %s: Want %d is negative", run, b.ID, b.Want)
		}
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		for _, b := range bs {
			args, err := bucketArgs(run, b)
			if err != nil {
				return fmt.Errorf("bucket %s: %w", b.ID, err)
			}
			batch.Queue(insertBucket, args...)
		}
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("ledger: put buckets of run %s: %w", run, err)
	}
	return nil
}

const bucketColumns = `SELECT b.run_id, b.id, b.ord, b.theme, b.cell, b.use_case, b.angle, b.outcome, b.overlay, b.kind,
	b.axes, b.want, b.attempts, b.refused, b.state, COALESCE(b.claimed_by, ''), b.notes, b.origin, b.spec,
	COALESCE(d.n, 0)
	FROM buckets b`

const bucketSelect = bucketColumns + `
	LEFT JOIN (SELECT bucket_id, count(*) AS n FROM scenarios WHERE run_id = $1 GROUP BY bucket_id) d ON d.bucket_id = b.id
	WHERE b.run_id = $1`

// bucketsOfSelect reads only the buckets $2 names and counts only their
// scenarios.
const bucketsOfSelect = bucketColumns + `
	LEFT JOIN (SELECT bucket_id, count(*) AS n FROM scenarios WHERE run_id = $1 AND bucket_id = ANY($2) GROUP BY bucket_id) d ON d.bucket_id = b.id
	WHERE b.run_id = $1 AND b.id = ANY($2)`

func scanBucket(row pgx.Row) (Bucket, error) {
	var b Bucket
	var axes, spec []byte
	err := row.Scan(&b.RunID, &b.ID, &b.Ord, &b.Theme, &b.Cell, &b.UseCase, &b.Angle, &b.Outcome, &b.Overlay, &b.Kind,
		&axes, &b.Want, &b.Attempts, &b.Refused, &b.State, &b.ClaimedBy, &b.Notes, &b.Origin, &spec, &b.Done)
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(axes, &b.Axes); err != nil {
		return b, fmt.Errorf("bucket %s axes: %w", b.ID, err)
	}
	if err := json.Unmarshal(spec, &b.Spec); err != nil {
		return b, fmt.Errorf("bucket %s spec: %w", b.ID, err)
	}
	return b, nil
}

// Buckets returns a run's buckets in ord order, with Done counted from the
// journal in the same query.
func (s *Store) Buckets(ctx context.Context, run string) ([]Bucket, error) {
	return s.buckets(ctx, run, bucketSelect+` ORDER BY b.ord, b.id`, run)
}

// BucketsOf returns the buckets of a run that ids name, in ord order, with
// Done counted: what a writer's brief needs of its slice, without reading
// and counting every bucket of a run of thousands per slice. An id the run
// does not have is left out.
func (s *Store) BucketsOf(ctx context.Context, run string, ids []string) ([]Bucket, error) {
	return s.buckets(ctx, run, bucketsOfSelect+` ORDER BY b.ord, b.id`, run, ids)
}

func (s *Store) buckets(ctx context.Context, run, sql string, args ...any) ([]Bucket, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("ledger: buckets of run %s: %w", run, err)
	}
	defer rows.Close()
	var out []Bucket
	for rows.Next() {
		b, err := scanBucket(rows)
		if err != nil {
			return nil, fmt.Errorf("ledger: buckets of run %s: %w", run, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: buckets of run %s: %w", run, err)
	}
	return out, nil
}

// AddBucket records a bucket a writer reported. Its ID and Ord are assigned
// here (the next ord, id "b<ord>") and its origin is "writer" unless b.Origin
// says otherwise ("review"). A report of a bucket that already exists with the
// same use case, cell, angle, outcome and overlay returns the existing bucket,
// so a redelivered slice does not add it twice.
func (s *Store) AddBucket(ctx context.Context, run string, b Bucket) (Bucket, error) {
	if b.Origin == "" || b.Origin == OriginPlan {
		b.Origin = OriginWriter
	}
	// Want 0 is allowed: a reported bucket may take no scenario until a
	// planner's top-up raises it (it must not make a run write more than asked).
	if b.Want < 0 {
		return Bucket{}, fmt.Errorf("ledger: add bucket to run %s: Want %d is negative", run, b.Want)
	}
	var id string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// The run row lock serialises id assignment between writers.
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM runs WHERE id = $1 FOR UPDATE`, run).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("run %s: %w", run, ErrNotFound)
			}
			return err
		}
		err := tx.QueryRow(ctx, `SELECT id FROM buckets WHERE run_id = $1 AND use_case = $2 AND cell = $3 AND angle = $4
			AND outcome = $5 AND overlay = $6 ORDER BY ord LIMIT 1`, run, b.UseCase, b.Cell, b.Angle, b.Outcome, b.Overlay).Scan(&id)
		if err == nil {
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var ord int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(max(ord), -1) + 1 FROM buckets WHERE run_id = $1`, run).Scan(&ord); err != nil {
			return err
		}
		for {
			b.Ord, b.ID = ord, "b"+strconv.Itoa(ord)
			args, err := bucketArgs(run, b)
			if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, insertBucket, args...)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				id = b.ID
				return nil
			}
			ord++ // a planner's id happened to be "b<ord>" with another ord
		}
	})
	if err != nil {
		return Bucket{}, fmt.Errorf("ledger: add bucket to run %s: %w", run, err)
	}
	out, err := scanBucket(s.pool.QueryRow(ctx, bucketSelect+` AND b.id = $2`, run, id))
	if err != nil {
		return Bucket{}, fmt.Errorf("ledger: add bucket to run %s: read back %s: %w", run, id, err)
	}
	return out, nil
}

// Raising is a bucket's new want and spec, set by Raise.
type Raising struct {
	ID   string
	Want int
	Spec plan.Spec
}

// Raise sets buckets' wants and specs (a planner topping up a short run) and
// reopens those that were done, all in one transaction: a top-up is made
// whole or not at all, so a planner stopped in the middle of one, started
// again, tops up what it would have. A claimed or blocked bucket, or one
// that does not exist, is ErrNotFound, and nothing is raised.
func (s *Store) Raise(ctx context.Context, run string, rs ...Raising) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, r := range rs {
			js, err := json.Marshal(r.Spec)
			if err != nil {
				return fmt.Errorf("%s: %w", r.ID, err)
			}
			// Raising reopens a done bucket (done -> open) or keeps an open one open.
			tag, err := tx.Exec(ctx, `UPDATE buckets SET want = $3, spec = $4, state = $5
				WHERE run_id = $1 AND id = $2 AND state IN ($5, $6) AND claimed_by IS NULL`, run, r.ID, r.Want, js, BucketOpen, BucketDone)
			if err != nil {
				return fmt.Errorf("%s: %w", r.ID, err)
			}
			if tag.RowsAffected() == 0 {
				return fmt.Errorf("%s: %w", r.ID, ErrNotFound)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: raise in run %s: %w", run, err)
	}
	return nil
}
