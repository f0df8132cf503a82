package prove_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/world"
)

// The mutation test takes a suite the builtin writer kept and derives, from
// each kept scenario, the dishonest variants an adversarial writer would
// submit; every one must be refused, and every original must still be kept
// when proved again from disk.

// Mutant kinds.
const (
	// A success's act, on the same record, relabelled a refusal.
	flipToRefuse = "success-flipped-to-refuse"
	// A refusal moved to a record the act may change (a success's record).
	refusalMoved = "refusal-moved"
	// An ask whose missing step is not what blocks the act: another call
	// named as missing, or the missing step already on the tempting path.
	askWrongStep  = "ask-other-step"
	askStepOnPath = "ask-step-on-path"
	noOp          = "act-made-no-op"
	alwaysTrue    = "always-true-check-added"
	actChecksGone = "act-checks-removed"
	// Outbound calls a voicemail box or someone else answered: the rule
	// that forbids the act dropped (the world would carry it out); the act
	// done all the same in the solution; the call relabelled as taken by
	// the callee, who is never identified.
	unansweredRuleGone = "unanswered-rule-dropped"
	unansweredActs     = "unanswered-act-done"
	unansweredAsRight  = "unanswered-as-right-person"
	// More or other than the caller asks: the act (and its checks) moved
	// to a record of the caller's the setup makes and nobody names; the act
	// done again on a second record the caller mentions but does not ask
	// about, without and with a check that it was;
	// the act done twice; a callee who asks to be called back served the
	// act first; a refusal resting on an amount nobody gave.
	recordUnnamed = "record-unnamed"
	secondAct     = "second-record-act"
	secondChecked = "second-record-checked"
	actTwice      = "act-repeated"
	callLaterActs = "call-later-act"
	temptingWrong = "tempting-wrong-amount"
	// A success's act that also sets a column of its record to a value
	// nobody states (another value of its enum, or a smaller number), its
	// checks made to agree: a flight change that downgrades the cabin.
	valueUnasked = "act-value-unasked"
	// Aimed at act-once past the gates before it: the act made first with
	// a value nobody states (another value of its enum, a whole number one
	// off), then as asked, on the same record, the world carrying out both:
	// a second act that redoes the first is not the request.
	actRedone = "act-redone"
	// Less than the caller asks: a value the caller states, in quotes, for
	// a success's act replaced in the act and its checks by one another
	// case of the same tool sends and this caller never says.
	statedIgnored = "stated-value-ignored"
	// A refusal that rests on what the agent adds or leaves out, not on the
	// request: a success's act given an argument its schema does not
	// require and the caller never gives, naming a record of the world the
	// act then refuses (another family's guardian on an adult's own
	// booking); a success's act with an argument an earlier answer shows
	// left out, the world then refusing it (a child's booking without the
	// guardian the verification answered with).
	optionalAdded = "tempting-optional-added"
	shownLeftOut  = "tempting-shown-left-out"
	// What the agent must say is what held before its own act: an output
	// replaced by a value an answer before the act shows and the act
	// changes (the order's "pending" once it is cancelled).
	outputStale = "output-stale"
	// The caller says they do not want the act the reference makes: every
	// mention of the act's verb negated ("wants to not cancel"), or, where
	// the instruction never says it, a sentence that withholds it.
	actWithheld = "act-withheld"
	// A check of the act made to look at nothing in particular: a list or
	// text param the act also sends (the items swapped) emptied, or a number
	// one more than the act sends.
	checkOffAct     = "check-off-act"
	mutationTimeout = 20 * time.Minute
)

var mutantKinds = []string{flipToRefuse, refusalMoved, askWrongStep, askStepOnPath, noOp, alwaysTrue, actChecksGone,
	unansweredRuleGone, unansweredActs, unansweredAsRight,
	recordUnnamed, secondAct, secondChecked, actTwice, callLaterActs, temptingWrong, valueUnasked,
	actRedone, statedIgnored, optionalAdded, shownLeftOut, outputStale, actWithheld, checkOffAct}

// aims are the kinds made to reach one gate directly (gate/code): over a run
// of the mutation test, some mutant of each must be refused first by it, or
// the gate is tested only through others.
var aims = map[string]string{
	actRedone:     "outcome/act-once",
	temptingWrong: "outcome/tempting-faithful",
	optionalAdded: "outcome/tempting-faithful",
	shownLeftOut:  "outcome/tempting-faithful",
	outputStale:   "grounding/stale-output",
	actWithheld:   "grounding/request-unasked",
	checkOffAct:   "not-vacuous/check-off-act",
}

// The honesty gates each kind aims at (its mutants may fall to an earlier
// gate first): record-named (recordUnnamed), unrequested-change (secondAct),
// check-unasked (secondChecked), act-once (actTwice, actRedone),
// tempting-faithful (temptingWrong, optionalAdded, shownLeftOut), call-later (callLaterActs),
// unasked-value (valueUnasked), unstated-choice or unasked-value
// (statedIgnored).

// notApplicable are the kinds an example's suites cannot make, and why: a
// kind made zero times on an example fails the test unless it is listed
// here, and one listed here that is made fails too (the reason no longer
// holds).
var notApplicable = map[string]map[string]string{
	"retail": allRequired(inbound(map[string]string{
		temptingWrong: "no act takes a number: its acts take orders, items, payment methods, addresses and reasons",
		valueUnasked:  "no act takes an enum or a whole number named like a column of the record it names (a cancellation's reason is the order's cancel_reason)",
		actRedone:     "no act takes a whole number, and its one enum (a cancellation's reason) moves the order out of the pending status the act needs, so the world refuses the cancellation as asked after one made with another reason",
	})),
	"rides": allRequired(inbound(map[string]string{})),
	"telecom": allRequired(inbound(map[string]string{
		temptingWrong: "its one numeric act (a refuel's gb_amount) the world carries out at any size: the 2 GB ceiling is a rule's check, not the world's refusal",
		valueUnasked:  "no act takes an enum, and its one whole number (a refuel's gb_amount) is no column of the line it names",
		actRedone:     "no act takes an enum, and its one whole number, a refuel's gb_amount, is 1 GB in every case: one less is no refuel, and one more, 2, is a value the caller states (the policy's 2 GB ceiling, in the instruction)",
		outputStale:   "no answer of a solution shows a cell its act changes beside that record's key: the lines and bills its acts change are named by id, never read out first (a suspension is lifted without reading the line)",
	})),
	"airline": allRequired(inbound(map[string]string{})),
	"clinic-reminders": allRequired(map[string]string{
		askWrongStep:  "its plan deals no ask",
		askStepOnPath: "its plan deals no ask",
		recordUnnamed: "the agent places the call about the purpose record it brings, which no callee names (instruction, opening): there is no named record to move the act off",
		secondAct:     "the agent places the call about one purpose record, which no callee names: there is no named record to add a second beside",
		secondChecked: "as for second-record-act",
		temptingWrong: "no act takes a number",
		valueUnasked:  "no act takes an enum named like a column of the record it names: a callback's window is a column of the row scheduling adds, a cancellation's reason is the appointment's cancel_reason",
		actRedone:     "each act moves its appointment out of the status it needs (confirmed, cancelled), so the world refuses the act as asked after one made with another value",
	}),
	"clinic-voice": inbound(map[string]string{}),
}

// inbound adds to an inbound example's reasons the kinds only outbound calls
// make.
func inbound(why map[string]string) map[string]string {
	for _, k := range []string{unansweredRuleGone, unansweredActs, unansweredAsRight} {
		why[k] = "no call of its is answered by a voicemail box or someone else: its agent places none"
	}
	why[callLaterActs] = "no callee asks to be called back: its agent places no call"
	return why
}

// allRequired adds the reasons for the kinds only an act with an argument
// its schema does not require makes.
func allRequired(why map[string]string) map[string]string {
	for _, k := range []string{optionalAdded, shownLeftOut} {
		why[k] = "every argument of each of its acts is required"
	}
	return why
}

type mutant struct {
	kind, from string
	sc         *scenario.Scenario
}

