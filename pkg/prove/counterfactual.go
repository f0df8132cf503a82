package prove

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// Counterfactual names what the prover played on a copy of the world.
type Counterfactual string

// The runs a proof makes. Every one starts from the scenario's setup.
const (
	// Solution is the scenario's reference solution.
	Solution Counterfactual = "solution"
	// Nothing is the agent doing nothing.
	Nothing Counterfactual = "nothing"
	// Tempting is the wrong move: for a success the tempting calls alone,
	// otherwise the solution's look-ups then the tempting calls.
	Tempting Counterfactual = "tempting"
	// WithoutPrecondition is a success's solution without the calls its
	// later calls require (an agent that skips the checks).
	WithoutPrecondition Counterfactual = "without-precondition"
	// WithPrecondition is an ask's look-ups, the missing step, then the
	// tempting calls: what asking would unlock.
	WithPrecondition Counterfactual = "with-precondition"
	// LogOnly is the solution's call log read over the world where nothing
	// happened: a check that fails there sees the act in the world, not only
	// in the log.
	LogOnly Counterfactual = "log-only"
)

// Run is one thing the prover played and what every check said after it.
type Run struct {
	Gate           Gate           `json:"gate"`
	Counterfactual Counterfactual `json:"counterfactual"`
	Calls          []CallStep     `json:"calls,omitempty"`
	Checks         []CheckResult  `json:"checks,omitempty"`
	// Note is what the gate read from the run, in a sentence.
	Note string `json:"note,omitempty"`
	// Request is the request of a conversation of several the run proves
	// (1-based; 0 for a scenario of one request, or the whole conversation).
	Request int `json:"request,omitempty"`
}

// CallStep is one call of a run as the world answered it.
type CallStep struct {
	Tool    string `json:"tool"`
	OK      bool   `json:"ok"`
	Refused bool   `json:"refused,omitempty"`
	Crash   bool   `json:"crash,omitempty"`
	Error   string `json:"error,omitempty"`
	// Branch is the handler's refusal branch (file:line) a refused call
	// came from.
	Branch string `json:"branch,omitempty"`
}

// CheckResult is one settled sub-goal after a run. Index is its place in
// the scenario's sub_goals.
type CheckResult struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Held   bool   `json:"held"`
	Broken bool   `json:"broken,omitempty"`
	Why    string `json:"why,omitempty"`
}

// Failed is a check that did not hold: it returned a reason or raised.
func (c CheckResult) Failed() bool { return !c.Held }

func steps(rs []world.CallResult) []CallStep {
	out := make([]CallStep, len(rs))
	for i, r := range rs {
		out[i] = CallStep{Tool: r.Tool, OK: r.OK, Refused: r.Refused, Crash: r.Crash, Error: r.Error, Branch: r.Branch}
	}
	return out
}

