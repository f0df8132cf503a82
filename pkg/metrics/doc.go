// Package metrics holds the Prometheus instruments every suitegen process
// exports, and the tiny HTTP server that exposes them beside the health and
// readiness probes Kubernetes uses.
//
// Nothing here touches the default registry: each process (and each test)
// passes its own, so several roles can share one binary, and tests can run in
// parallel without colliding. Every series carries the constant label role
// and, except the provider bucket's (limiter_*), the label run; other labels
// are bounded (gate, code, model, outcome, state, kind) and never name a
// scenario, which would make cardinality grow with the suite.
//
// One registration per (registry, role): New panics on a second registration
// of the same role. A process bound to one run (planner, reviewer) passes it
// to New; a process serving many (a writer) passes "" and records each slice
// under m.For(run), which shares the registration. Every field is safe for
// concurrent use, so in-process writers share one Metrics.
//
// A process's instruments count what that process did since it started, so
// they leave with its pod. Run totals come from Ledger instead: a collector
// that reads the run figures from the ledger at scrape time (suitegen serve
// registers it), cached and bounded in the runs it reads.
//
// The metric list here, docs/METRICS.md and deploy/grafana/suitegen.json are
// kept in step by tests.
package metrics
