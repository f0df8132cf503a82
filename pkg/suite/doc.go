// Package suite writes a run's outputs, and only from the ledger: index.json,
// catalogue.json, scenarios/<name>/scenario.json and report.json under OUT.
// It reads a written suite back, and exports it as JSONL. The benchmark
// exports replay the suite in its world and live apart (pkg/taubench,
// pkg/tau2); what both make of a suite and of a scenario the same way (its
// scenarios in index order, a conversation read as one request) is here, so
// they agree.
//
// The ledger decides what exists: scenario folders it does not name are
// removed, and what is written depends only on ledger content, ordered by
// stable keys, so the scenarios/ tree is byte-identical however many writers
// produced it and in whatever order their work completed. report.json carries
// no timestamps either.
package suite
