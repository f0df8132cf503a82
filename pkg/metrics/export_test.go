package metrics

import "time"

// SetClock replaces the ledger collector's clock, so tests move time
// instead of waiting for it.
func (l *Ledger) SetClock(now func() time.Time) { l.now = now }
