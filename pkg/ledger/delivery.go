package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// DeliveryOutcome is what became of one delivery of a slice, as its writer
// recorded it. A delivery with no record, or left at began, was lost with
// its writer (killed, or silent past the ack wait).
type DeliveryOutcome string

// Delivery outcomes.
const (
	// DeliveryBegan: a writer took the delivery and started on it.
	DeliveryBegan DeliveryOutcome = "began"
	// DeliveryFailed: the work failed on the slice (the slice's fault).
	DeliveryFailed DeliveryOutcome = "failed"
	// DeliveryReleased: released for a reason that is not the slice's (a
	// writer stopping, a provider refusing the writer's key).
	DeliveryReleased DeliveryOutcome = "released"
)

// DeliveryRecord is one recorded delivery of a slice.
type DeliveryRecord struct {
	Delivery int
	Outcome  DeliveryOutcome
	// Journalled is how many scenarios the slice had journalled when the
	// delivery began.
	Journalled int
}

// Charges is what a slice's deliveries so far count against it.
type Charges struct {
	// Failed counts deliveries whose work failed on the slice.
	Failed int
	// Lost counts earlier deliveries lost with their writer before the
	// slice journalled anything more: a slice that kills every writer that
	// takes it piles these up. A lost delivery after which the journal grew
	// is not counted: the slice was being written, so its writer's death
	// says nothing of the slice, and such deliveries are bounded by what
	// the slice wants.
	Lost int
}

// ChargesOf counts the charges of a slice's delivery n (1 on the first)
// from its records (any order) and the scenarios the slice has journalled
// now: Failed over deliveries up to n, Lost over deliveries before n.
func ChargesOf(recs []DeliveryRecord, n, journalledNow int) Charges {
	by := make(map[int]DeliveryRecord, len(recs))
	for _, r := range recs {
		by[r.Delivery] = r
	}
	var c Charges
	for d := 1; d <= n; d++ {
		r, ok := by[d]
		switch {
		case ok && r.Outcome == DeliveryFailed:
			c.Failed++
		case d == n, ok && r.Outcome == DeliveryReleased:
		case !ok:
			c.Lost++
		default: // began, never ended: progressed if the journal grew after it
			after := journalledNow
			for e := d + 1; e <= n; e++ {
				if next, ok := by[e]; ok {
					after = next.Journalled
					break
				}
			}
			if after <= r.Journalled {
				c.Lost++
			}
		}
	}
	return c
}

// BeginDelivery records that writer began delivery n of a slice (once: a
// delivery begun again after an outage keeps its first record) and returns
// the slice's charges at it.
func (s *Store) BeginDelivery(ctx context.Context, run, slice string, n int, writer string) (Charges, error) {
	c, err := s.delivery(ctx, run, slice, n, writer, DeliveryBegan, "")
	if err != nil {
		return Charges{}, fmt.Errorf("ledger: begin delivery %d of slice %s of run %s: %w", n, slice, run, err)
	}
	return c, nil
}

// EndDelivery records how delivery n of a slice ended (failed or released;
// the first end recorded is kept) and returns the slice's charges with it.
func (s *Store) EndDelivery(ctx context.Context, run, slice string, n int, writer string, outcome DeliveryOutcome, reason string) (Charges, error) {
	if outcome != DeliveryFailed && outcome != DeliveryReleased {
		return Charges{}, fmt.Errorf("ledger: end delivery %d of slice %s: outcome %q is neither failed nor released", n, slice, outcome)
	}
	c, err := s.delivery(ctx, run, slice, n, writer, outcome, reason)
	if err != nil {
		return Charges{}, fmt.Errorf("ledger: end delivery %d of slice %s of run %s: %w", n, slice, run, err)
	}
	return c, nil
}

func (s *Store) delivery(ctx context.Context, run, slice string, n int, writer string, outcome DeliveryOutcome, reason string) (Charges, error) {
	if n < 1 {
		return Charges{}, fmt.Errorf("delivery %d < 1", n)
	}
	var c Charges
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var now int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM scenarios WHERE run_id = $1 AND slice_id = $2`, run, slice).Scan(&now); err != nil {
			return err
		}
		// A began record may end; an ended one is kept.
		_, err := tx.Exec(ctx, `INSERT INTO slice_deliveries (run_id, slice_id, delivery, writer, outcome, journalled, reason)
			VALUES ($1,$2,$3,$4,$5,$6,$7)
			ON CONFLICT (run_id, slice_id, delivery) DO UPDATE SET outcome = EXCLUDED.outcome, reason = EXCLUDED.reason, writer = EXCLUDED.writer
			WHERE slice_deliveries.outcome = $8 AND EXCLUDED.outcome <> $8`,
			run, slice, n, writer, outcome, now, reason, DeliveryBegan)
		if err != nil {
			var fk interface{ SQLState() string }
			if errors.As(err, &fk) && fk.SQLState() == "23503" {
				return fmt.Errorf("slice unknown: %w", ErrNotFound)
			}
			return err
		}
		rows, err := tx.Query(ctx, `SELECT delivery, outcome, journalled FROM slice_deliveries
			WHERE run_id = $1 AND slice_id = $2 AND delivery <= $3`, run, slice, n)
		if err != nil {
			return err
		}
		recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DeliveryRecord, error) {
			var r DeliveryRecord
			err := row.Scan(&r.Delivery, &r.Outcome, &r.Journalled)
			return r, err
		})
		if err != nil {
			return err
		}
		c = ChargesOf(recs, n, now)
		return nil
	})
	return c, err
}
