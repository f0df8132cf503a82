// Package wire assembles the parts a suitegen process runs on, the same way
// for `suitegen run` and for the distributed planner, writer and reviewer:
// the model client a writer drives (the builtin writer, or a provider under
// the limiter every writer shares), the progress endpoint, a --plan file.
// It holds no role's logic; the roles are pkg/planner, pkg/writer and
// pkg/reviewer, and the single-process orchestrator is pkg/run.
package wire