// mutation is what a mutation run found.
type mutation struct {
	originals, kept int
	notKept         []string
	// groundless are kept refuse, ask or escalate scenarios whose act the
	// world carries out on the tempting path with no named rule's check
	// failing there (for an ask: nor its requires unmet).
	groundless []string
	made       map[string]int
	killed     map[string]int
	codes      map[string]map[string]int // kind -> gate/code -> mutants
	survivors  []string
	outbound   bool // the suite holds outbound calls
}

func (m mutation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "originals kept %d/%d; groundless %d\n", m.kept, m.originals, len(m.groundless))
	for _, k := range mutantKinds {
		var codes []string
		for c, n := range m.codes[k] {
			codes = append(codes, fmt.Sprintf("%s %d", c, n))
		}
		sort.Strings(codes)
		fmt.Fprintf(&b, "  %-26s %4d made, %4d killed  (%s)\n", k, m.made[k], m.killed[k], strings.Join(codes, ", "))
	}
	return b.String()
}

func (m mutation) totals() (made, killed int) {
	for _, k := range mutantKinds {
		made += m.made[k]
		killed += m.killed[k]
	}
	return made, killed
}

// writeSuite writes an example's suite of n scenarios with the builtin model
// and returns the scenarios from disk and the database that holds the world.
func writeSuite(tb testing.TB, example string, n, maxWant int) (string, []*scenario.Scenario) {
	tb.Helper()
	dir, err := filepath.Abs(contractDir(example))
	if err != nil {
		tb.Fatal(err)
	}
	url := testenv.PostgresURL(tb)
	out := tb.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), mutationTimeout)
	defer cancel()
	if _, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: n, Writers: 2, Out: out, Seed: 7, MaxWant: maxWant,
		NATSURL: testenv.NATS(tb), DatabaseURL: url, Logger: quiet()}); err != nil {
		tb.Fatalf("run %s: %v", example, err)
	}
	paths, _ := filepath.Glob(filepath.Join(out, "scenarios", "*", "scenario.json"))
	sort.Strings(paths)
	var scs []*scenario.Scenario
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		sc, err := scenario.Decode(raw)
		if err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		scs = append(scs, sc)
	}
	if len(scs) != n {
		tb.Fatalf("%s: asked %d scenarios, the run wrote %d", example, n, len(scs))
	}
	// The report counts what is on disk, per outcome too: the outcome of
	// every request of a conversation.
	raw, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var rep struct {
		Count    int `json:"count"`
		Coverage struct {
			Outcomes map[string]int `json:"outcomes"`
		} `json:"coverage"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		tb.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, sc := range scs {
		for _, r := range sc.Requests() {
			outcomes[r.Expects]++
		}
	}
	if rep.Count != len(scs) {
		tb.Errorf("%s: report.json counts %d scenarios, the suite holds %d", example, rep.Count, len(scs))
	}
	if rep.Coverage.Outcomes != nil && fmt.Sprint(rep.Coverage.Outcomes) != fmt.Sprint(outcomes) {
		tb.Errorf("%s: report.json counts outcomes %v, the suite holds %v", example, rep.Coverage.Outcomes, outcomes)
	}
	return url, scs
}

// mutate proves every original, derives its mutants, and proves them.
func mutate(ctx context.Context, tb testing.TB, e *engine.Engine, scs []*scenario.Scenario) mutation {
	tb.Helper()
	m := mutation{made: map[string]int{}, killed: map[string]int{}, codes: map[string]map[string]int{}}
	prove1 := func(sc *scenario.Scenario) prove.Verdict {
		v, err := e.Prover.Prove(ctx, sc)
		if err != nil {
			tb.Fatalf("%s: %v", sc.Name, err)
		}
		return v
	}
	verdicts := map[string]prove.Verdict{}
	var kept []*scenario.Scenario
	for _, sc := range scs {
		m.outbound = m.outbound || sc.Outbound != nil
		m.originals++
		v := prove1(sc)
		if !v.Kept {
			m.notKept = append(m.notKept, fmt.Sprintf("%s: %v", sc.Name, v.Refusals))
			continue
		}
		m.kept++
		verdicts[sc.Name] = v
		kept = append(kept, sc)
		if why := groundless(ctx, tb, e, sc, v); why != "" {
			m.groundless = append(m.groundless, sc.Name+": "+why)
		}
	}
	mk := mutants(ctx, tb, e, kept, verdicts)
	for _, mu := range mk {
		m.made[mu.kind]++
		v := prove1(mu.sc)
		if v.Kept {
			m.survivors = append(m.survivors, fmt.Sprintf("%s of %s", mu.kind, mu.from))
			continue
		}
		m.killed[mu.kind]++
		if m.codes[mu.kind] == nil {
			m.codes[mu.kind] = map[string]int{}
		}
		r := v.Refusals[0]
		m.codes[mu.kind][string(r.Gate)+"/"+string(r.Code)]++
	}
	return m
}

// groundless re-checks, apart from the outcome gate, that a kept scenario's
// act is not one the world carries out unopposed: it rehearses the act after
// the solution's look-ups itself, and accepts the world's refusal, unmet
// requires (an ask), or a check of a rule the scenario names failing on the
// tempting run the prover recorded.
func groundless(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario, v prove.Verdict) string {
	if sc.Expects == scenario.OutcomeSucceed {
		return ""
	}
	sol, _, err := e.Prover.Rehearse(ctx, sc.Setup, sc.Solution, false)
	if err != nil {
		tb.Fatalf("%s: %v", sc.Name, err)
	}
	var path []scenario.Call
	for _, r := range sol {
		t := e.C.Tool(r.Tool)
		if r.OK && !r.Wrote && t != nil && !t.EndsConversation && (t.ChangesState == nil || !*t.ChangesState) {
			path = append(path, scenario.Call{Tool: r.Tool, Args: r.Args})
		}
	}
	at := len(path)
	path = append(path, sc.Tempting...)
	rs, _, err := e.Prover.Rehearse(ctx, sc.Setup, path, false)
	if err != nil {
		tb.Fatalf("%s: %v", sc.Name, err)
	}
	act := rs[len(rs)-1]
	if act.Refused {
		return ""
	}
	if sc.Expects == scenario.OutcomeAsk && !requiresKept(e.C, rs[at:], len(rs)-1-at, rs[:at]) {
		return ""
	}
	for _, id := range sc.Rules {
		for _, r := range e.C.Rules {
			if r.ID != id || r.Check == "" {
				continue
			}
			for _, run := range v.Runs {
				if run.Counterfactual != prove.Tempting {
					continue
				}
				for _, c := range run.Checks {
					if c.Name == r.Check && !c.Held {
						return ""
					}
				}
			}
		}
	}
	return fmt.Sprintf("the world carries out %s and no rule the scenario names forbids it", act.Tool)
}

// requiresKept reports whether call i of rs (after the look-ups before) came
// after what its tool requires.
func requiresKept(c *contract.Contract, rs []world.CallResult, i int, before []world.CallResult) bool {
	all := append(append([]world.CallResult{}, before...), rs...)
	i += len(before)
	t := c.Tool(all[i].Tool)
	if t == nil {
		return true
	}
	for _, req := range t.Requires {
		met := false
		for _, e := range all[:i] {
			if !e.OK {
				continue
			}
			for _, name := range req.AnyOf {
				if e.Tool != name {
					continue
				}
				same := true
				for _, a := range req.Same {
					same = same && ground.Text(e.Args[a]) == ground.Text(all[i].Args[a])
				}
				met = met || same
			}
		}
		if !met {
			return false
		}
	}
	return true
}

func clone(sc *scenario.Scenario) *scenario.Scenario {
	b, err := json.Marshal(sc)
	if err != nil {
		panic(err)
	}
	out, err := scenario.Decode(b)
	if err != nil {
		panic(err)
	}
	return out
}

// actAt is the index of a success's act in its solution: the last call
// that does not end the conversation.
func actAt(c *contract.Contract, sc *scenario.Scenario) int {
	for i := len(sc.Solution) - 1; i >= 0; i-- {
		if t := c.Tool(sc.Solution[i].Tool); t != nil && !t.EndsConversation {
			return i
		}
	}
	return -1
}

// runOf is the first run of a verdict that played cf for the scenario's
// first request: the mutants are made of that request's fields, and a
// conversation whose first request only looks something up has a log-only
// run of its second request, not of the first.
func runOf(v prove.Verdict, cf prove.Counterfactual) *prove.Run {
	first := 0 // a scenario of one request marks none
	if slices.ContainsFunc(v.Runs, func(r prove.Run) bool { return r.Request > 0 }) {
		first = 1
	}
	for i := range v.Runs {
		if v.Runs[i].Counterfactual == cf && v.Runs[i].Request == first {
			return &v.Runs[i]
		}
	}
	return nil
}

func judgedOf(sc *scenario.Scenario) []scenario.SubGoalRef {
	var out []scenario.SubGoalRef
	for _, g := range sc.SubGoals {
		if g.Judged {
			out = append(out, g)
		}
	}
	return out
}

// rename gives a mutant its own name and branch, so only the gates can
// refuse it.
// ignoreStated is sc with one string argument of its act that the caller
// states in quotes given another value the caller never says (another of
// the parameter's enum, or one another kept scenario sends there), and its
// checks made to agree; nil when no argument has one.
func ignoreStated(c *contract.Contract, sc *scenario.Scenario, at int, kept []*scenario.Scenario) *scenario.Scenario {
	act := sc.Solution[at]
	t := c.Tool(act.Tool)
	for _, n := range slices.Sorted(maps.Keys(act.Args)) {
		w, ok := act.Args[n].(string)
		if !ok || w == "" || !strings.Contains(sc.Instruction, strconv.Quote(w)) {
			continue
		}
		var others []string
		if t != nil {
			for _, e := range t.Enum(n) {
				others = append(others, ground.Text(e))
			}
		}
		for _, o := range kept {
			for _, call := range slices.Concat(o.Solution, o.Tempting) {
				if x, ok := call.Args[n].(string); ok && call.Tool == act.Tool {
					others = append(others, x)
				}
			}
		}
		for _, x := range others {
			if x == "" || x == w || strings.Contains(sc.Instruction, x) {
				continue
			}
			m := clone(sc)
			m.Solution[at].Args[n] = x
			for i := range m.SubGoals {
				if m.SubGoals[i].Params != nil {
					m.SubGoals[i].Params = rekey(map[string]any(m.SubGoals[i].Params), map[string]string{w: x}).(map[string]any)
				}
			}
			return m
		}
	}
	return nil
}

func rename(sc *scenario.Scenario, kind string) {
	sc.Name = sc.Name + "-" + kind
	sc.Branch = sc.Branch + " (" + kind + ")"
}

// rekey replaces, in every string of v, the values of from with those of to.
func rekey(v any, swap map[string]string) any {
	switch x := v.(type) {
	case string:
		if to, ok := swap[x]; ok {
			return to
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = rekey(e, swap)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rekey(e, swap)
		}
		return out
	}
	return v
}

func mutants(ctx context.Context, tb testing.TB, e *engine.Engine, kept []*scenario.Scenario, verdicts map[string]prove.Verdict) []mutant {
	c := e.C
	var out []mutant
	add := func(kind, from string, sc *scenario.Scenario) {
		rename(sc, kind)
		out = append(out, mutant{kind, from, sc})
	}
	// Successes that change the world, by use case and acting tool.
	changers := map[string][]*scenario.Scenario{}
	for _, sc := range kept {
		if sc.Expects == scenario.OutcomeSucceed && runOf(verdicts[sc.Name], prove.LogOnly) != nil && actAt(c, sc) >= 0 {
			key := sc.UseCase + "|" + sc.Solution[actAt(c, sc)].Tool
			changers[key] = append(changers[key], sc)
		}
	}
	for _, sc := range kept {
		v := verdicts[sc.Name]
		switch sc.Expects {
		case scenario.OutcomeSucceed:
			at := actAt(c, sc)
			if logOnly := runOf(v, prove.LogOnly); logOnly != nil && at >= 0 {
				act := sc.Solution[at]
				m := refusedAs(sc, at, act)
				m.Instruction = unsay(m.Instruction, act, m)
				add(flipToRefuse, sc.Name, m)

				if setup := noOpSetup(ctx, tb, e, sc); setup != nil {
					m := clone(sc)
					m.Setup = setup
					add(noOp, sc.Name, m)
				}

				if w, v := actRecord(c, sc, act); w != "" {
					swap := map[string]string{w: v}
					m := clone(sc)
					m.Setup = twinSetup(e.C, sc.Setup, w, v)
					for i := range m.Solution {
						m.Solution[i].Args = rekey(map[string]any(m.Solution[i].Args), swap).(map[string]any)
					}
					for i := range m.SubGoals {
						if m.SubGoals[i].Params != nil {
							m.SubGoals[i].Params = rekey(map[string]any(m.SubGoals[i].Params), swap).(map[string]any)
						}
					}
					add(recordUnnamed, sc.Name, m)

					// The second act, after the look-ups of its record that
					// the first had (what its requires ask for).
					var second []scenario.Call
					for _, c := range sc.Solution[:at+1] {
						if again := rekey(map[string]any(c.Args), swap).(map[string]any); !sameCallArgs(again, c.Args) {
							second = append(second, scenario.Call{Tool: c.Tool, Args: again})
						}
					}
					// The caller mentions the twin, but asks about one record.
					m = clone(sc)
					m.Setup = twinSetup(e.C, sc.Setup, w, v)
					m.Instruction += " They mention they also have " + v + "."
					m.Solution = append(append([]scenario.Call(nil), sc.Solution[:at+1]...), second...)
					m.Solution = append(m.Solution, sc.Solution[at+1:]...)
					add(secondAct, sc.Name, m)

					m = clone(m)
					for _, r := range logOnly.Checks {
						if !r.Held && r.Index < len(sc.SubGoals) && sc.SubGoals[r.Index].Params != nil {
							g := sc.SubGoals[r.Index]
							g.Params = rekey(map[string]any(g.Params), swap).(map[string]any)
							m.SubGoals = append(m.SubGoals, g)
						}
					}
					m.Name, m.Branch = sc.Name, sc.Branch
					add(secondChecked, sc.Name, m)
				}

				m = clone(sc)
				m.Solution = append(append([]scenario.Call(nil), sc.Solution[:at+1]...), act)
				m.Solution = append(m.Solution, sc.Solution[at+1:]...)
				add(actTwice, sc.Name, m)

				if m := unaskedSetting(ctx, tb, e, sc, at); m != nil {
					add(valueUnasked, sc.Name, m)
				}

				if m := redone(ctx, tb, e, sc, at); m != nil {
					add(actRedone, sc.Name, m)
				}

				if m := ignoreStated(c, sc, at, kept); m != nil {
					add(statedIgnored, sc.Name, m)
				}

				if m := staleSaid(ctx, tb, e, sc); m != nil {
					add(outputStale, sc.Name, m)
				}

				if m := withholdAct(sc, act); m != nil {
					add(actWithheld, sc.Name, m)
				}

				if m := checkElsewhere(sc, act); m != nil {
					add(checkOffAct, sc.Name, m)
				}

				for i, tempting := range wrongAmounts(ctx, tb, e, sc, at) {
					m := refusedAs(sc, at, tempting)
					if i > 0 {
						m.Name = fmt.Sprintf("%s-%d", m.Name, i)
					}
					add(temptingWrong, sc.Name, m)
				}
				if tempting, n, ok := withOptional(ctx, tb, e, sc, at); ok {
					// The caller hands the value when asked, so an agent
					// could send it: only what the request needs is wrong.
					m := refusedAs(sc, at, tempting)
					m.Instruction += fmt.Sprintf(" If asked, they also give %s %q.", strings.ReplaceAll(n, "_", " "), ground.Text(tempting.Args[n]))
					add(optionalAdded, sc.Name, m)
				}
				if tempting, ok := withoutShown(ctx, tb, e, sc, at); ok {
					add(shownLeftOut, sc.Name, refusedAs(sc, at, tempting))
				}

				m = clone(sc)
				seen := map[int]bool{}
				for _, r := range logOnly.Checks {
					if !r.Held {
						seen[r.Index] = true
					}
				}
				m.SubGoals = nil
				for i, g := range sc.SubGoals {
					if !seen[i] {
						m.SubGoals = append(m.SubGoals, g)
					}
				}
				m.SubGoals = append(m.SubGoals, scenario.SubGoalRef{Name: "called", Params: map[string]any{"tool": act.Tool, "args": act.Args}})
				m.Rules = rulesWithChecks(c, m)
				add(actChecksGone, sc.Name, m)
			}
		case scenario.OutcomeRefuse, scenario.OutcomeEscalate, scenario.OutcomeAsk:
			if sc.Expects == scenario.OutcomeRefuse && len(sc.Ready) > 0 && len(sc.Ready[0].Args) > 0 {
				act := sc.Tempting[len(sc.Tempting)-1]
				for _, s := range changers[sc.UseCase+"|"+act.Tool] {
					if len(s.Ready) == 0 || len(s.Ready[0].Args) == 0 {
						continue
					}
					at := actAt(c, s)
					m := clone(sc)
					m.Setup, m.Ready, m.CallerID, m.Persona, m.Instruction = s.Setup, s.Ready, s.CallerID, s.Persona, s.Instruction
					m.Solution = append([]scenario.Call(nil), s.Solution[:at]...)
					m.Tempting = []scenario.Call{s.Solution[at]}
					m.Instruction = unsay(m.Instruction, s.Solution[at], m)
					swap := map[string]string{ground.Text(sc.Ready[0].Args[0]): ground.Text(s.Ready[0].Args[0]), ground.Text(sc.CallerID): ground.Text(s.CallerID)}
					for i := range m.SubGoals {
						if p, ok := rekey(map[string]any(m.SubGoals[i].Params), swap).(map[string]any); ok && m.SubGoals[i].Params != nil {
							m.SubGoals[i].Params = p
						}
					}
					add(refusalMoved, sc.Name, m)
					break
				}
			}
			if sc.Expects == scenario.OutcomeAsk {
				m := clone(sc)
				m.Missing = []scenario.Call{sc.Tempting[0]}
				add(askWrongStep, sc.Name, m)
				m = clone(sc)
				m.Tempting = append(append([]scenario.Call(nil), sc.Missing...), sc.Tempting...)
				add(askStepOnPath, sc.Name, m)
			}
			if tempting := runOf(v, prove.Tempting); tempting != nil {
				m := clone(sc)
				fails := map[int]bool{}
				for _, r := range tempting.Checks {
					if !r.Held {
						fails[r.Index] = true
					}
				}
				m.SubGoals = nil
				for i, g := range sc.SubGoals {
					if !fails[i] {
						m.SubGoals = append(m.SubGoals, g)
					}
				}
				m.Rules = rulesWithChecks(c, m)
				if tool := unusedTool(c, m); !settled(c, m) && tool != "" {
					// A check that holds, so only the gates that look for
					// teeth can refuse it.
					m.SubGoals = append(m.SubGoals, scenario.SubGoalRef{Name: "not_called", Params: map[string]any{"tool": tool, "args": map[string]any{}}})
				}
				add(actChecksGone, sc.Name, m)
			}
		}
		if tool := unusedTool(c, sc); tool != "" {
			m := clone(sc)
			m.SubGoals = append(m.SubGoals, scenario.SubGoalRef{Name: "not_called", Params: map[string]any{"tool": tool, "args": map[string]any{}}})
			add(alwaysTrue, sc.Name, m)
		}
		if o := sc.Outbound; o != nil && o.AnsweredBy == scenario.CallLater && len(sc.Tempting) > 0 {
			// The callee asked to be called back; the reference does the
			// act the call is about first.
			m := clone(sc)
			m.Solution = append(append([]scenario.Call(nil), sc.Tempting...), sc.Solution...)
			add(callLaterActs, sc.Name, m)
		}
		if o := sc.Outbound; o != nil && (o.AnsweredBy == scenario.Voicemail || o.AnsweredBy == scenario.WrongPerson) {
			act := sc.Tempting[len(sc.Tempting)-1]
			if t := runOf(v, prove.Tempting); t != nil && strings.Contains(t.Note, "forbids it") {
				m := clone(sc)
				checks := ruleChecks(c, sc)
				m.Rules, m.SubGoals = nil, nil
				for _, g := range sc.SubGoals {
					if !checks[g.Name] {
						m.SubGoals = append(m.SubGoals, g)
					}
				}
				add(unansweredRuleGone, sc.Name, m)
			}
			m := clone(sc)
			m.Solution = append(append(append([]scenario.Call(nil), sc.Solution...), sc.Tempting[:len(sc.Tempting)-1]...), act)
			add(unansweredActs, sc.Name, m)
			m = clone(sc)
			m.Outbound.AnsweredBy, m.Expects = scenario.RightPerson, scenario.OutcomeSucceed
			m.Solution = append(append([]scenario.Call(nil), sc.Tempting[:len(sc.Tempting)-1]...), act)
			m.Tempting = nil
			add(unansweredAsRight, sc.Name, m)
		}
	}
	return out
}

// actRecord is the record a success's act is about, when the caller names
// it and the setup makes it (w), and a key for a twin of it (v): the act's
// first string argument handed in the instruction or opening that a setup
// insert holds, with its last digit changed. "" when there is none.
func actRecord(c *contract.Contract, sc *scenario.Scenario, act scenario.Call) (w, v string) {
	inSetup := map[string]bool{}
	for _, st := range sc.Setup {
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(st.SQL)), "INSERT") {
			for _, a := range st.Args {
				if s, ok := a.(string); ok {
					inSetup[s] = true
				}
			}
		}
	}
	names := make([]string, 0, len(act.Args))
	for n := range act.Args {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s, ok := act.Args[n].(string)
		if !ok || !inSetup[s] || ground.Text(sc.CallerID) == s || !(strings.Contains(sc.Instruction, s) || strings.Contains(sc.Persona.Opening, s)) {
			continue
		}
		if v := unheld(c, sc, s); v != "" {
			return s, v
		}
	}
	return "", ""
}

// unheld is s with its last digit moved (by five first, then by one to
// nine) to a value no seed row and no setup statement holds: a key of the
// same shape for a twin that takes no other record's place.
func unheld(c *contract.Contract, sc *scenario.Scenario, s string) string {
	held := map[string]bool{}
	hold := func(x any) {
		if v, ok := x.(string); ok {
			held[v] = true
		}
	}
	for _, st := range sc.Setup {
		for _, a := range st.Args {
			hold(a)
		}
	}
	for _, sd := range c.Seeds {
		for _, r := range sd.Rows {
			for _, x := range r {
				hold(x)
			}
		}
	}
	for _, by := range []int{5, 1, 2, 3, 4, 6, 7, 8, 9} {
		if v := shiftedBy(s, by); v != s && !held[v] {
			return v
		}
	}
	return ""
}

// shifted is s with its last digit moved by five: a key of the same shape.
func shifted(s string) string { return shiftedBy(s, 5) }

// shiftedBy is s with its last digit moved by n.
func shiftedBy(s string, n int) string {
	b := []byte(s)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] >= '0' && b[i] <= '9' {
			b[i] = '0' + byte((int(b[i]-'0')+n)%10)
			return string(b)
		}
	}
	return s
}

// sameCallArgs reports two argument maps that are the same JSON.
func sameCallArgs(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// twinSetup is setup with the insert of record w made again with v in its
// place: a second record of the caller's, like the first. The record's own
// insert is the one w leads (its key); rows that only refer to it (the
// messages about an appointment) are not copied. With no insert led by w,
// every insert that holds it is copied. Each copy also takes values of its
// own in every other column unique by itself (a line's phone number, a
// message's id), which it would otherwise repeat; a column only a set of
// columns keeps unique (the owner of a payment method keyed by owner and
// id) keeps its value, so the copy is still the caller's.
func twinSetup(c *contract.Contract, setup []scenario.Statement, w, v string) []scenario.Statement {
	insert := func(st scenario.Statement) bool {
		return strings.HasPrefix(strings.ToUpper(strings.TrimSpace(st.SQL)), "INSERT") && len(st.Args) > 0
	}
	own := slices.ContainsFunc(setup, func(st scenario.Statement) bool { return insert(st) && st.Args[0] == any(w) })
	// Without an insert w leads, the record's rows are those that hold w
	// in a column of a key (a payment method keyed by owner and id), not
	// those that refer to it (the payments made with it); with none, every
	// insert that holds it.
	keyed := func(st scenario.Statement) bool {
		tb, cols := insertTable(c, st.SQL)
		i := slices.Index(st.Args, any(w))
		return tb != nil && i >= 0 && i < len(cols) && inKey(tb, cols[i])
	}
	byKey := !own && slices.ContainsFunc(setup, func(st scenario.Statement) bool { return insert(st) && keyed(st) })
	out := append([]scenario.Statement(nil), setup...)
	for _, st := range setup {
		if !insert(st) || own && st.Args[0] != any(w) || !own && !slices.Contains(st.Args, any(w)) || byKey && !keyed(st) {
			continue
		}
		swap := map[string]string{w: v}
		if tb, cols := insertTable(c, st.SQL); tb != nil {
			for i, col := range cols {
				if i >= len(st.Args) || !tb.IsUnique(col) {
					continue
				}
				if s, ok := st.Args[i].(string); ok && s != w {
					swap[s] = shifted(s)
				}
			}
		}
		out = append(out, scenario.Statement{SQL: st.SQL, Args: rekey(st.Args, swap).([]any)})
	}
	return out
}

// insertTable is the table of a plain insert and its columns in order
// (its arguments fill them in that order, as recordHolds reads them); nil
// for any other statement or a table the contract has not.
func insertTable(c *contract.Contract, sql string) (*contract.Table, []string) {
	table, cols := plainInsert(sql)
	if tb := c.Table(table); tb != nil && cols != nil {
		return tb, cols
	}
	return nil, nil
}

// inKey reports whether col is in the table's primary key or one of its
// unique sets.
func inKey(tb *contract.Table, col string) bool {
	return slices.Contains(tb.PrimaryKey, col) || slices.ContainsFunc(tb.Unique, func(u []string) bool { return slices.Contains(u, col) })
}

// wrongAmounts are a success's act with one number it takes, at any depth
// (a payment's amount inside its list of payments too), made larger until
// the world refuses it: one tempting act per number the world then refuses,
// each a refusal that rests on an amount nobody gave.
func wrongAmounts(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario, at int) []scenario.Call {
	act := sc.Solution[at]
	var out []scenario.Call
	for _, n := range slices.Sorted(maps.Keys(act.Args)) {
		for _, num := range prove.NumbersIn(act.Args[n]) {
			f, _ := prove.Number(num.Value)
			for _, bigger := range []float64{f*10 + 7, f + 1000} {
				wrong := scenario.Call{Tool: act.Tool, Args: maps.Clone(act.Args)}
				wrong.Args[n] = prove.ReplaceAt(act.Args[n], num.Path, bigger)
				calls := append(slices.Clone(sc.Solution[:at]), wrong)
				rs, _, err := e.Prover.Rehearse(ctx, sc.Setup, calls, false)
				if err != nil {
					tb.Fatalf("%s: %v", sc.Name, err)
				}
				if rs[len(rs)-1].Refused {
					out = append(out, wrong)
					break
				}
			}
		}
	}
	return out
}

// refusedAs is a success relabelled a refusal whose tempting act is tempting
// (the success's own act, or a variant of it): the path before the act is
// the solution, and a check that the act as the success made it was not
// called leads the success's judged checks.
func refusedAs(sc *scenario.Scenario, at int, tempting scenario.Call) *scenario.Scenario {
	act := sc.Solution[at]
	m := clone(sc)
	m.Expects, m.Kind = scenario.OutcomeRefuse, "failing"
	m.Solution = append([]scenario.Call(nil), sc.Solution[:at]...)
	m.Tempting = []scenario.Call{tempting}
	m.Outputs, m.Rules, m.Missing = nil, nil, nil
	m.SubGoals = append([]scenario.SubGoalRef{{Name: "not_called", Params: map[string]any{"tool": act.Tool, "args": act.Args}}}, judgedOf(sc)...)
	return m
}

// refusedAfter reports whether the world refuses call played after the
// success's path to its act.
func refusedAfter(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario, at int, call scenario.Call) bool {
	rs, _, err := e.Prover.Rehearse(ctx, sc.Setup, append(slices.Clone(sc.Solution[:at]), call), false)
	if err != nil {
		tb.Fatalf("%s: %v", sc.Name, err)
	}
	return rs[len(rs)-1].Refused
}

// withOptional is the success's act given one argument its schema offers,
// does not require and the act leaves out, naming a record of the world
// (one of the first values of the column it refers to) that gets the act
// refused, and the argument's name; false when none does.
func withOptional(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario, at int) (scenario.Call, string, bool) {
	act := sc.Solution[at]
	t := e.C.Tool(act.Tool)
	if t == nil {
		return scenario.Call{}, "", false
	}
	for _, n := range t.ParamNames() {
		if _, given := act.Args[n]; given || slices.Contains(t.Required(), n) || t.LogOnlyParam(n) {
			continue
		}
		table, col, ok := e.C.RefOf(t.Name, n)
		if !ok {
			continue
		}
		var values []string
		if err := e.World.Copy(ctx, func(cp *world.Copy) error {
			rows, err := cp.Query(ctx, fmt.Sprintf("SELECT DISTINCT %s::text AS v FROM %s WHERE %s IS NOT NULL ORDER BY 1 LIMIT 4", col, table, col))
			for _, r := range rows {
				values = append(values, ground.Text(r.Map()["v"]))
			}
			return err
		}); err != nil {
			tb.Fatalf("%s: values of %s.%s: %v", sc.Name, table, col, err)
		}
		for _, v := range values {
			wrong := scenario.Call{Tool: act.Tool, Args: maps.Clone(act.Args)}
			wrong.Args[n] = v
			if refusedAfter(ctx, tb, e, sc, at, wrong) {
				return wrong, n, true
			}
		}
	}
	return scenario.Call{}, "", false
}

// withoutShown is the success's act with one argument its schema does not
// require left out, where the value the act passes is one an earlier answer
// of the path shows and the world refuses the act without it; false when
// there is none.
func withoutShown(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario, at int) (scenario.Call, bool) {
	act := sc.Solution[at]
	t := e.C.Tool(act.Tool)
	if t == nil {
		return scenario.Call{}, false
	}
	rs, _, err := e.Prover.Rehearse(ctx, sc.Setup, sc.Solution[:at], false)
	if err != nil {
		tb.Fatalf("%s: %v", sc.Name, err)
	}
	for _, n := range slices.Sorted(maps.Keys(act.Args)) {
		if slices.Contains(t.Required(), n) || t.LogOnlyParam(n) {
			continue
		}
		v := ground.Text(act.Args[n])
		shown := false
		for _, r := range rs {
			shown = shown || r.OK && strings.Contains(string(r.Result), v)
		}
		if !shown {
			continue
		}
		left := scenario.Call{Tool: act.Tool, Args: maps.Clone(act.Args)}
		delete(left.Args, n)
		if refusedAfter(ctx, tb, e, sc, at, left) {
			return left, true
		}
	}
	return scenario.Call{}, false
}

// redone is a success whose act is made first with one value the caller
// never states (another value of the argument's enum, or a whole number one
// off), then as asked, on the same record: nil when no such value leaves
// every call carried out. Another record for an argument that names one is
// record-named's to refuse, not act-once's, and is not tried.
func redone(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario, at int) *scenario.Scenario {
	act := sc.Solution[at]
	t := e.C.Tool(act.Tool)
	if t == nil {
		return nil
	}
	own := ""
	if u := e.C.UseCase(sc.UseCase); u != nil {
		own = strings.TrimSuffix(strings.TrimSpace(u.Text), ".")
	}
	record, _ := actRecord(e.C, sc, act)
	names := make([]string, 0, len(act.Args))
	for n := range act.Args {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cur := act.Args[n]
		if x, ok := cur.(string); ok && (x == record || x == ground.Text(sc.CallerID)) {
			continue
		}
		for _, other := range otherValues(t, n, cur, 2) {
			if saysValue(sc, own, ground.Text(other), t.Enum(n)) {
				continue
			}
			first := scenario.Call{Tool: act.Tool, Args: maps.Clone(act.Args)}
			first.Args[n] = other
			m := clone(sc)
			m.Solution = append(append(append([]scenario.Call(nil), sc.Solution[:at]...), first), sc.Solution[at:]...)
			rs, _, err := e.Prover.Rehearse(ctx, m.Setup, m.Solution, false)
			if err != nil {
				tb.Fatalf("%s: %v", sc.Name, err)
			}
			ok := true
			for _, r := range rs {
				ok = ok && r.OK
			}
			if ok {
				return m
			}
		}
	}
	return nil
}

// otherValues are the values argument n of tool t could take instead of
// cur: the other values of its enum, or for a whole number one less (when
// it is at least least) and one more.
func otherValues(t *contract.Tool, n string, cur any, least float64) []any {
	var others []any
	switch x := cur.(type) {
	case string:
		for _, v := range t.Enum(n) {
			if s, ok := v.(string); ok && s != x {
				others = append(others, s)
			}
		}
	case float64:
		if x == float64(int64(x)) {
			if x >= least {
				others = append(others, x-1)
			}
			others = append(others, x+1)
		}
	}
	return others
}

// ruleChecks are the sub-goals that check the rules a scenario names.
func ruleChecks(c *contract.Contract, sc *scenario.Scenario) map[string]bool {
	checks := map[string]bool{}
	for _, id := range sc.Rules {
		for _, r := range c.Rules {
			if r.ID == id && r.Check != "" {
				checks[r.Check] = true
			}
		}
	}
	return checks
}

// unaskedSetting is a success with its act given, for an argument named
// like a column of the record it names (a setup insert that makes the
// record holds that column), a value the caller never says and the record
// does not hold (another value of the argument's enum, or for a whole
// number one less or one more), its checks' params under that name made to
// agree; the world must carry it out and end otherwise than with the
// original value. Nil when the act has no such argument.
func unaskedSetting(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario, at int) *scenario.Scenario {
	act := sc.Solution[at]
	t := e.C.Tool(act.Tool)
	if t == nil {
		return nil
	}
	own := ""
	if u := e.C.UseCase(sc.UseCase); u != nil {
		own = strings.TrimSuffix(strings.TrimSpace(u.Text), ".")
	}
	var end string
	names := make([]string, 0, len(act.Args))
	for n := range act.Args {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cur := act.Args[n]
		held, ok := recordHolds(sc, act, n)
		if !ok {
			continue
		}
		for _, other := range otherValues(t, n, cur, 1) {
			text := ground.Text(other)
			if text == held || saysValue(sc, own, text, t.Enum(n)) {
				continue
			}
			if end == "" {
				_, diff, err := e.Prover.Rehearse(ctx, sc.Setup, sc.Solution, true)
				if err != nil {
					tb.Fatalf("%s: %v", sc.Name, err)
				}
				end = js(diff)
			}
			m := clone(sc)
			m.Solution[at].Args[n] = other
			for i := range m.SubGoals {
				if m.SubGoals[i].Params != nil {
					m.SubGoals[i].Params = setNamed(map[string]any(m.SubGoals[i].Params), n, cur, other).(map[string]any)
				}
			}
			rs, diff, err := e.Prover.Rehearse(ctx, m.Setup, m.Solution, true)
			if err != nil {
				tb.Fatalf("%s: %v", sc.Name, err)
			}
			ok := true
			for _, r := range rs {
				ok = ok && r.OK
			}
			if ok && js(diff) != end {
				return m
			}
		}
	}
	return nil
}

// insertInto reads a plain insert's table and columns.
var insertInto = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+([a-z_][a-z0-9_]*)\s*\(([^)]*)\)`)

