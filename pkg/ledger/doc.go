// Package ledger is a run's plan and its record in Postgres: runs, buckets,
// slices, the journal of proved scenarios, gate refusals, token spend,
// sub-goals writers added, and the files of every contract a run uses.
//
// The ledger is the source of truth. Progress is derived from credited
// scenario names (a bucket's Done is a count of journal rows, never a number a
// writer reported), so redelivered slices and restarted processes cannot move
// it backwards or count a scenario twice. Every write that must be atomic is one
// transaction, and every write a retrying process may repeat is idempotent.
//
// The package owns the states of runs, buckets and slices (state.go) and the
// moves between them: a move the lifecycle does not allow is a
// *TransitionError, never a silent no-op. Files hold what their names say:
// store.go the runs, bucket.go and slice.go the canvas and its folding,
// journal.go the proved scenarios, refusals.go, spend.go (with the budget),
// subgoals.go and contracts.go.
package ledger
