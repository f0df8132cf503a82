// Package metrics holds the Prometheus instruments every suitegen process
// exports, and the tiny HTTP server that exposes them beside the health and
// readiness probes Kubernetes uses.
//
// Nothing here touches the default registry: each process (and each test)
// passes its own, so several roles can share one binary, and tests can run in
// parallel without colliding. Every series carries the constant labels run
// and role; other labels are bounded (gate, code, model, outcome, state, kind)
// and never name a scenario, which would make cardinality grow with the suite.
//
// One Metrics per (registry, run, role): New panics on a second registration
// of the same pair, so a process running several writers in-process shares one
// Metrics among them (every field is safe for concurrent use).
//
// The metric list here, docs/METRICS.md and deploy/grafana/suitegen.json are
// kept in step by tests.
package metrics
