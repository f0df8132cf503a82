// Package prove decides, by code, whether a scenario is kept. A scenario
// passes six gates, in this order (Gates), each on throwaway copies of the
// frozen world; the first that refuses ends the proof:
//
//   - static: its fields, use case, tools, arguments (against each tool's
//     params schema), sub-goals (none named twice) and whether each is
//     judged, the rules it names, an ask's missing step, the order its
//     solution calls gated tools in, references to earlier steps, an act of
//     the use case's tools, no placeholder data, and no text aimed at the
//     grader (nor at the agent outside an adversarial case);
//   - ready: its setup is reproducible and touches only the case (it adds
//     rows, and changes or deletes only the caller's rows or rows the case
//     names); after it, its ready queries confirm what the instruction
//     presumes;
//   - solvable: setup, then the solution: every step answered ok (a step
//     whose tool has no handler is refused, never passed), every
//     code-settled check holds, no check is broken, and no contract rule the
//     scenario leaves unnamed is broken;
//   - grounding: every code or reference handed to the caller exists in the
//     world, the setup or the solution's results; every output is a whole
//     value of a result, and not only the solution's own argument handed
//     back; every caller's record a call names is one an agent could know
//     of; the person on the line is the one the reference identifies, and a
//     success does not act for a holder the caller's words say they are not,
//     unless the reference verifies them by their own name (holder.go);
//   - outcome: the expected outcome is proved by the world, the contract's
//     requires and its rules' checks, never by the scenario's own checks: a
//     success changes what it claims to change, with every state-changing
//     call's change lasting; a refusal or escalation is of an act the world
//     refuses (not for a record that does not exist or a malformed call) or
//     that a named rule's check forbids for the act itself; an ask's act is
//     blocked without the missing step, which needs what the caller cannot
//     give, and goes through after it; and none of these rests on a value
//     the caller never states (another the case offers would change it);
//   - not vacuous: the checks fail when the agent does nothing (succeed)
//     and on the tempting path; a success that changes the world has a
//     check that sees the change, not only the call log; and every check
//     fails on at least one run the prover played.
//
// The reference is the request and nothing more (request.go): the records
// the solution names are ones the caller names or an earlier answer shows
// (a record the setup made is not known to the agent until then), and it
// acts on no other record of a table where the caller names one
// (record-named); every write traces to the request, the act once per
// record the caller asks about (unrequested-change, act-once); no check
// fails when the writes the caller never asked for are dropped
// (check-unasked); a callee who asks to be called back gets the callback
// only (call-later); and a refusal's act is the request done right: with
// the value the world gives for an argument nobody stated, or without an
// argument its schema does not require, or with one it leaves out that an
// earlier answer shows, it would go through (tempting-faithful); a success's act sets no column of its record
// away from what it holds to a value the caller never states where keeping
// it would end the world otherwise (unasked-value).
//
// An outbound call (a scenario of an outbound use case) is held to what its
// answer calls for (outbound.go): a callee who answered is identified before
// anything is written; a call a voicemail box or someone else answered is a
// refusal of the act the call is about, changes nothing but the missed-call
// log, has that log checked in the world, and lists its judged sub-goals;
// the purpose record exists and leads to the callee.
//
// A conversation of several requests (a scenario's Then; requests.go) is
// proved request by request, each by every gate, on the world the solutions
// of the requests before it leave; then as a whole: each request is about
// records the caller names (request-unasked), no two are one
// (duplicate-request), and every request's checks still hold at the end of
// the conversation (request-undone).
//
// The runs (Counterfactual) are recorded in the Verdict, so a user can see
// why a scenario is proved (suitegen prove -v). A refusal carries a typed,
// stable Code and a sentence a model can act on; a failure of the database
// is an error, never a refusal. A model never decides whether something
// passed. The suite gate (Admit, Conflict) is the writer's, after a proof.
package prove