// plainInsert is the table and the columns, in order, of a plain insert;
// "" and nil for any other statement.
func plainInsert(sql string) (table string, cols []string) {
	m := insertInto.FindStringSubmatch(sql)
	if m == nil {
		return "", nil
	}
	for _, col := range strings.Split(m[2], ",") {
		cols = append(cols, strings.TrimSpace(col))
	}
	return m[1], cols
}

// recordHolds is, as text, column n of the record a call names, read from
// the setup insert that makes it (an insert with a column n whose arguments
// hold a string argument of the call); false when no insert does.
func recordHolds(sc *scenario.Scenario, call scenario.Call, n string) (string, bool) {
	keys := map[string]bool{}
	for k, v := range call.Args {
		if s, ok := v.(string); ok && k != n {
			keys[s] = true
		}
	}
	for _, st := range sc.Setup {
		_, cols := plainInsert(st.SQL)
		if cols == nil {
			continue
		}
		at, names := slices.Index(cols, n), false
		for _, a := range st.Args {
			s, ok := a.(string)
			names = names || ok && keys[s]
		}
		if at >= 0 && names && at < len(st.Args) {
			return ground.Text(st.Args[at]), true
		}
	}
	return "", false
}

// js is v as JSON.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// saysValue reports, read apart from the gates as they read it, whether the
// caller's words (instruction or opening) state v, as sent or as words
// (basic_economy as "basic economy"), outside the use case's own text own.
// A longer value of the same list that holds v ("basic economy" holds
// "economy") is not v said.
func saysValue(sc *scenario.Scenario, own, v string, list []any) bool {
	words := valueWords(v)
	if len(words) == 0 {
		return false
	}
	exact := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(v) + `($|[^A-Za-z0-9_])`)
	var longer []*regexp.Regexp
	for _, e := range list {
		if s, ok := e.(string); ok && s != v && len(valueWords(s)) > len(words) {
			longer = append(longer, spoken(valueWords(s)))
		}
	}
	loose := spoken(words)
	for _, text := range []string{sc.Instruction, sc.Persona.Opening} {
		for _, l := range longer {
			text = l.ReplaceAllString(text, " ")
		}
		if exact.MatchString(text) {
			return true
		}
		if own != "" {
			text = regexp.MustCompile(`(?i)`+regexp.QuoteMeta(own)).ReplaceAllString(text, " ")
		}
		if loose.MatchString(text) {
			return true
		}
	}
	return false
}

