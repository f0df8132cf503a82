package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Slice is one unit of work on the queue.
type Slice struct {
	RunID      string     `json:"run_id"`
	ID         string     `json:"id"`
	Round      int        `json:"round"`
	Kind       SliceKind  `json:"kind"`
	BucketIDs  []string   `json:"bucket_ids"`
	State      SliceState `json:"state"`
	Writer     string     `json:"writer,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	Deliveries int        `json:"deliveries"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// ClaimSlice records a slice and marks its buckets claimed by it, in one
// transaction. It is idempotent on (run, id): a slice already recorded is left
// as it is and its buckets are not touched again (they may have been folded
// since). Every bucket must exist and be open (open -> claimed).
func (s *Store) ClaimSlice(ctx context.Context, sl Slice) error {
	if sl.RunID == "" || sl.ID == "" {
		return errors.New("ledger: claim slice: RunID and ID are required")
	}
	if len(sl.BucketIDs) == 0 {
		return fmt.Errorf("ledger: claim slice %s: no buckets", sl.ID)
	}
	kind := cmp.Or(sl.Kind, SliceWork)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO slices (run_id, id, round, kind, bucket_ids) VALUES ($1,$2,$3,$4,$5)
			ON CONFLICT (run_id, id) DO NOTHING`, sl.RunID, sl.ID, sl.Round, kind, sl.BucketIDs)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		tag, err = tx.Exec(ctx, `UPDATE buckets SET state = $4, claimed_by = $2 WHERE run_id = $1 AND id = ANY($3) AND state = $5`,
			sl.RunID, sl.ID, sl.BucketIDs, BucketClaimed, BucketOpen)
		if err != nil {
			return err
		}
		if n := distinct(sl.BucketIDs); tag.RowsAffected() != int64(n) {
			return fmt.Errorf("%d of its %d buckets exist and are open", tag.RowsAffected(), n)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: claim slice %s of run %s: %w", sl.ID, sl.RunID, err)
	}
	return nil
}

// RedealSlice records sl, a slice that takes over buckets a dead slice of the
// same run still holds, and moves their claims to it, in one transaction, so
// they are written in the dead slice's round rather than a later one. It
// reports false, and changes nothing, when that slice is not dead (done
// after all: acked once its writer's work had committed). It is idempotent on (run,
// sl.ID): a slice already recorded reports true and is left as it is. Every
// bucket of sl must be claimed by the dead slice.
func (s *Store) RedealSlice(ctx context.Context, dead string, sl Slice) (bool, error) {
	if sl.RunID == "" || sl.ID == "" || dead == "" {
		return false, errors.New("ledger: redeal slice: RunID, ID and the dead slice are required")
	}
	if len(sl.BucketIDs) == 0 {
		return false, fmt.Errorf("ledger: redeal slice %s: no buckets", sl.ID)
	}
	kind := cmp.Or(sl.Kind, SliceWork)
	moved := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		moved = false
		// The lock keeps a late ack from making the dead slice done while
		// its buckets move.
		var state SliceState
		err := tx.QueryRow(ctx, `SELECT state FROM slices WHERE run_id = $1 AND id = $2 FOR UPDATE`, sl.RunID, dead).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("slice %s: %w", dead, ErrNotFound)
		}
		if err != nil {
			return err
		}
		var one int
		err = tx.QueryRow(ctx, `SELECT 1 FROM slices WHERE run_id = $1 AND id = $2`, sl.RunID, sl.ID).Scan(&one)
		switch {
		case err == nil:
			moved = true // taken over before
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		case state != SliceDead:
			return nil // not dead (done after all): nothing to take over
		}
		if _, err := tx.Exec(ctx, `INSERT INTO slices (run_id, id, round, kind, bucket_ids) VALUES ($1,$2,$3,$4,$5)`,
			sl.RunID, sl.ID, sl.Round, kind, sl.BucketIDs); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE buckets SET claimed_by = $2 WHERE run_id = $1 AND id = ANY($3) AND state = $4 AND claimed_by = $5`,
			sl.RunID, sl.ID, sl.BucketIDs, BucketClaimed, dead)
		if err != nil {
			return err
		}
		if n := distinct(sl.BucketIDs); tag.RowsAffected() != int64(n) {
			return fmt.Errorf("%d of its %d buckets are held by dead slice %s", tag.RowsAffected(), n, dead)
		}
		moved = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("ledger: redeal slice %s of run %s: %w", sl.ID, sl.RunID, err)
	}
	return moved, nil
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
		return nil, fmt.Errorf("ledger: slices of run %s: %w", run, err)
	}
	defer rows.Close()
	var out []Slice
	for rows.Next() {
		var sl Slice
		if err := rows.Scan(&sl.RunID, &sl.ID, &sl.Round, &sl.Kind, &sl.BucketIDs, &sl.State, &sl.Writer, &sl.Reason,
			&sl.Deliveries, &sl.CreatedAt, &sl.FinishedAt); err != nil {
			return nil, fmt.Errorf("ledger: slices of run %s: %w", run, err)
		}
		out = append(out, sl)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: slices of run %s: %w", run, err)
	}
	return out, nil
}