// proof is one scenario on its way through the gates that play it.
type proof struct {
	p      *Prover
	sc     *scenario.Scenario
	checks []checkRef

	results []world.CallResult // the solution's
	// effect is, for a success that changes state (compared), the tables
	// whose rows differ from nothing's.
	effect   []string
	compared bool
	// changed is what a success with outputs changed, row by row (read only
	// then: it decodes the rows that differ).
	changed world.StateDiff
	// replayed are the solution's look-ups made before its last act, asked
	// again of the world the solution left (by step index): what an
	// output read from them says once the work is done.
	replayed map[int]world.CallResult

	solution, nothing, logOnly *Run
	tempting, without, with    *Run
	effectRun                  *Run // the outcome gate's reading of a success
	// tempted and unlocked are the world's answers on the tempting and
	// with-precondition paths; actAt is where the tempting calls start.
	tempted, unlocked                     []world.CallResult
	temptedActAt, unlockedActAt, nMissing int

	// act is what the tempting path said around the act (not a success's).
	act actReading
	// prohibited are the contract's rules, unlisted by the scenario, that
	// hold when nothing is done (see prohibitions).
	prohibited []checkRef
	// idle names a success's state-changing call whose effect does not last
	// to the end of the solution ("" when every one's does).
	idle string
	// choice names another value of an argument the caller never states
	// with which the act (a success's, or a refusal's a rule forbids) goes
	// through and the case reads otherwise ("" when none).
	choice string
	// unasked is the refusal of a write the request does not ask for, and
	// askedOnly the solution played without such writes (request.go).
	unasked   []Refusal
	askedOnly *Run
	// unaskedVal names a value a success's state-changing call sets on its
	// record that the caller never states, and that changes the world
	// beyond keeping the record's own ("" when none; unaskedValue).
	unaskedVal string
	keptValue  *Run
	// unchecked refuses a value the caller asks for that no check tells
	// from another the world takes (valueUnchecked), or a record of the
	// caller's from another of theirs (recordUnchecked); otherValue is that run.
	unchecked  *Refusal
	otherValue *Run
	// narrow refuses a refusal's check pinned to a value of the act the
	// caller never gives (narrowCheck); narrowRun is that run.
	narrow    *Refusal
	narrowRun *Run
	// added caches setupRows.
	added map[string][]map[string]any
	// unused caches unusedStated once the solution has been played; every
	// argument alternatives varies reads it.
	unused     []string
	unusedDone bool
	// words caches callerWords.
	words []string
	// own matches the use case's own text (ownText), read once.
	own     *regexp.Regexp
	ownRead bool
	// identifiedBy says how the caller of an identity ask identifies
	// themselves from what they are handed, found by playing a call of
	// caller.from ("" when none does; identifyAnotherWay).
	identifiedBy string

	// request is this request's place in a conversation of several (0 for
	// a scenario of one); prior are the solutions of the requests before
	// it, played after setup on every copy (requests.go); also are the
	// other requests' calls and answers, which ground what the shared
	// instruction hands the caller for them.
	request int
	prior   [][]scenario.Call
	also    []world.CallResult
}

