// Package progress is what a person watching a run sees: a read-only JSON API
// and a small live web page over the ledger, and a CLI progress bar.
//
// Everything here reads the canvas; nothing writes it. Numbers come from the
// ledger (credited names), so what is shown never moves backwards when a
// writer dies or a slice is redelivered. A run's status is its ledger state,
// except that an unfinished run with no ledger activity for the stall period
// is shown stalled: the ledger cannot say a process died, but it can say
// nothing has moved.
//
// The page polls with ETags and asks only for the selected run's detail, so
// an idle page costs 304s; the bar and the process's logs share one Terminal,
// so neither cuts into the other.
package progress
