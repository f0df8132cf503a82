package writer

import (
	"context"
	"errors"
	"fmt"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// A slice ends dead on what its own deliveries charge it in the ledger
// (ledger.Charges), not on how often the queue delivered it: a writer killed
// for a reason of its own, or one that stops, must not use up a slice the
// way a slice that fails or kills its writers does.
//
//   - A delivery whose work failed on the slice is charged as a failure;
//     at MaxFailures failures the slice is dead.
//   - A delivery lost with its writer (no end recorded) before the slice
//     journalled anything more is charged as lost; a delivery that finds
//     MaxLost of them before it is dead at once, before any work. This is
//     what ends a slice that kills every writer that takes it.
//   - A release that is not the slice's fault (a writer stopping, a
//     provider refusing the writer's key) and an outage (the writer holds
//     the delivery) charge nothing; nor does a lost delivery after which
//     the journal grew: the slice was being written.
//
// The queue's MaxDeliver stays above these bounds as the server's backstop.

// Defaults of Config.MaxFailures and Config.MaxLost.
const (
	DefaultMaxFailures = 5
	DefaultMaxLost     = 10
)

// chargedError is a slice its deliveries have charged to their bound.
type chargedError struct {
	what     string // "failed" or "lost with their writer"
	n, bound int
}

func (e *chargedError) Error() string {
	return fmt.Sprintf("dead-lettered: %d of its deliveries %s (the bound is %d)", e.n, e.what, e.bound)
}

// begin records that this writer began the delivery and refuses the work
// when the slice's earlier deliveries reached a bound (a *chargedError). A
// slice the ledger does not record is not charged.
func (w *Writer) begin(ctx context.Context, d Delivery) error {
	s := d.Slice()
	c, err := w.cfg.Ledger.BeginDelivery(ctx, s.Run, s.ID, d.Attempt(), w.cfg.ID)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("begin delivery: %w", err)
	case c.Lost >= w.cfg.MaxLost:
		return &chargedError{what: "were lost with their writer before it progressed", n: c.Lost, bound: w.cfg.MaxLost}
	case c.Failed >= w.cfg.MaxFailures:
		return &chargedError{what: "failed", n: c.Failed, bound: w.cfg.MaxFailures}
	}
	return nil
}

// end records how the delivery ended (failed or released) and reports
// whether the slice's failures have reached their bound.
func (w *Writer) end(ctx context.Context, d Delivery, outcome ledger.DeliveryOutcome, reason string) (exhausted bool, err error) {
	s := d.Slice()
	c, err := w.cfg.Ledger.EndDelivery(ctx, s.Run, s.ID, d.Attempt(), w.cfg.ID, outcome, reason)
	if errors.Is(err, ledger.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return c.Failed >= w.cfg.MaxFailures, nil
}