// valueWords are the words of a value as a caller says them.
func valueWords(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == '_' || r == '-' || unicode.IsSpace(r) })
}

// spoken matches words as said, in any case, joined by spaces, underscores
// or hyphens.
func spoken(words []string) *regexp.Regexp {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(`(?i)(^|[^\pL\pN_])` + strings.Join(q, `[\s_-]+`) + `($|[^\pL\pN_])`)
}

// setNamed is v with every value under key n that equals was set to now.
func setNamed(v any, n string, was, now any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == n && ground.Text(e) == ground.Text(was) {
				out[k] = now
				continue
			}
			out[k] = setNamed(e, n, was, now)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = setNamed(e, n, was, now)
		}
		return out
	}
	return v
}

// settled reports a scenario with a code-settled sub-goal.
func settled(c *contract.Contract, sc *scenario.Scenario) bool {
	for _, g := range sc.SubGoals {
		if sg := c.SubGoal(g.Name); sg == nil || !sg.Judged {
			return true
		}
	}
	return false
}

// unsay drops from an instruction the sentences that hand the caller a value
// only the act uses (the new address of an address change): once the act is
// the tempting one, such a value is nowhere in the scenario's setup or
// solution, and an adversary would not leave the grounding gate that reason.
func unsay(instruction string, act scenario.Call, sc *scenario.Scenario) string {
	known := map[string]bool{}
	var note func(v any)
	note = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				note(e)
			}
		case []any:
			for _, e := range x {
				note(e)
			}
		default:
			known[ground.Text(x)] = true
		}
	}
	for _, st := range sc.Setup {
		note(st.Args)
	}
	for _, c := range sc.Solution {
		note(map[string]any(c.Args))
	}
	var only []string
	for _, v := range act.Args {
		if s, ok := v.(string); ok && s != "" && !known[s] {
			only = append(only, s)
		}
	}
	var kept []string
	for _, sentence := range strings.SplitAfter(instruction, ". ") {
		drop := false
		for _, v := range only {
			drop = drop || strings.Contains(sentence, v)
		}
		if !drop {
			kept = append(kept, sentence)
		}
	}
	return strings.TrimSpace(strings.Join(kept, ""))
}

