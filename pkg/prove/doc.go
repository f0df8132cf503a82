// Package prove decides, by code, whether a scenario is kept. A scenario passes
// five gates in order — static, grounding, ready, solvable, not-vacuous — each
// run on throwaway copies of the frozen world:
//
//   - static: its fields, use case, tools, arguments, sub-goals and the order
//     its solution calls gated tools in, with no placeholder data;
//   - ready: after its setup, its ready queries confirm what the instruction
//     presumes;
//   - solvable: setup, then the solution: every step answered ok (a step whose
//     tool has no handler is refused, never passed), every code-settled check
//     holds, no check is broken;
//   - grounding: every code or reference handed to the caller exists in the
//     world, the setup or the solution's results;
//   - not vacuous: setup then nothing makes some check fail (for succeed), and
//     setup then the tempting calls makes some check fail.
//
// A refusal carries a stable code and a sentence a model can act on. A model
// never decides whether something passed.
package prove
