package prove

// Gate is one stage of a proof. Gates run in the order of Gates; the first
// that refuses ends the proof.
type Gate string

// The gates, in the order they run. GateSuite is the writer's, after a kept
// proof: it admits the scenario into a run's ledger.
const (
	GateStatic     Gate = "static"
	GateReady      Gate = "ready"
	GateSolvable   Gate = "solvable"
	GateGrounding  Gate = "grounding"
	GateOutcome    Gate = "outcome"
	GateNotVacuous Gate = "not-vacuous"
	GateSuite      Gate = "suite"
)

// Gates lists the gates in the order they run.
var Gates = []Gate{GateStatic, GateReady, GateSolvable, GateGrounding, GateOutcome, GateNotVacuous, GateSuite}

// Code says why a gate refused a scenario. Codes are stable; the sentence
// beside them may improve.
type Code string

// Static gate codes.
const (
	CodeBadName          Code = "bad-name"
	CodeMissingField     Code = "missing-field"
	CodeUnknownUseCase   Code = "unknown-use-case"
	CodeBadKind          Code = "bad-kind"
	CodeBadExpects       Code = "bad-expects"
	CodeTemptingRequired Code = "tempting-required"
	CodeMissingRequired  Code = "missing-required"
	CodeEmptySolution    Code = "empty-solution"
	CodeUnknownTool      Code = "unknown-tool"
	CodeNoHandler        Code = "no-handler"
	CodeBadArgs          Code = "bad-args"
	CodeRequiresUnmet    Code = "requires-unmet"
	CodeNoSubGoals       Code = "no-sub-goals"
	CodeUnknownSubGoal   Code = "unknown-sub-goal"
	CodeBadParams        Code = "bad-params"
	CodeJudgedMismatch   Code = "judged-mismatch"
	// CodeJudgedUnrelated: a judged sub-goal that names the tools it is
	// about, listed on a request that calls none of them.
	CodeJudgedUnrelated  Code = "judged-unrelated"
	CodeNoSettledCheck   Code = "no-settled-check"
	CodeUnknownRule      Code = "unknown-rule"
	CodeRuleCheckMissing Code = "rule-check-missing"
	CodePlaceholder      Code = "placeholder"
	// Outbound calls (see outboundStatic).
	CodeOutboundMismatch   Code = "outbound-mismatch"
	CodeAnswerOutcome      Code = "answer-outcome"
	CodeAnswerUnhandled    Code = "answer-unhandled"
	CodeUnansweredAct      Code = "unanswered-act"
	CodeTemptingOffPurpose Code = "tempting-off-purpose"
	CodeJudgementMissing   Code = "judgement-missing"
	CodeDuplicateSubGoal   Code = "duplicate-sub-goal"
	CodeActOffUseCase      Code = "act-off-use-case"
	CodeBadRef             Code = "bad-ref"
	CodeInjection          Code = "injection"
	// CodeCallLater: a callee who asks to be called later gets more than the
	// callback (and the identification booking it needs).
	CodeCallLater Code = "call-later"
	// CodeStandIn: free text that only repeats its parameter's description.
	CodeStandIn Code = "stand-in-text"
	// CodeBadThen: further requests where a conversation may not have them
	// (an outbound call, after a hand-over), or more than MaxRequests.
	CodeBadThen Code = "bad-then"
	// CodeAfterHandoff: a solution step after a step whose tool ends the
	// conversation; nobody is on the line to do it for.
	CodeAfterHandoff Code = "after-handoff"
	// CodeTurnsShort: max_turns cannot hold the reference's calls and a
	// message per request.
	CodeTurnsShort Code = "turns-short"
)

// Ready gate codes.
const (
	CodeSetupFailed   Code = "setup-failed"
	CodeUnknownCaller Code = "unknown-caller"
	CodeBadReady      Code = "bad-ready"
	CodeNotReady      Code = "not-ready"
	// CodePurposeNotCallee: an outbound call's purpose record is missing
	// after setup, or belongs to someone other than caller_id.
	CodePurposeNotCallee Code = "purpose-not-callee"
	CodeSetupOverreach   Code = "setup-overreach"
)

// Solvable gate codes (CodeStepCrashed is also the outcome gate's).
const (
	CodeStepCrashed Code = "step-crashed"
	CodeStepRefused Code = "step-refused"
	CodeCheckBroken Code = "check-broken"
	CodeCheckFailed Code = "check-failed"
	CodeRuleBroken  Code = "rule-broken"
	// CodeCheckRowOrder: a check's verdict after the solution rests on the
	// order of rows a query read without ORDER BY.
	CodeCheckRowOrder Code = "check-row-order"
)

