// Package contract loads and validates an agent contract directory: contract.yaml,
// the world (world/schema.sql and world/seed/*.jsonl), the Starlark handlers,
// the sub-goal catalogue and shared lib files.
//
// Validation never stops at the first problem: a contract author fixes a
// hand-written directory in as few rounds as possible, so Load reports every
// problem it can see, each with the file, the line and a stable code that
// tooling and documentation can rely on (docs/contract.md lists them). What
// only a database can find (NOT NULL, foreign keys and CHECK constraints
// violated by seed rows) is left to the world builder.
package contract
