// Package taubench exports a written suite as τ-bench tasks.
//
// τ-bench grades a conversation only by the data it ends in and the outputs
// the agent said, and starts every task from the same data; a scenario starts
// from its own setup. So the export replays each scenario in its world and
// writes, with its task, the documents its setup made, as the data map
// (tau-bench.json beside the contract) says rows become the benchmark's
// documents.
//
// A scenario is left out, counted and named with a code and the reason, when
// the task could not tell the right agent from the wrong one it is about: it
// was written for another world, its setup no longer runs or cannot be carried
// in the data, an action fails on replay, an agent doing nothing would pass,
// or its wrong move leaves the data as the reference calls do. A
// conversation with two requests not to be carried out is left out too: a
// task holds one wrong move. docs/EXPORT.md lists the codes.
package taubench