// Grounding gate codes (CodeCallerMismatch is also the outcome gate's).
const (
	CodeUngrounded         Code = "ungrounded"
	CodeOutputNotInResults Code = "output-not-in-results"
	CodeCallerMismatch     Code = "caller-mismatch"
	CodeUnreachableRecord  Code = "unreachable-record"
	CodeVagueOutput        Code = "vague-output"
	// CodeEchoedOutput: an output is shown only where an answer hands back
	// an argument the solution sent, and the caller never says it nor the
	// world held it.
	CodeEchoedOutput Code = "echoed-output"
	// CodeStaleOutput: an output is shown only by cells of records the
	// solution then changed away from it (what held before the act).
	CodeStaleOutput Code = "stale-output"
	// CodeDisclosure: an output is held only by records of other people.
	CodeDisclosure Code = "disclosure"
	// CodeRecordNamed: a record the solution reads or acts on is neither
	// named by the caller nor shown by an earlier answer of the solution, or
	// the caller names another record of its table.
	CodeRecordNamed Code = "record-named"
	// CodeValueNotInWorld: an argument grounded to a column takes a value
	// no row of it holds, no setup made, no answer showed and the caller
	// never says; or free text a solution's act sends (no record, no enum)
	// that the caller never says and no answer shows.
	CodeValueNotInWorld Code = "value-not-in-world"
	// CodeSameValue: two arguments grounded to one column, naming two roles
	// of a record, are equal where the world's records never are.
	CodeSameValue Code = "same-value"
	// CodeRequestUnasked: a request of a conversation of several is about
	// records the caller never names, or about none while its act takes no
	// value the caller states.
	CodeRequestUnasked Code = "request-unasked"
)

// Outcome gate codes: the expected outcome is proved by the world, the
// contract's requires or a rule's check, never by the scenario's own checks.
const (
	CodeNoEffect          Code = "no-effect"
	CodeRefusalUngrounded Code = "refusal-ungrounded"
	CodeNoHandoff         Code = "no-handoff"
	CodeAskUnblocked      Code = "ask-unblocked"
	CodeAskStillRefused   Code = "ask-still-refused"
	// CodeCalleeUnidentified: an outbound call the callee answered whose
	// solution does not identify them before it writes anything.
	CodeCalleeUnidentified Code = "callee-unidentified"
	CodeUnstatedChoice     Code = "unstated-choice"
	CodeAskAnswerable      Code = "ask-answerable"
	// The request: every write of the solution traces to what the caller
	// asks, and a refusal is of the act the caller asks for, done right.
	CodeUnrequestedChange Code = "unrequested-change"
	CodeActOnce           Code = "act-once"
	CodeCheckUnasked      Code = "check-unasked"
	CodeTemptingFaithful  Code = "tempting-faithful"
	// CodeUnaskedValue: a success's state-changing call sets a column of
	// the record it names away from what it holds, to a value the caller
	// never states, and the world ends otherwise than with the record's own
	// value kept.
	CodeUnaskedValue Code = "unasked-value"
	// CodeConditionUnmet: a success's caller wants the act only on a
	// condition of an amount ("only if the new total stays under $300"),
	// the solution's answers show it unmet, and the solution acts.
	CodeConditionUnmet Code = "condition-unmet"
	// CodeInstructionContradicts: a success's state-changing call sends a
	// value other than the one the caller asks for in their own words.
	CodeInstructionContradicts Code = "instruction-contradicts"
	// CodeDuplicateRequest: two requests of a conversation are one: the
	// same use case about the same records, or the same write twice.
	CodeDuplicateRequest Code = "duplicate-request"
	// CodeRequestUndone: a request's check holds after its own solution but
	// not at the end of the conversation (every solution played in order).
	CodeRequestUndone Code = "request-undone"
)

// Not-vacuous gate codes (CodeCheckBroken is also this gate's).
const (
	CodeVacuous        Code = "vacuous"
	CodeTemptingPasses Code = "tempting-passes"
	CodeEffectUnseen   Code = "effect-unchecked"
	CodeVacuousCheck   Code = "vacuous-check"
	// CodeCheckOffAct: a success's check that sees the act takes, for a
	// param named like an argument of the acts, a value no act sends.
	CodeCheckOffAct Code = "check-off-act"
	// CodeMissedCallUnchecked: an outbound call the callee did not answer
	// logs the miss, yet every check holds on the world as it was before,
	// given the same call log.
	CodeMissedCallUnchecked Code = "missed-call-unchecked"
	// CodeValueUnchecked: a success's state-changing call sends a value the
	// caller asks for, and with another value the world takes in its place
	// every check still holds.
	CodeValueUnchecked Code = "value-unchecked"
	// CodeRecordUnchecked: a success's state-changing call names a record of
	// the caller's, and with another record of theirs in its place every
	// check still holds.
	CodeRecordUnchecked Code = "record-unchecked"
	// CodeTableOnly: a success's only checks that fail when nothing is done
	// are row_written: any write to those tables passes.
	CodeTableOnly Code = "table-only"
	// CodeNarrowCheck: a refusal's check names a value of the act the caller
	// never gives, and with another value there every check holds.
	CodeNarrowCheck Code = "narrow-check"
)

// Suite gate codes: the writer's, when the ledger will not take a proved
// scenario (see Admit and Conflict).
const (
	CodeUnknownBucket    Code = "unknown-bucket"
	CodeBucketFull       Code = "bucket-full"
	CodeDuplicateName    Code = "duplicate-name"
	CodeDuplicateBranch  Code = "duplicate-branch"
	CodeDuplicateContent Code = "duplicate-content"
	CodeDuplicateCode    Code = "duplicate-code"
)

