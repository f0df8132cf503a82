// Package canvas is a run's plan and its ledger in Postgres: runs, buckets,
// slices, the journal of proved scenarios, gate refusals and token spend.
//
// The ledger is the source of truth. Progress is derived from credited
// scenario names (a bucket's Done is a count of journal rows, never a number a
// writer reported), so redelivered slices and restarted processes cannot move
// it backwards or count a scenario twice. Every write that must be atomic is one
// transaction, and every write a retrying process may repeat is idempotent.
package canvas
