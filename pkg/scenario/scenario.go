// Package scenario is one test of an agent: what the caller wants, the world
// it is grounded in, the reference solution and the checks that settle it.
package scenario

import "fmt"

// Scenario is saved as OUT/scenarios/<name>/scenario.json. Field order here is
// the order on disk.
type Scenario struct {
	Name     string  `json:"name"`
	UseCase  string  `json:"use_case"`
	Branch   string  `json:"branch"`
	Kind     string  `json:"kind"`    // happy | edge | adversarial | failing
	Expects  string  `json:"expects"` // succeed | refuse | ask | escalate
	Bucket   string  `json:"bucket,omitempty"`
	Tests    string  `json:"tests"`
	Persona  Persona `json:"persona"`
	CallerID any     `json:"caller_id,omitempty"`
	// Outbound is set on the scenarios of outbound use cases: the call the
	// agent places, what it is about and who picks up.
	Outbound    *Outbound    `json:"outbound,omitempty"`
	Instruction string       `json:"instruction"`
	Setup       []Statement  `json:"setup,omitempty"`
	Ready       []ReadyCheck `json:"ready,omitempty"`
	Solution    []Call       `json:"solution"`
	Tempting    []Call       `json:"tempting,omitempty"`
	// Missing (expects ask) is the step the agent must ask for: calls that,
	// once they succeed, let the tempting calls through.
	Missing []Call   `json:"missing,omitempty"`
	Outputs []string `json:"outputs,omitempty"`
	// Computed are values the agent must say that it works out from the
	// solution's results (a total, what is left): each says how, and the
	// grounding gate does the sum.
	Computed []Computed `json:"computed,omitempty"`
	// Misremembered are facts the caller gets wrong on purpose: the agent
	// corrects them from the world, or, for a detail that proves who the
	// caller is, does not go on.
	Misremembered []Misremembered `json:"misremembered,omitempty"`
	SubGoals      []SubGoalRef    `json:"sub_goals"`
	// Rules are the contract rules the scenario tests, by id.
	Rules []string `json:"rules,omitempty"`
	// Then are the further requests of the conversation, in the order the
	// caller makes them: the fields above are request 1. Persona, caller,
	// instruction (which asks for every request), setup, ready and
	// max_turns are the conversation's, shared by every request.
	Then       []Request  `json:"then,omitempty"`
	MaxTurns   int        `json:"max_turns"`
	Provenance Provenance `json:"provenance"`
}

// Request is one further request of a conversation: what a single-request
// scenario says of its outcome, for that request alone. Its references
// ("$N.field") point into its own lists, as request 1's do.
type Request struct {
	UseCase  string       `json:"use_case"`
	Branch   string       `json:"branch,omitempty"`
	Expects  string       `json:"expects"`
	Tests    string       `json:"tests"`
	Solution []Call       `json:"solution"`
	Tempting []Call       `json:"tempting,omitempty"`
	Missing  []Call       `json:"missing,omitempty"`
	Outputs  []string     `json:"outputs,omitempty"`
	Computed []Computed   `json:"computed,omitempty"`
	SubGoals []SubGoalRef `json:"sub_goals"`
	Rules    []string     `json:"rules,omitempty"`
}

// Requests are the scenario's requests in order, each as a single-request
// scenario of its own: the conversation's shared fields with that request's
// outcome. Request 1 is the scenario without Then; a scenario without Then
// is its one request. The views share no slice with sc's Then.
func (sc *Scenario) Requests() []*Scenario {
	first := *sc
	first.Then = nil
	out := []*Scenario{&first}
	for _, r := range sc.Then {
		k := first
		k.UseCase, k.Expects, k.Tests = r.UseCase, r.Expects, r.Tests
		k.Branch = r.Branch
		if k.Branch == "" {
			k.Branch = sc.Branch
		}
		k.Solution, k.Tempting, k.Missing = r.Solution, r.Tempting, r.Missing
		k.Outputs, k.Computed, k.SubGoals, k.Rules = r.Outputs, r.Computed, r.SubGoals, r.Rules
		out = append(out, &k)
	}
	return out
}

// Persona is who calls.
type Persona struct {
	Name        string `json:"name"`
	Personality string `json:"personality"`
	Accent      string `json:"accent"`
	Style       string `json:"style"`
	Location    string `json:"location"`
	Opening     string `json:"opening"`
	// What a phone line adds (voice agents): how the line sounds, what is
	// heard around the person, whether they speak over the agent, and how
	// they give names and codes.
	LineQuality     string `json:"line_quality,omitempty"`
	BackgroundNoise string `json:"background_noise,omitempty"`
	TalksOver       bool   `json:"talks_over,omitempty"`
	Spelling        string `json:"spelling,omitempty"`
}