// GateCode is one refusal a gate can give.
type GateCode struct {
	Gate Gate
	Code Code
}

// Codes is every refusal the gates can give, in the order docs/scenario.md
// lists them (gate order).
var Codes = []GateCode{
	{GateStatic, CodeBadName}, {GateStatic, CodeMissingField}, {GateStatic, CodeUnknownUseCase},
	{GateStatic, CodeBadKind}, {GateStatic, CodeBadExpects}, {GateStatic, CodeTemptingRequired},
	{GateStatic, CodeMissingRequired}, {GateStatic, CodeEmptySolution}, {GateStatic, CodeUnknownTool},
	{GateStatic, CodeNoHandler}, {GateStatic, CodeBadArgs}, {GateStatic, CodeRequiresUnmet},
	{GateStatic, CodeNoSubGoals}, {GateStatic, CodeUnknownSubGoal}, {GateStatic, CodeBadParams},
	{GateStatic, CodeJudgedMismatch}, {GateStatic, CodeJudgedUnrelated}, {GateStatic, CodeNoSettledCheck}, {GateStatic, CodeUnknownRule},
	{GateStatic, CodeRuleCheckMissing}, {GateStatic, CodePlaceholder},
	{GateStatic, CodeOutboundMismatch}, {GateStatic, CodeAnswerOutcome}, {GateStatic, CodeAnswerUnhandled},
	{GateStatic, CodeUnansweredAct}, {GateStatic, CodeTemptingOffPurpose}, {GateStatic, CodeJudgementMissing},
	{GateStatic, CodeDuplicateSubGoal}, {GateStatic, CodeActOffUseCase}, {GateStatic, CodeBadRef}, {GateStatic, CodeInjection},
	{GateStatic, CodeCallLater}, {GateStatic, CodeStandIn}, {GateStatic, CodeBadThen}, {GateStatic, CodeAfterHandoff}, {GateStatic, CodeTurnsShort},
	{GateReady, CodeSetupFailed}, {GateReady, CodeUnknownCaller}, {GateReady, CodeBadReady}, {GateReady, CodeNotReady},
	{GateReady, CodePurposeNotCallee}, {GateReady, CodeSetupOverreach},
	{GateSolvable, CodeStepCrashed}, {GateSolvable, CodeStepRefused}, {GateSolvable, CodeCheckBroken}, {GateSolvable, CodeCheckFailed},
	{GateSolvable, CodeRuleBroken}, {GateSolvable, CodeCheckRowOrder},
	{GateGrounding, CodeUngrounded}, {GateGrounding, CodeOutputNotInResults}, {GateGrounding, CodeCallerMismatch},
	{GateGrounding, CodeUnreachableRecord}, {GateGrounding, CodeVagueOutput}, {GateGrounding, CodeEchoedOutput}, {GateGrounding, CodeStaleOutput}, {GateGrounding, CodeDisclosure}, {GateGrounding, CodeRecordNamed},
	{GateGrounding, CodeValueNotInWorld}, {GateGrounding, CodeSameValue}, {GateGrounding, CodeRequestUnasked},
	{GateOutcome, CodeNoEffect}, {GateOutcome, CodeRefusalUngrounded}, {GateOutcome, CodeNoHandoff},
	{GateOutcome, CodeAskUnblocked}, {GateOutcome, CodeAskStillRefused}, {GateOutcome, CodeStepCrashed},
	{GateOutcome, CodeCallerMismatch}, {GateOutcome, CodeCalleeUnidentified}, {GateOutcome, CodeUnreachableRecord}, {GateOutcome, CodeRecordNamed},
	{GateOutcome, CodeUnstatedChoice}, {GateOutcome, CodeAskAnswerable},
	{GateOutcome, CodeUnrequestedChange}, {GateOutcome, CodeActOnce}, {GateOutcome, CodeCheckUnasked},
	{GateOutcome, CodeTemptingFaithful}, {GateOutcome, CodeUnaskedValue}, {GateOutcome, CodeConditionUnmet}, {GateOutcome, CodeInstructionContradicts}, {GateOutcome, CodeCallLater},
	{GateOutcome, CodeDuplicateRequest}, {GateOutcome, CodeRequestUndone},
	{GateNotVacuous, CodeVacuous}, {GateNotVacuous, CodeTemptingPasses}, {GateNotVacuous, CodeEffectUnseen},
	{GateNotVacuous, CodeVacuousCheck}, {GateNotVacuous, CodeCheckOffAct}, {GateNotVacuous, CodeCheckBroken}, {GateNotVacuous, CodeMissedCallUnchecked}, {GateNotVacuous, CodeValueUnchecked}, {GateNotVacuous, CodeRecordUnchecked}, {GateNotVacuous, CodeTableOnly}, {GateNotVacuous, CodeNarrowCheck},
	{GateSuite, CodeUnknownBucket}, {GateSuite, CodeBucketFull}, {GateSuite, CodeDuplicateName},
	{GateSuite, CodeDuplicateBranch}, {GateSuite, CodeDuplicateContent}, {GateSuite, CodeDuplicateCode},
}