// trace lists the runs in the order the gates read them.
func (pr *proof) trace() []Run {
	var out []Run
	for _, r := range []*Run{pr.solution, pr.effectRun, pr.tempting, pr.with, pr.askedOnly, pr.keptValue, pr.otherValue, pr.narrowRun, pr.nothing, pr.without, pr.logOnly} {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// segment is calls whose "$N.field" references point into the segment
// itself; literal calls carry arguments already resolved.
type segment struct {
	calls   []scenario.Call
	literal bool
}

// playSegments plays segments in order on one copy.
func playSegments(ctx context.Context, cp *world.Copy, segs ...segment) []world.CallResult {
	var out []world.CallResult
	for _, s := range segs {
		if s.literal {
			for _, c := range s.calls {
				out = append(out, cp.Call(ctx, c.Tool, c.Args))
			}
			continue
		}
		out = append(out, play(ctx, cp, s.calls)...)
	}
	return out
}

// lookups are the solution's calls that read without changing anything
// (nor ending the conversation), with the arguments they were played with:
// the state a refusal is rehearsed on.
func (pr *proof) lookups() []scenario.Call {
	var out []scenario.Call
	for _, r := range pr.results {
		t := pr.p.c.Tool(r.Tool)
		if !r.OK || r.Wrote || t == nil || t.EndsConversation || (t.ChangesState != nil && *t.ChangesState) {
			continue
		}
		out = append(out, scenario.Call{Tool: r.Tool, Args: r.Args})
	}
	return out
}

// withoutPreconditions is the solution, as played, without every call that
// satisfies a requirement of a later call's tool; nil when there is none.
func (pr *proof) withoutPreconditions() []scenario.Call {
	drop := map[int]bool{}
	for j, r := range pr.results {
		t := pr.p.c.Tool(r.Tool)
		if t == nil {
			continue
		}
		for _, req := range t.Requires {
			for i := 0; i < j; i++ {
				if slices.Contains(req.AnyOf, pr.results[i].Tool) {
					drop[i] = true
				}
			}
		}
	}
	if len(drop) == 0 {
		return nil
	}
	var out []scenario.Call
	for i, r := range pr.results {
		if !drop[i] {
			out = append(out, scenario.Call{Tool: r.Tool, Args: r.Args})
		}
	}
	return out
}

// counterfactuals plays, each on a copy of its own, the runs the outcome
// and not-vacuous gates read: the tempting path, a success's solution
// without its preconditions, an ask's path with the missing step.
func (pr *proof) counterfactuals(ctx context.Context) error {
	sc := pr.sc
	succeed := sc.Expects == scenario.OutcomeSucceed
	var lookups []scenario.Call
	if !succeed {
		lookups = pr.lookups()
	}
	switch {
	case len(sc.Tempting) > 0 && succeed:
		run, results, err := pr.counterfactual(ctx, Tempting, segment{lookups, true}, segment{calls: sc.Tempting})
		if err != nil {
			return err
		}
		pr.tempting, pr.tempted, pr.temptedActAt = run, results, len(lookups)
	case len(sc.Tempting) > 0:
		if err := pr.temptingPath(ctx, lookups); err != nil {
			return err
		}
		if err := pr.ruleChoice(ctx, lookups); err != nil {
			return err
		}
		if err := pr.narrowCheck(ctx, lookups); err != nil {
			return err
		}
	}
	if succeed {
		if err := pr.lasting(ctx); err != nil {
			return err
		}
		if err := pr.successChoice(ctx); err != nil {
			return err
		}
		if err := pr.unaskedValue(ctx); err != nil {
			return err
		}
		if pr.choice == "" && pr.unaskedVal == "" {
			if err := pr.valueUnchecked(ctx); err != nil {
				return err
			}
			if pr.unchecked == nil {
				if err := pr.recordUnchecked(ctx); err != nil {
					return err
				}
			}
		}
	}
	if succeed {
		if calls := pr.withoutPreconditions(); calls != nil {
			if pr.tempting != nil && sameCalls(calls, sc.Tempting) {
				// The tempting move is exactly this: one run says both.
				pr.without = &Run{Gate: GateNotVacuous, Counterfactual: WithoutPrecondition, Calls: pr.tempting.Calls, Checks: pr.tempting.Checks,
					Note: "the same calls as the tempting path"}
			} else {
				run, _, err := pr.counterfactual(ctx, WithoutPrecondition, segment{calls, true})
				if err != nil {
					return err
				}
				pr.without = run
			}
		}
	}
	if sc.Expects == scenario.OutcomeAsk && len(sc.Missing) > 0 && len(sc.Tempting) > 0 {
		run, results, err := pr.counterfactual(ctx, WithPrecondition, segment{lookups, true}, segment{calls: sc.Missing}, segment{calls: sc.Tempting})
		if err != nil {
			return err
		}
		run.Gate = GateOutcome
		pr.with, pr.unlocked, pr.nMissing = run, results, len(sc.Missing)
		pr.unlockedActAt = len(lookups) + len(sc.Missing)
		if pr.identifiedBy, err = pr.identifyAnotherWay(ctx); err != nil {
			return err
		}
	}
	return nil
}

// counterfactual plays segments after setup on a fresh copy and reads every
// check there.
func (pr *proof) counterfactual(ctx context.Context, what Counterfactual, segs ...segment) (*Run, []world.CallResult, error) {
	sc := pr.sc
	var run *Run
	var results []world.CallResult
	setup := pr.setup(ctx)
	err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, before *world.Before) error {
		results = playSegments(ctx, cp, segs...)
		crashed := false
		for _, r := range results {
			if r.Crash && infrastructure(r.Err) {
				return r.Err
			}
			crashed = crashed || r.Crash
		}
		view := cp.View(sc.CallerID, func() script.WorldView { return before.View() })
		checks, err := pr.evalChecks(ctx, view, results, crashed)
		if err != nil {
			return err
		}
		run = &Run{Gate: GateNotVacuous, Counterfactual: what, Calls: steps(results), Checks: checks}
		return nil
	})
	if err != nil {
		// The setup ran once already on the scenario's own copy: failing now
		// is the infrastructure's doing.
		return nil, nil, err
	}
	return run, results, nil
}

func sameCalls(a, b []scenario.Call) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
