// Package tau2 exports a written suite as one τ²-bench document: the
// domain's policy, tools and data, and a task per scenario whose setup is an
// initial state merged into that data.
//
// τ²-bench judges a task by a reward basis (the final data, what the agent
// said, the calls it made), so the export replays each scenario in its world
// and picks the first basis under which the reference passes and the wrong
// agent fails: the one that does nothing, or that makes the scenario's
// tempting move. A scenario no basis can judge that way is refused with a
// code and the reason, never exported as a task that cannot fail; so is one
// whose setup or solution no longer runs on the world, whose setup cannot be
// merged (it removes rows, or changes a table without a key), whose solution
// replays two ways or leaves unchanged what it is declared to change, or that
// holds two wrong moves. docs/EXPORT.md lists the codes.
package tau2