// Deaths counts, for each bucket of run that has any, the dead slices that
// single it out: slices of that bucket alone that journalled nothing of it
// (see singledOut). The planner deals a dead slice's bucket again only while
// they are fewer than its bound, and Fold blocks the bucket at it.
func (s *Store) Deaths(ctx context.Context, run string) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT b.id, count(*) FROM buckets b JOIN slices d ON d.run_id = b.run_id
		WHERE b.run_id = $1 AND d.state = $2 AND `+singledOut+`
		GROUP BY b.id`, run, SliceDead)
	if err != nil {
		return nil, fmt.Errorf("ledger: deaths of run %s: %w", run, err)
	}
	out := map[string]int{}
	var id string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error {
		out[id] = n
		return nil
	}); err != nil {
		return nil, fmt.Errorf("ledger: deaths of run %s: %w", run, err)
	}
	return out, nil
}

// FinishSlice moves a slice from published to done, or to dead with a
// reason, and records the writer and delivery count. Finishing a slice again
// in the state it is in changes nothing (the first finish is kept); a dead
// slice that is acked after all becomes done (its work did commit); a done
// slice cannot die (a *TransitionError, which a caller racing another
// process's finish may take as "finished first by the other").
func (s *Store) FinishSlice(ctx context.Context, run, id string, to SliceState, writer, reason string, deliveries int) error {
	if !to.Finished() {
		return fmt.Errorf("ledger: finish slice %s: state %q is neither done nor dead", id, to)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE slices SET state = $3, writer = $4, reason = $5, deliveries = GREATEST(deliveries, $6),
		finished_at = COALESCE(finished_at, now())
		WHERE run_id = $1 AND id = $2 AND state = ANY($7)`,
		run, id, to, writer, reason, deliveries, to.from())
	if err != nil {
		return fmt.Errorf("ledger: finish slice %s of run %s: %w", id, run, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var from SliceState
	err = s.pool.QueryRow(ctx, `SELECT state FROM slices WHERE run_id = $1 AND id = $2`, run, id).Scan(&from)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("ledger: finish slice %s of run %s: %w", id, run, ErrNotFound)
	case err != nil:
		return fmt.Errorf("ledger: finish slice %s of run %s: %w", id, run, err)
	}
	if err := from.To(to); err != nil {
		var te *TransitionError
		if errors.As(err, &te) {
			te.ID = run + "/" + id
		}
		return err
	}
	return nil
}

// claimed is a bucket claimed by a finished slice, with what folding it
// needs from the journal, the refusals and the slice.
type claimed struct {
	id                     string
	state                  BucketState
	want, attempts, done   int
	refused                int
	notes                  string
	topRefusal, deadReason string
	// dead: the slice that settles it is dead; deaths counts the dead
	// slices that single the bucket out (singledOut), this one included.
	dead   bool
	deaths int
}

// singledOut is the SQL condition that dead slice d (its state aside) is
// evidence against bucket b: it held b alone and journalled nothing of it.
// A dead slice of several buckets does not say which of them killed its
// writers, if any did (each is dealt again in a slice of its own, which
// does); one that journalled something was being written, so the writers
// it lost died for reasons of their own (killed, evicted, out of memory
// elsewhere). Only a bucket that kills every writer that takes it piles
// such slices up, while writers that die by chance rarely leave one: its
// MaxLost deliveries must all be lost before the first scenario.
const singledOut = `d.bucket_ids = ARRAY[b.id]
	AND NOT EXISTS (SELECT 1 FROM scenarios sc WHERE sc.run_id = d.run_id AND sc.bucket_id = b.id AND sc.slice_id = d.id)`