// rulesWithChecks keeps the rules a scenario names whose checks it still
// carries (an adversary would not leave the static gate a reason to refuse).
func rulesWithChecks(c *contract.Contract, sc *scenario.Scenario) []string {
	names := map[string]bool{}
	for _, g := range sc.SubGoals {
		names[g.Name] = true
	}
	var out []string
	for _, id := range sc.Rules {
		for _, r := range c.Rules {
			if r.ID == id && (r.Check == "" || names[r.Check]) {
				out = append(out, id)
			}
		}
	}
	return out
}

// unusedTool is a tool of the contract the scenario never calls, on any path.
func unusedTool(c *contract.Contract, sc *scenario.Scenario) string {
	used := map[string]bool{}
	for _, calls := range [][]scenario.Call{sc.Solution, sc.Tempting, sc.Missing} {
		for _, call := range calls {
			used[call.Tool] = true
		}
	}
	for _, t := range c.Tools {
		if !used[t.Name] {
			return t.Name
		}
	}
	return ""
}

// noOpSetup is the setup of a success extended so that the world already
// holds what the solution leaves: each row the solution changes is updated
// to its end values first, so the act sets what is there. Nil when the
// solution adds or removes rows (no such setup makes it a no-op).
// staleSaid is sc with its outputs replaced by a value a cell held before
// the act changed it, where an answer of the solution shows it beside the
// cell's key and is the one place any answer shows the value, and no
// changed row holds it after (nil when the act changes no such cell). A value other places show too (the
// caller's own address beside the order's) may be what the agent reads out
// there.
func staleSaid(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario) *scenario.Scenario {
	results, diff, err := e.Prover.Rehearse(ctx, sc.Setup, sc.Solution, true)
	if err != nil {
		tb.Fatalf("%s: %v", sc.Name, err)
	}
	if diff == nil {
		return nil
	}
	shown := map[string]int{}
	for _, r := range results {
		var doc any
		if json.Unmarshal(r.Result, &doc) == nil {
			leafCount(shown, doc)
		}
	}
	now := map[string]int{}
	for _, t := range diff.Tables {
		for _, ch := range t.Changed {
			leafCount(now, ch.After)
		}
	}
	for _, t := range diff.Tables {
		for _, ch := range t.Changed {
			// The key's values that tell records apart (not a position 0).
			var keys []string
			for _, k := range ch.Key {
				if k := ground.Text(k); len(k) >= 3 || strings.IndexFunc(k, unicode.IsLetter) >= 0 {
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				continue
			}
			for _, col := range ch.Columns {
				v := ground.Text(ch.Before[col])
				if len(v) < 3 || v == "true" || v == "false" || shown[v] != 1 || now[v] > 0 || !slices.ContainsFunc(results, func(r world.CallResult) bool { return showsWith(r.Result, v, keys) }) {
					continue
				}
				m := clone(sc)
				m.Outputs = []string{v}
				return m
			}
		}
	}
	return nil
}

// showsWith reports whether an answer shows v in an object that carries,
// itself or in the objects around it, every one of keys: v is that record's.
func showsWith(raw json.RawMessage, v string, keys []string) bool {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return false
	}
	var walk func(doc any, around []string) bool
	walk = func(doc any, around []string) bool {
		switch x := doc.(type) {
		case map[string]any:
			here := slices.Clone(around)
			for _, e := range x {
				switch e.(type) {
				case map[string]any, []any, nil:
				default:
					here = append(here, ground.Text(e))
				}
			}
			for _, e := range x {
				switch e.(type) {
				case map[string]any, []any:
					if walk(e, here) {
						return true
					}
				case nil:
				default:
					if ground.Text(e) == v && !slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(here, k) }) {
						return true
					}
				}
			}
		case []any:
			for _, e := range x {
				if walk(e, around) {
					return true
				}
			}
		}
		return false
	}
	return walk(doc, nil)
}

