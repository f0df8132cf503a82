package canvas

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

// Slice states.
const (
	SlicePublished = "published"
	SliceDone      = "done"
	SliceDead      = "dead"
)

// Slice is one unit of work on the queue.
type Slice struct {
	RunID      string     `json:"run_id"`
	ID         string     `json:"id"`
	Round      int        `json:"round"`
	Kind       string     `json:"kind"`
	BucketIDs  []string   `json:"bucket_ids"`
	State      string     `json:"state"`
	Writer     string     `json:"writer,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	Deliveries int        `json:"deliveries"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// ClaimSlice records a slice and marks its buckets claimed by it, in one
// transaction. It is idempotent on (run, id): a slice already recorded is left
// as it is and its buckets are not touched again (they may have been folded
// since). Every bucket must exist.
func (s *Store) ClaimSlice(ctx context.Context, sl Slice) error {
	if sl.RunID == "" || sl.ID == "" {
		return errors.New("canvas: claim slice: RunID and ID are required")
	}
	if len(sl.BucketIDs) == 0 {
		return fmt.Errorf("canvas: claim slice %s: no buckets", sl.ID)
	}
	kind := sl.Kind
	if kind == "" {
		kind = "work"
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO slices (run_id, id, round, kind, bucket_ids) VALUES ($1,$2,$3,$4,$5)
			ON CONFLICT (run_id, id) DO NOTHING`, sl.RunID, sl.ID, sl.Round, kind, sl.BucketIDs)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		tag, err = tx.Exec(ctx, `UPDATE buckets SET state = 'claimed', claimed_by = $2 WHERE run_id = $1 AND id = ANY($3)`,
			sl.RunID, sl.ID, sl.BucketIDs)
		if err != nil {
			return err
		}
		if n := distinct(sl.BucketIDs); tag.RowsAffected() != int64(n) {
			return fmt.Errorf("%d of its %d buckets exist", tag.RowsAffected(), n)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("canvas: claim slice %s of run %s: %w", sl.ID, sl.RunID, err)
	}
	return nil
}

func distinct(xs []string) int {
	m := make(map[string]struct{}, len(xs))
	for _, x := range xs {
		m[x] = struct{}{}
	}
	return len(m)
}

// Slices lists a run's slices of one round (-1: every round), by round and id.
func (s *Store) Slices(ctx context.Context, run string, round int) ([]Slice, error) {
	rows, err := s.pool.Query(ctx, `SELECT run_id, id, round, kind, bucket_ids, state, writer, reason, deliveries, created_at, finished_at
		FROM slices WHERE run_id = $1 AND ($2 < 0 OR round = $2) ORDER BY round, id`, run, round)
	if err != nil {
		return nil, fmt.Errorf("canvas: slices of run %s: %w", run, err)
	}
	defer rows.Close()
	var out []Slice
	for rows.Next() {
		var sl Slice
		if err := rows.Scan(&sl.RunID, &sl.ID, &sl.Round, &sl.Kind, &sl.BucketIDs, &sl.State, &sl.Writer, &sl.Reason,
			&sl.Deliveries, &sl.CreatedAt, &sl.FinishedAt); err != nil {
			return nil, fmt.Errorf("canvas: slices of run %s: %w", run, err)
		}
		out = append(out, sl)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("canvas: slices of run %s: %w", run, err)
	}
	return out, nil
}

// FinishSlice marks a slice done, or dead with a reason, and records the writer
// and delivery count. It is idempotent: finishing a finished slice again changes
// nothing, except that a slice dead-lettered and then acked after all becomes
// done (its work did commit).
func (s *Store) FinishSlice(ctx context.Context, run, id, state, writer, reason string, deliveries int) error {
	if state != SliceDone && state != SliceDead {
		return fmt.Errorf("canvas: finish slice %s: state %q is neither done nor dead", id, state)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE slices SET state = $3, writer = $4, reason = $5, deliveries = GREATEST(deliveries, $6),
		finished_at = COALESCE(finished_at, now())
		WHERE run_id = $1 AND id = $2 AND (state = 'published' OR (state = 'dead' AND $3 = 'done'))`,
		run, id, state, writer, reason, deliveries)
	if err != nil {
		return fmt.Errorf("canvas: finish slice %s of run %s: %w", id, run, err)
	}
	if tag.RowsAffected() == 0 {
		var one int
		err := s.pool.QueryRow(ctx, `SELECT 1 FROM slices WHERE run_id = $1 AND id = $2`, run, id).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("canvas: finish slice %s of run %s: %w", id, run, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("canvas: finish slice %s of run %s: %w", id, run, err)
		}
	}
	return nil
}

// FoldResult says what a Fold changed, bucket ids in ord order.
type FoldResult struct {
	Done     []string `json:"done"`
	Reopened []string `json:"reopened"`
	Blocked  []string `json:"blocked"`
	// InFlight counts buckets left alone because their slice is unfinished.
	InFlight int `json:"in_flight"`
}

// Changed is the number of buckets folded.
func (r FoldResult) Changed() int { return len(r.Done) + len(r.Reopened) + len(r.Blocked) }

// Fold is the planner's step between rounds, in one transaction. Every bucket
// claimed by a finished (done or dead) slice of the run is settled from the
// journal: done when its credited scenarios reach want; otherwise its attempts
// grow by one and it is blocked, with the most frequent refusal of the bucket
// (or the slice's dead reason) as its notes, once attempts reach maxAttempts,
// else reopened. Claims are cleared. Buckets of slices in flight are left alone.
func (s *Store) Fold(ctx context.Context, run string, maxAttempts int) (FoldResult, error) {
	if maxAttempts < 1 {
		return FoldResult{}, fmt.Errorf("canvas: fold run %s: maxAttempts %d < 1", run, maxAttempts)
	}
	var res FoldResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		res = FoldResult{}
		// Lock the run so two planners cannot fold the same buckets twice.
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM runs WHERE id = $1 FOR UPDATE`, run).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("run %s: %w", run, ErrNotFound)
			}
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM buckets b JOIN slices s ON s.run_id = b.run_id AND s.id = b.claimed_by
			WHERE b.run_id = $1 AND s.state = 'published'`, run).Scan(&res.InFlight); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			WITH settled AS (
				SELECT b.id, b.ord, b.want, b.attempts, s.reason AS dead_reason,
					(SELECT count(*) FROM scenarios sc WHERE sc.run_id = b.run_id AND sc.bucket_id = b.id) AS done,
					(SELECT count(*) FROM refusals r WHERE r.run_id = b.run_id AND r.bucket_id = b.id) AS refused,
					(SELECT r.gate || '/' || r.code || ': ' || (array_agg(r.message ORDER BY r.id DESC))[1]
						FROM refusals r WHERE r.run_id = b.run_id AND r.bucket_id = b.id
						GROUP BY r.gate, r.code ORDER BY count(*) DESC, r.gate, r.code LIMIT 1) AS top_refusal
				FROM buckets b JOIN slices s ON s.run_id = b.run_id AND s.id = b.claimed_by
				WHERE b.run_id = $1 AND s.state IN ('done', 'dead')
				FOR UPDATE OF b
			)
			UPDATE buckets b SET
				claimed_by = NULL,
				refused = st.refused,
				attempts = CASE WHEN st.done >= st.want THEN b.attempts ELSE b.attempts + 1 END,
				state = CASE WHEN st.done >= st.want THEN 'done'
					WHEN b.attempts + 1 >= $2 THEN 'blocked' ELSE 'open' END,
				notes = CASE WHEN st.done < st.want AND b.attempts + 1 >= $2
					THEN COALESCE(st.top_refusal, NULLIF(st.dead_reason, ''), 'no scenario proved in ' || (b.attempts + 1) || ' attempts')
					ELSE b.notes END
			FROM settled st
			WHERE b.run_id = $1 AND b.id = st.id
			RETURNING b.id, b.ord, b.state`, run, maxAttempts)
		if err != nil {
			return err
		}
		type change struct {
			id, state string
			ord       int
		}
		var cs []change
		for rows.Next() {
			var c change
			if err := rows.Scan(&c.id, &c.ord, &c.state); err != nil {
				rows.Close()
				return err
			}
			cs = append(cs, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].ord < cs[j].ord || (cs[i].ord == cs[j].ord && cs[i].id < cs[j].id) })
		for _, c := range cs {
			switch c.state {
			case BucketDone:
				res.Done = append(res.Done, c.id)
			case BucketBlocked:
				res.Blocked = append(res.Blocked, c.id)
			default:
				res.Reopened = append(res.Reopened, c.id)
			}
		}
		return nil
	})
	if err != nil {
		return FoldResult{}, fmt.Errorf("canvas: fold run %s: %w", run, err)
	}
	return res, nil
}