// claimedByFinished reads, and locks for the fold, the buckets claimed by a
// finished slice of run, in ord order. A bucket's top refusal is its most
// frequent gate/code with that kind's latest message.
func claimedByFinished(ctx context.Context, tx pgx.Tx, run string) ([]claimed, error) {
	rows, err := tx.Query(ctx, `
		SELECT b.id, b.state, b.want, b.attempts, b.notes, s.reason, s.state = $3,
			(SELECT count(*) FROM slices d WHERE d.run_id = b.run_id AND d.state = $3 AND `+singledOut+`),
			(SELECT count(*) FROM scenarios sc WHERE sc.run_id = b.run_id AND sc.bucket_id = b.id),
			(SELECT count(*) FROM refusals r WHERE r.run_id = b.run_id AND r.bucket_id = b.id),
			COALESCE((SELECT r.gate || '/' || r.code || ': ' || (array_agg(r.message ORDER BY r.id DESC))[1]
				FROM refusals r WHERE r.run_id = b.run_id AND r.bucket_id = b.id
				GROUP BY r.gate, r.code ORDER BY count(*) DESC, r.gate, r.code LIMIT 1), '')
		FROM buckets b JOIN slices s ON s.run_id = b.run_id AND s.id = b.claimed_by
		WHERE b.run_id = $1 AND s.state = ANY($2)
		ORDER BY b.ord, b.id
		FOR UPDATE OF b`, run, []string{string(SliceDone), string(SliceDead)}, SliceDead)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []claimed
	for rows.Next() {
		var c claimed
		if err := rows.Scan(&c.id, &c.state, &c.want, &c.attempts, &c.notes, &c.deadReason, &c.dead, &c.deaths, &c.done, &c.refused, &c.topRefusal); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
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
// journal: done when its credited scenarios reach want; otherwise it is
// blocked, with the most frequent refusal of the bucket (or the slice's dead
// reason) as its notes, once its attempts, or the dead slices that single
// it out (Deaths), reach maxAttempts, else reopened. Claims are cleared.
// Buckets of slices in flight are left alone.
//
// Only a slice a writer finished short counts as one of the bucket's
// attempts. A dead slice says nothing of what the bucket can write (its
// writers died, or the queue gave up on it), so its bucket keeps its
// attempts, and with them its want and indices: the planner deals it again
// as it was (no top-up cedes it, it stays fresh), and the scenarios written
// for it are the ones the dead slice was given. Its deaths bound it on their
// own, never by adding to its attempts: the planner deals a dead slice's
// buckets again within its round, so a death must not cost a bucket an
// attempt a run without it gives it. Nor do deaths that do not single the
// bucket out block it: a bucket blocked only because writers died around
// it would cede its want, and the run would write other cases than a run
// whose writers lived.
func (s *Store) Fold(ctx context.Context, run string, maxAttempts int) (FoldResult, error) {
	if maxAttempts < 1 {
		return FoldResult{}, fmt.Errorf("ledger: fold run %s: maxAttempts %d < 1", run, maxAttempts)
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
			WHERE b.run_id = $1 AND s.state = $2`, run, SlicePublished).Scan(&res.InFlight); err != nil {
			return err
		}
		settled, err := claimedByFinished(ctx, tx, run)
		if err != nil {
			return err
		}
		batch := &pgx.Batch{}
		for _, st := range settled {
			attempts := st.attempts
			if st.done < st.want && !st.dead {
				attempts++
			}
			next := settle(st.done, st.want, max(attempts, st.deaths), maxAttempts)
			if err := st.state.To(next); err != nil {
				return fmt.Errorf("bucket %s: %w", st.id, err)
			}
			notes := st.notes
			if next == BucketBlocked {
				notes = cmp.Or(st.topRefusal, st.deadReason, Unrefused(st.done, st.want, max(attempts, st.deaths)))
			}
			batch.Queue(`UPDATE buckets SET claimed_by = NULL, refused = $3, attempts = $4, state = $5, notes = $6
				WHERE run_id = $1 AND id = $2`, run, st.id, st.refused, attempts, next, notes)
			switch next {
			case BucketDone:
				res.Done = append(res.Done, st.id)
			case BucketBlocked:
				res.Blocked = append(res.Blocked, st.id)
			default:
				res.Reopened = append(res.Reopened, st.id)
			}
		}
		if batch.Len() > 0 {
			return tx.SendBatch(ctx, batch).Close()
		}
		return nil
	})
	if err != nil {
		return FoldResult{}, fmt.Errorf("ledger: fold run %s: %w", run, err)
	}
	return res, nil
}

// Unrefused is the notes of a bucket blocked with no refusal and no dead
// slice: no gate saw a scenario it could refuse, so the notes say that the
// writer submitted nothing more, not a gate's code it does not have.
func Unrefused(done, want, attempts int) string {
	return fmt.Sprintf("%d of %d proved in %d attempts, and no gate refused any: the writer submitted no other scenario for it", done, want, attempts)
}