// checkElsewhere is sc with the first check param named like an argument of
// act, and equal to it, emptied (a list, a text) or made one more (a
// number) (nil when no check has such a param).
func checkElsewhere(sc *scenario.Scenario, act scenario.Call) *scenario.Scenario {
	for i, g := range sc.SubGoals {
		for _, name := range slices.Sorted(maps.Keys(g.Params)) {
			v, ok := act.Args[name]
			if !ok || js(v) != js(g.Params[name]) {
				continue
			}
			var nv any
			switch x := v.(type) {
			case []any:
				if len(x) == 0 {
					continue
				}
				nv = []any{}
			case float64:
				nv = x + 1
			case string:
				if x == "" {
					continue
				}
				nv = ""
			default:
				continue
			}
			m := clone(sc)
			m.SubGoals[i].Params = maps.Clone(g.Params)
			m.SubGoals[i].Params[name] = nv
			return m
		}
	}
	return nil
}

// withholdAct is sc with the caller saying they do not want act (nil when
// its tool's name has no verb of three letters or more).
func withholdAct(sc *scenario.Scenario, act scenario.Call) *scenario.Scenario {
	verb := strings.ToLower(strings.FieldsFunc(act.Tool, func(r rune) bool { return r == '_' || r == '-' })[0])
	if len(verb) < 3 {
		return nil
	}
	m := clone(sc)
	mention := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(verb) + `\w*`)
	if mention.MatchString(m.Instruction) {
		m.Instruction = mention.ReplaceAllString(m.Instruction, "not $0")
	} else {
		m.Instruction += fmt.Sprintf(" They do not want to %s anything.", verb)
	}
	if mention.MatchString(m.Persona.Opening) {
		m.Persona.Opening = mention.ReplaceAllString(m.Persona.Opening, "not $0")
	}
	return m
}

