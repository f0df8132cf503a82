// Package prove decides, by code, whether a scenario is kept. A scenario
// passes six gates, in this order (Gates), each on throwaway copies of the
// frozen world; the first that refuses ends the proof:
//
//   - static: its fields, use case, tools, arguments (against each tool's
//     params schema), sub-goals and whether each is judged, the rules it
//     names, an ask's missing step, the order its solution calls gated tools
//     in, and no placeholder data;
//   - ready: after its setup, its ready queries confirm what the
//     instruction presumes;
//   - solvable: setup, then the solution: every step answered ok (a step
//     whose tool has no handler is refused, never passed), every
//     code-settled check holds, no check is broken;
//   - grounding: every code or reference handed to the caller exists in the
//     world, the setup or the solution's results;
//   - outcome: the expected outcome is proved by the world, the contract's
//     requires and its rules' checks, never by the scenario's own checks: a
//     success changes what it claims to change; a refusal or escalation is
//     of an act the world refuses or a named rule's check forbids; an ask's
//     act is blocked without the missing step and goes through after it;
//   - not vacuous: the checks fail when the agent does nothing (succeed)
//     and on the tempting path; a success that changes the world has a
//     check that sees the change, not only the call log; and every check
//     fails on at least one run the prover played.
//
// An outbound call (a scenario of an outbound use case) is held to what its
// answer calls for (outbound.go): a callee who answered is identified before
// anything is written; a call a voicemail box or someone else answered is a
// refusal of the act the call is about, changes nothing but the missed-call
// log, has that log checked in the world, and lists its judged sub-goals;
// the purpose record exists and leads to the callee.
//
// The runs (Counterfactual) are recorded in the Verdict, so a user can see
// why a scenario is proved (suitegen prove -v). A refusal carries a typed,
// stable Code and a sentence a model can act on; a failure of the database
// is an error, never a refusal. A model never decides whether something
// passed. The suite gate (Admit, Conflict) is the writer's, after a proof.
package prove
