// Package progress is what a person watching a run sees: a read-only JSON API
// and a small live web page over the ledger, and a CLI progress bar.
//
// Everything here reads the canvas; nothing writes it. Numbers come from the
// ledger (credited names), so what is shown never moves backwards when a
// writer dies or a slice is redelivered.
package progress