// leafCount counts every scalar of v, as text.
func leafCount(n map[string]int, v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			leafCount(n, e)
		}
	case []any:
		for _, e := range x {
			leafCount(n, e)
		}
	case nil:
	default:
		n[ground.Text(x)]++
	}
}

func noOpSetup(ctx context.Context, tb testing.TB, e *engine.Engine, sc *scenario.Scenario) []scenario.Statement {
	_, diff, err := e.Prover.Rehearse(ctx, sc.Setup, sc.Solution, true)
	if err != nil {
		tb.Fatalf("%s: %v", sc.Name, err)
	}
	if diff == nil || diff.Empty() {
		return nil
	}
	setup := append([]scenario.Statement(nil), sc.Setup...)
	for _, t := range diff.Tables {
		if len(t.Added) > 0 || len(t.Removed) > 0 {
			return nil
		}
		for _, ch := range t.Changed {
			var set, where []string
			var args []any
			for _, col := range ch.Columns {
				args = append(args, ch.After[col])
				set = append(set, fmt.Sprintf("%s = $%d", col, len(args)))
			}
			keys := make([]string, 0, len(ch.Key))
			for k := range ch.Key {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				args = append(args, ch.Key[k])
				where = append(where, fmt.Sprintf("%s = $%d", k, len(args)))
			}
			setup = append(setup, scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s WHERE %s", t.Table, strings.Join(set, ", "), strings.Join(where, " AND ")), Args: args})
		}
	}
	return setup
}

func checkMutation(t *testing.T, example string, m mutation) {
	t.Helper()
	t.Logf("%s:\n%s", example, m)
	if m.kept < m.originals {
		t.Errorf("%s: %d of %d originals no longer kept: %s", example, m.originals-m.kept, m.originals, strings.Join(m.notKept, "; "))
	}
	for _, g := range m.groundless {
		t.Errorf("%s: kept though groundless: %s", example, g)
	}
	for _, s := range m.survivors {
		t.Errorf("%s: mutant survived: %s", example, s)
	}
	checkKinds(t, example, m.made)
}

// checkKinds fails, for one example, on each kind made zero times that
// notApplicable does not excuse for it, and on each it excuses that was made.
func checkKinds(tb testing.TB, example string, made map[string]int) {
	tb.Helper()
	why, known := notApplicable[example]
	if !known {
		tb.Errorf("%s: notApplicable does not list the example: say which mutant kinds its suites cannot make", example)
	}
	for _, k := range mutantKinds {
		reason, excused := why[k]
		switch {
		case made[k] == 0 && !excused:
			tb.Errorf("%s: no %s mutant was made: the suite does not test it (list it in notApplicable with a reason if it cannot apply)", example, k)
		case made[k] > 0 && excused:
			tb.Errorf("%s: %d %s mutants were made, yet notApplicable says %q", example, made[k], k, reason)
		}
	}
}

// runTotals adds up, over the examples of one run, the mutants made of each
// kind and the codes that first refused them.
type runTotals struct {
	examples int
	made     map[string]int
	codes    map[string]map[string]int
}

func (r *runTotals) add(m mutation) {
	r.examples++
	if r.made == nil {
		r.made, r.codes = map[string]int{}, map[string]map[string]int{}
	}
	for k, n := range m.made {
		r.made[k] += n
	}
	for k, cs := range m.codes {
		if r.codes[k] == nil {
			r.codes[k] = map[string]int{}
		}
		for c, n := range cs {
			r.codes[k][c] += n
		}
	}
}

// check fails on a kind the whole run made zero times (every: the run's
// examples are to make every kind between them) and on an aimed kind that
// was made but never refused first by the gate it aims at.
func (r *runTotals) check(tb testing.TB, every bool) {
	tb.Helper()
	for _, k := range mutantKinds {
		if every && r.made[k] == 0 {
			tb.Errorf("no %s mutant was made on any example: the run does not test it", k)
		}
		if aim, ok := aims[k]; ok && r.made[k] > 0 && r.codes[k][aim] == 0 {
			tb.Errorf("%d %s mutants were made and none was refused first by %s (%v): the gate it aims at is reached only through others", r.made[k], k, aim, r.codes[k])
		}
	}
}

// TestMutation runs the mutation test on small suites of five contracts:
// three inbound examples (airline's acts set columns of their records,
// which act-value-unasked varies), clinic-reminders, whose calls the agent
// places, and clinic-voice, written outside the repository, whose acts take
// arguments their schema does not require. Each suite is as large as its
// plan needs to deal every outcome it has.
func TestMutation(t *testing.T) {
	testenv.OutsideRace(t, manyProofs)
	var run runTotals
	examples := []struct {
		name string
		size int
	}{{"retail", 40}, {"rides", 40}, {"airline", 60}, {"clinic-reminders", 40},
		{"clinic-voice", 60}} // airline's and clinic-voice's first asks are dealt past 40
	var mu sync.Mutex
	// The examples run in parallel; the totals are checked once all have
	// (a cleanup runs after the parallel subtests, a defer before them).
	t.Cleanup(func() {
		if run.examples > 0 {
			run.check(t, run.examples == len(examples))
		}
	})
	for _, ex := range examples {
		example := ex.name
		t.Run(example, func(t *testing.T) {
			t.Parallel()
			url, scs := writeSuite(t, example, ex.size, 0)
			ctx := context.Background()
			c, err := contract.LoadValid(contractDir(example))
			if err != nil {
				t.Fatal(err)
			}
			pool, err := pgxpool.New(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			e, err := engine.Open(ctx, pool, c)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			m := mutate(ctx, t, e, scs)
			mu.Lock()
			run.add(m)
			mu.Unlock()
			checkMutation(t, example, m)
		})
	}
}

// BenchmarkMutation is the mutation test at full size: a 1,000-scenario
// suite of each example (the plan's want raised to 40, as the pipeline
// benchmark does), every original proved again from disk and every mutant
// proved. It reports, over the examples it runs, the kill rate (killed/mutants, %),
// the share of originals still kept (%), the mutants made, the survivors and
// the kept scenarios whose act the world carries out unopposed; it fails on
// any survivor or groundless scenario, and per example on a mutant kind made
// zero times that notApplicable does not excuse there. Long: it runs only with
// SUITEGEN_BENCH=1 (make bench sets it); SUITEGEN_BENCH_SCENARIOS sets the
// suite size, SUITEGEN_BENCH_EXAMPLES (comma-separated) the examples, retail
// and rides unless set, SUITEGEN_BENCH_MAX_WANT a bucket's want (40; 0: the
// plan's own, reusing templates past the contract's distinct rows).
func BenchmarkMutation(b *testing.B) {
	if os.Getenv("SUITEGEN_BENCH") != "1" {
		b.Skip("set SUITEGEN_BENCH=1 to run the mutation test on 1,000-scenario suites")
	}
	n := 1000
	if v := os.Getenv("SUITEGEN_BENCH_SCENARIOS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
			b.Fatalf("SUITEGEN_BENCH_SCENARIOS=%q is not a positive number", v)
		}
	}
	examples := []string{"retail", "rides"}
	if v := os.Getenv("SUITEGEN_BENCH_EXAMPLES"); v != "" {
		examples = strings.Split(v, ",")
	}
	// A bucket's want: 40 distinct templates by default; 0 lets the plan
	// reuse templates up to what the contract's codes hold.
	maxWant := 40
	if v := os.Getenv("SUITEGEN_BENCH_MAX_WANT"); v != "" {
		if _, err := fmt.Sscan(v, &maxWant); err != nil || maxWant < 0 {
			b.Fatalf("SUITEGEN_BENCH_MAX_WANT=%q is not a number of 0 or more", v)
		}
	}
	var made, killed, originals, kept, survivors, groundless int
	for b.Loop() {
		for _, example := range examples {
			url, scs := writeSuite(b, example, n, maxWant)
			ctx := context.Background()
			c, err := contract.LoadValid(contractDir(example))
			if err != nil {
				b.Fatal(err)
			}
			pool, err := pgxpool.New(ctx, url)
			if err != nil {
				b.Fatal(err)
			}
			e, err := engine.Open(ctx, pool, c)
			if err != nil {
				b.Fatal(err)
			}
			m := mutate(ctx, b, e, scs)
			e.Close()
			pool.Close()
			b.Logf("%s, %d scenarios:\n%s", example, n, m)
			checkKinds(b, example, m.made)
			mm, mk := m.totals()
			made, killed = made+mm, killed+mk
			originals, kept = originals+m.originals, kept+m.kept
			survivors += len(m.survivors)
			groundless += len(m.groundless)
			for _, s := range m.survivors {
				b.Errorf("%s: mutant survived: %s", example, s)
			}
			for _, g := range m.groundless {
				b.Errorf("%s: kept though groundless: %s", example, g)
			}
		}
	}
	if made == 0 || originals == 0 {
		b.Fatalf("%d mutants made from %d originals: nothing to measure", made, originals)
	}
	b.ReportMetric(100*float64(killed)/float64(made), "kill-%")
	b.ReportMetric(100*float64(kept)/float64(originals), "kept-%")
	b.ReportMetric(float64(made)/float64(b.N), "mutants")
	b.ReportMetric(float64(survivors)/float64(b.N), "survivors")
	b.ReportMetric(float64(groundless)/float64(b.N), "groundless")
}

// recordTB records the failures a check reports.
type recordTB struct {
	testing.TB
	errs []string
}

func (r *recordTB) Helper() {}

func (r *recordTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestRunTotalsCheck: a run of the mutation test fails on a kind no example
// made, and on an aimed kind none of whose mutants its gate refused first.
func TestRunTotalsCheck(t *testing.T) {
	full := func() *runTotals {
		r := &runTotals{made: map[string]int{}, codes: map[string]map[string]int{}}
		for _, k := range mutantKinds {
			r.made[k] = 1
			r.codes[k] = map[string]int{"x/y": 1}
		}
		for k, aim := range aims {
			r.codes[k] = map[string]int{aim: 1}
		}
		return r
	}
	rec := &recordTB{TB: t}
	full().check(rec, true)
	if len(rec.errs) > 0 {
		t.Fatalf("every kind made, every aim reached: %v", rec.errs)
	}
	r := full()
	r.made[secondAct] = 0
	rec = &recordTB{TB: t}
	r.check(rec, true)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], secondAct) {
		t.Errorf("a kind made zero times: got %v", rec.errs)
	}
	rec = &recordTB{TB: t}
	r.check(rec, false)
	if len(rec.errs) != 0 {
		t.Errorf("a kind made zero times where the run's examples need not make every kind: got %v", rec.errs)
	}
	r = full()
	r.codes[actRedone] = map[string]int{"outcome/no-effect": 1}
	rec = &recordTB{TB: t}
	r.check(rec, false)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], actRedone) {
		t.Errorf("an aimed kind never refused by its gate: got %v", rec.errs)
	}
}