// Outbound is the call an outbound scenario's agent places: the purpose
// record it is about (a row of the use case's purpose table, by its primary
// key), whose owner is the callee (caller_id), and who answers.
type Outbound struct {
	Purpose    string         `json:"purpose"`
	Record     map[string]any `json:"record"`
	AnsweredBy Answer         `json:"answered_by"`
}

// Answer says who answers an outbound call.
type Answer string

// Who answers an outbound call.
const (
	// RightPerson: the callee answers and can talk.
	RightPerson Answer = "right-person"
	// WrongPerson: someone else answers (a household member, a stranger).
	WrongPerson Answer = "wrong-person"
	// Voicemail: a voicemail box answers.
	Voicemail Answer = "voicemail"
	// CallLater: the callee answers but asks to be called later.
	CallLater Answer = "call-later"
)

// Answers is every way an outbound call is answered, in the order plans deal them.
var Answers = []Answer{RightPerson, WrongPerson, Voicemail, CallLater}

// Statement is one setup step: SQL run inside the throwaway copy before the
// conversation, with $1.. parameters.
type Statement struct {
	SQL  string `json:"sql"`
	Args []any  `json:"args,omitempty"`
}

// ReadyCheck is a query run after setup: it must return at least one row, or
// exactly Rows when Rows is given.
type ReadyCheck struct {
	SQL  string           `json:"sql"`
	Args []any            `json:"args,omitempty"`
	Rows []map[string]any `json:"rows,omitempty"`
	Why  string           `json:"why,omitempty"`
}

// Call is one tool call of a solution or a tempting path. A string argument of
// the form "$N.field" (N 1-based) refers to field of the result of step N.
type Call struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// Computed is a value worked out from results: Op over Of, where each entry
// of Of is a number or a reference "$N.path" to the result of solution step
// N (a path of keys and list indexes, "*" for every element of a list:
// "$2.payments.*.amount").
type Computed struct {
	Value string   `json:"value"`
	Op    string   `json:"op"` // sum | difference | product | ratio | count | min | max
	Of    []string `json:"of"`
}

// Ops a Computed value may use.
var ComputedOps = []string{"sum", "difference", "product", "ratio", "count", "min", "max"}

// Misremembered is a fact the caller says wrong: Said need not exist in the
// world; Actual must, and is what the agent should tell them, unless it is a
// secret the caller must prove they know.
type Misremembered struct {
	Said   string `json:"said"`
	Actual string `json:"actual"`
}

// SubGoalRef names a catalogue check with its parameters. Judged marks a
// sub-goal graded later by a model, never proved: it must agree with the
// catalogue, so a reader of the scenario sees what was proved and what was not.
type SubGoalRef struct {
	Name   string         `json:"name"`
	Params map[string]any `json:"params,omitempty"`
	Judged bool           `json:"judged,omitempty"`
}

// Provenance says where a scenario came from.
type Provenance struct {
	ContractSHA256 string `json:"contract_sha256"`
	WorldSHA256    string `json:"world_sha256"`
	Model          string `json:"model"`
	PromptSHA256   string `json:"prompt_sha256,omitempty"`
	Seed           int64  `json:"seed"`
	Writer         string `json:"writer,omitempty"`
	Slice          string `json:"slice,omitempty"`
}

// Expected outcomes.
const (
	OutcomeSucceed  = "succeed"
	OutcomeRefuse   = "refuse"
	OutcomeAsk      = "ask"
	OutcomeEscalate = "escalate"
)

// Kinds and expected outcomes.
var (
	Kinds    = []string{"happy", "edge", "adversarial", "failing"}
	Outcomes = []string{OutcomeSucceed, OutcomeRefuse, OutcomeAsk, OutcomeEscalate}
)

// SetupError is a setup statement the world would not run, or one that may
// not set up a scenario at all: Index is 0-based, SQL the statement.
type SetupError struct {
	Index int
	SQL   string
	Err   error
}

func (e *SetupError) Error() string { return fmt.Sprintf("setup statement %d: %v", e.Index+1, e.Err) }
func (e *SetupError) Unwrap() error { return e.Err }
