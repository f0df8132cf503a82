// Package suite writes a run's outputs, and only from the ledger: index.json,
// catalogue.json, scenarios/<name>/scenario.json and report.json under OUT,
// plus exports of the written suite: JSONL, and τ-bench and τ²-bench tasks,
// which replay each scenario in its world to carry the data it starts from
// and refuse, counted and named, what the benchmark could not judge.
//
// The ledger decides what exists: scenario folders it does not name are
// removed, and what is written depends only on ledger content, ordered by
// stable keys, so the scenarios/ tree is byte-identical however many writers
// produced it and in whatever order their work completed. report.json carries
// no timestamps either.
package suite
