package prove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// Refusal is one reason a scenario is not kept.
type Refusal struct {
	Gate    Gate   `json:"gate"`
	Code    Code   `json:"code"`
	Message string `json:"message"`
	SubGoal string `json:"sub_goal,omitempty"`
	// Step and Arg name the solution step (from 1) and its argument the
	// refusal is about, where it is about one (value-unchecked); Arg alone
	// names an argument of the tempting act (narrow-check).
	Step int    `json:"step,omitempty"`
	Arg  string `json:"arg,omitempty"`
	// Request is the request of a conversation the refusal is about,
	// counted from 1; 0 when it is about the conversation as a whole or
	// the scenario has one request.
	Request int `json:"request,omitempty"`
}

func (r Refusal) String() string { return string(r.Gate) + "/" + string(r.Code) + ": " + r.Message }

// Verdict is the outcome of proving one scenario.
type Verdict struct {
	Kept     bool      `json:"kept"`
	Refusals []Refusal `json:"refusals,omitempty"`
	// Codes are the identifiers the scenario hands its caller (record keys it
	// minted or names): the suite gate keeps them unique across a run.
	Codes []string `json:"codes,omitempty"`
	// Runs are what the prover played (the solution and each counterfactual)
	// and what every check said there, in the order the gates read them.
	Runs     []Run         `json:"runs,omitempty"`
	Duration time.Duration `json:"-"`
}

// Prover proves scenarios of one contract against its world.
type Prover struct {
	c     *contract.Contract
	w     *world.World
	progs *script.Programs
	g     *ground.Graph
	seed  map[string]bool // every text value in the seed, for grounding
	// extra are sub-goals added during a run (WithSubGoals), by name.
	extra map[string]*contract.SubGoal
	// params are the tools' compiled params schemas; a tool whose params do
	// not compile (a contract Load refuses) has none and is not checked here.
	params map[string]*jsonschema.Schema
	// pristine caches the frozen world's snapshot, shared by the provers
	// WithSubGoals derives.
	pristine *frozenState
	// told is the contract's own text an agent is given: notes, rules, use
	// cases, tool and parameter descriptions.
	told string
	// people are the seed's values of columns that name or reach a person
	// (unsaidDetails).
	people map[string]bool
}

// told is the contract's text an agent reads, as one string.
func told(c *contract.Contract) string {
	var b strings.Builder
	b.WriteString(c.Notes)
	for _, r := range c.Rules {
		b.WriteString("\n" + r.Text)
	}
	for _, u := range c.UseCases {
		b.WriteString("\n" + u.Text)
	}
	for _, t := range c.Tools {
		b.WriteString("\n" + t.Description)
		for _, n := range t.ParamNames() {
			d, _ := t.Param(n)["description"].(string)
			b.WriteString("\n" + d)
		}
	}
	return b.String()
}

// New returns a prover.
func New(c *contract.Contract, w *world.World, progs *script.Programs) *Prover {
	p := &Prover{c: c, w: w, progs: progs, g: ground.New(c), seed: map[string]bool{}, params: map[string]*jsonschema.Schema{}, pristine: &frozenState{}, told: told(c)}
	for _, s := range c.Seeds {
		for _, r := range s.Rows {
			for _, v := range r {
				ground.AddValues(p.seed, v)
			}
		}
	}
	p.people = map[string]bool{}
	for _, t := range c.Tables {
		for _, col := range t.Columns {
			if p.g.Renamed(t.Name, col.Name) == "" {
				continue
			}
			for _, row := range p.g.Rows(t.Name) {
				if v, ok := row[col.Name].(string); ok && v != "" {
					p.people[v] = true
				}
			}
		}
	}
	for i := range c.Tools {
		t := &c.Tools[i]
		if t.Params == nil {
			continue
		}
		if s, err := contract.CompileParams(t.Params); err == nil {
			p.params[t.Name] = s
		}
	}
	return p
}

// Prove runs every gate on one scenario. A scenario the gates refuse is a
// Verdict with its refusals; an error is a failure of the infrastructure (the
// database went away, ctx ended), which says nothing about the scenario. A
// scenario with further requests (Then) is proved request by request, then
// as a whole (requests.go).
func (p *Prover) Prove(ctx context.Context, sc *scenario.Scenario) (v Verdict, err error) {
	start := time.Now()
	defer func() { v.Duration = time.Since(start) }()
	if len(sc.Then) > 0 {
		if v, err = p.proveRequests(ctx, sc); err != nil {
			return v, fmt.Errorf("prove %s: %w", sc.Name, err)
		}
		return v, nil
	}
	if rs := p.static(sc); len(rs) > 0 {
		v.Refusals = rs
		return v, nil
	}
	pr := &proof{p: p, sc: sc, checks: p.settledChecks(sc)}
	defer func() { v.Runs = pr.trace() }()
	rs, err := p.gates(ctx, pr)
	if err != nil {
		return v, fmt.Errorf("prove %s: %w", sc.Name, err)
	}
	if len(rs) > 0 {
		v.Refusals = rs
		return v, nil
	}
	v.Kept = true
	v.Codes = p.codes(sc)
	return v, nil
}

// gates runs every gate after the static one on one request.
func (p *Prover) gates(ctx context.Context, pr *proof) ([]Refusal, error) {
	sc := pr.sc
	rs, err := pr.main(ctx)
	if err != nil || len(rs) > 0 {
		return rs, err
	}
	if rs := p.grounding(sc, pr.results, pr.also...); len(rs) > 0 {
		return rs, nil
	}
	if msg := pr.computedAside(); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeOutputNotInResults, Message: msg}}, nil
	}
	if rs := vagueOutputs(sc, pr.results); len(rs) > 0 {
		return rs, nil
	}
	if msg := p.echoedOutput(sc, pr.results); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeEchoedOutput, Message: msg}}, nil
	}
	if msg := staleOutput(sc.Outputs, pr.results, pr.changed); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeStaleOutput, Message: msg}}, nil
	}
	if msg := pr.staleReplayed(); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeStaleOutput, Message: msg}}, nil
	}
	if msg := p.callerMismatch(sc, pr.results, "solution"); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeCallerMismatch, Message: msg}}, nil
	}
	if msg := p.callerNamed(sc, pr.results); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeCallerMismatch, Message: msg}}, nil
	}
	if msg := p.personaNotCaller(sc); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeCallerMismatch, Message: msg}}, nil
	}
	if msg := p.notHolder(sc, pr.results); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeCallerMismatch, Message: msg}}, nil
	}
	if msg := pr.voicemailSays(); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeCallerMismatch, Message: msg}}, nil
	}
	if msg := pr.unreachable(pr.results, 0, len(pr.results), "solution"); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeUnreachableRecord, Message: msg}}, nil
	}
	if msg := pr.unnamedRecord(); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeRecordNamed, Message: msg}}, nil
	}
	if rs := p.argValues(sc, pr.results); len(rs) > 0 {
		return rs, nil
	}
	if msg := pr.withheld(); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeRequestUnasked, Message: msg}}, nil
	}
	if msg := pr.disclosedOutput(); msg != "" {
		return []Refusal{{Gate: GateGrounding, Code: CodeDisclosure, Message: msg}}, nil
	}
	if rs, err := pr.unsaidDetails(ctx); err != nil || len(rs) > 0 {
		return rs, err
	}
	if err := pr.counterfactuals(ctx); err != nil {
		return nil, err
	}
	if err := pr.unrequested(ctx); err != nil {
		return nil, err
	}
	if rs := pr.outcome(); len(rs) > 0 {
		return rs, nil
	}
	// Read after the outcome gates: a value those play against the world
	// (a quoted one, a column's value kept) is refused there with what the
	// world does; what is left is the caller's plain words.
	if msg := pr.contradicted(); msg != "" {
		return []Refusal{{Gate: GateOutcome, Code: CodeInstructionContradicts, Message: msg}}, nil
	}
	return pr.teeth(), nil
}

// main plays the scenario's own copy: setup, the ready queries, the checks
// as they stand before anything happens (the "nothing" counterfactual, read
// here rather than on a copy of its own: check queries run in savepoints that
// are always rolled back, so the solution meets the same world), then the
// solution and its checks. For a success that changed something, the copy's
// end state is compared with the world right after setup (the before copy),
// and the checks are read once more over that untouched world with the
// solution's call log: a check that fails there is one that sees the act.
func (pr *proof) main(ctx context.Context) ([]Refusal, error) {
	sc := pr.sc
	setup := pr.setup(ctx)
	var rs []Refusal
	err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, before *world.Before) error {
		rs, pr.results, pr.solution, pr.nothing, pr.logOnly, pr.effect, pr.compared, pr.changed, pr.replayed = nil, nil, nil, nil, nil, nil, false, world.StateDiff{}, nil
		var err error
		// A further request starts where the requests before it left the
		// world: what the ready gate confirms is the conversation's start,
		// read once, on request 1.
		if len(pr.prior) == 0 {
			if rs, err = pr.p.ready(ctx, cp, sc); err != nil || len(rs) > 0 {
				return err
			}
			if msg, err := pr.overreach(ctx, cp); err != nil || msg != "" {
				if msg != "" {
					rs = []Refusal{{Gate: GateReady, Code: CodeSetupOverreach, Message: msg}}
				}
				return err
			}
		}
		view := cp.View(sc.CallerID, func() script.WorldView { return before.View() })
		nothing, err := pr.evalChecks(ctx, view, nil, false)
		if err != nil {
			return err
		}
		pr.nothing = &Run{Gate: GateNotVacuous, Counterfactual: Nothing, Checks: nothing}
		if pr.prohibited, err = pr.prohibitions(ctx, view); err != nil {
			return err
		}
		pr.results = play(ctx, cp, sc.Solution)
		pr.solution = &Run{Gate: GateSolvable, Counterfactual: Solution, Calls: steps(pr.results)}
		for i, r := range pr.results {
			switch {
			case r.Crash && infrastructure(r.Err):
				return r.Err
			case r.Crash:
				rs = append(rs, Refusal{Gate: GateSolvable, Code: CodeStepCrashed, Message: fmt.Sprintf("solution step %d (%s) crashed the world: %s", i+1, r.Tool, r.Error)})
			case !r.OK:
				rs = append(rs, Refusal{Gate: GateSolvable, Code: CodeStepRefused, Message: fmt.Sprintf("solution step %d (%s) was refused: %s", i+1, r.Tool, r.Error)})
			}
		}
		if len(rs) > 0 {
			return nil
		}
		unordered := false
		if pr.solution.Checks, err = pr.evalChecks(ctx, unorderedView{WorldView: view, seen: &unordered}, pr.results, false); err != nil {
			return err
		}
		for _, c := range pr.solution.Checks {
			switch {
			case c.Broken:
				rs = append(rs, Refusal{Gate: GateSolvable, Code: CodeCheckBroken, Message: c.Why, SubGoal: c.Name})
			case !c.Held:
				rs = append(rs, Refusal{Gate: GateSolvable, Code: CodeCheckFailed, Message: fmt.Sprintf("sub-goal %s does not hold after the solution: %s", c.Name, c.Why), SubGoal: c.Name})
			}
		}
		if len(rs) > 0 {
			return nil
		}
		if unordered {
			if rs, err = pr.rowOrder(ctx, view, pr.solution.Checks); err != nil || len(rs) > 0 {
				return err
			}
		}
		if rs, err = pr.rulesBroken(ctx, view, before, pr.prohibited); err != nil || len(rs) > 0 {
			return err
		}
		if (sc.Expects != scenario.OutcomeSucceed && !pr.p.loggedMiss(sc)) || !pr.changesState() {
			return nil
		}
		bcp, err := before.Copy()
		if err != nil {
			return err
		}
		was, err := bcp.Snapshot(ctx)
		if err != nil {
			return err
		}
		now, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		// Which tables differ is all the outcome gate needs: nothing is decoded.
		pr.effect, pr.compared = world.ChangedTables(was, now), true
		if len(pr.effect) == 0 {
			return nil
		}
		if len(sc.Outputs) > 0 {
			if pr.changed, err = world.DiffSnapshots(was, now); err != nil {
				return err
			}
		}
		if len(sc.Outputs) > 0 || len(sc.Computed) > 0 {
			if pr.replayed, err = pr.replay(ctx, cp); err != nil {
				return err
			}
		}
		logView := bcp.View(sc.CallerID, func() script.WorldView { return before.View() })
		checks, err := pr.evalChecks(ctx, logView, pr.results, false)
		if err != nil {
			return err
		}
		pr.logOnly = &Run{Gate: GateNotVacuous, Counterfactual: LogOnly, Calls: steps(pr.results), Checks: checks}
		return nil
	})
	var se *scenario.SetupError
	var pe *priorRefused
	switch {
	case errors.As(err, &se) && !infrastructure(se.Err):
		return []Refusal{{Gate: GateReady, Code: CodeSetupFailed, Message: se.Error()}}, nil
	case errors.As(err, &pe):
		return []Refusal{{Gate: GateSolvable, Code: CodeStepRefused, Message: pe.Error()}}, nil
	case err != nil:
		return nil, err
	}
	return rs, nil
}

// callerMismatch says where a call that identifies the caller (the
// contract's caller.from tools) names someone other than the scenario's
// caller_id, on one path ("" when none does). caller_id is who the person
// on the other end is once identified; a path that identifies another
// person makes every check about "the caller" say something else.
func (p *Prover) callerMismatch(sc *scenario.Scenario, results []world.CallResult, path string) string {
	cl := p.c.Caller
	if cl == nil {
		return ""
	}
	for i, r := range results {
		if !r.OK || !slices.Contains(cl.From, r.Tool) {
			continue
		}
		var doc any
		if json.Unmarshal(r.Result, &doc) != nil {
			continue
		}
		// A result names one person (a key, or a record with the key) or
		// several (a list of records): the caller must be among them.
		var named []string
		switch x := doc.(type) {
		case map[string]any:
			if x[cl.Key] != nil {
				named = append(named, ground.Text(x[cl.Key]))
			}
		case []any:
			for _, e := range x {
				if m, ok := e.(map[string]any); ok && m[cl.Key] != nil {
					named = append(named, ground.Text(m[cl.Key]))
				}
			}
		case nil:
		default:
			named = append(named, ground.Text(x))
		}
		if len(named) > 0 && !slices.Contains(named, ground.Text(sc.CallerID)) {
			return fmt.Sprintf("%s step %d (%s) identifies %s %s, but the scenario's caller_id is %v", path, i+1, r.Tool, cl.Key, strings.Join(named, ", "), sc.CallerID)
		}
	}
	return ""
}

// callerNamed is callerMismatch where no tool identifies the caller (the
// contract's caller has no from): who calls is whom they say they are, so a
// solution step that names a person of the caller's table by its key names
// the caller, and must name caller_id.
func (p *Prover) callerNamed(sc *scenario.Scenario, results []world.CallResult) string {
	cl := p.c.Caller
	if cl == nil || len(cl.From) > 0 || sc.CallerID == nil {
		return ""
	}
	for i, r := range results {
		for _, name := range sortedArgs(r.Args) {
			v, ok := scalarArg(r.Args[name])
			if table, col, bound := p.c.RefOf(r.Tool, name); !ok || !bound || table != cl.Table || col != cl.Key {
				continue
			}
			if v != ground.Text(sc.CallerID) {
				return fmt.Sprintf("solution step %d (%s) names %s %s %s, who can only be the caller (no tool identifies the caller, so who calls is whom they say), but the scenario's caller_id is %v", i+1, r.Tool, cl.Table, cl.Key, v, sc.CallerID)
			}
		}
	}
	return ""
}

// changesState reports a solution with a call that wrote rows or whose tool
// the contract says changes state.
func (pr *proof) changesState() bool {
	for _, r := range pr.results {
		if r.Wrote {
			return true
		}
		if t := pr.p.c.Tool(r.Tool); t != nil && t.ChangesState != nil && *t.ChangesState {
			return true
		}
	}
	return false
}

// codes are the identifiers a scenario hands its caller: the keys its setup
// inserts. Two scenarios of a run may not share one.
func (p *Prover) codes(sc *scenario.Scenario) []string {
	var out []string
	seen := map[string]bool{}
	for _, st := range sc.Setup {
		if len(st.Args) == 0 {
			continue
		}
		m := insertInto.FindStringSubmatch(st.SQL)
		if m == nil {
			continue
		}
		pk := p.g.PK(m[1])
		cols := strings.Split(m[2], ",")
		for i, col := range cols {
			if strings.TrimSpace(col) == pk && i < len(st.Args) {
				code := m[1] + ":" + ground.Text(st.Args[i])
				if !seen[code] {
					seen[code] = true
					out = append(out, code)
				}
			}
		}
	}
	return out
}

var insertInto = regexp.MustCompile(`(?is)^\s*insert\s+into\s+([a-z_][a-z0-9_]*)\s*\(([^)]*)\)`)

// personaNotCaller says where an inbound scenario's persona is another
// person of the caller's table than caller_id: the persona's name has every
// name (first, last or full name columns) of another row of that table,
// the setup's or the seed's, and not caller_id's ("" otherwise). caller_id
// is who is on the line; checks about "the caller" read that person's
// records. A persona whose name no caller's row has (a guardian calling for
// a child the caller table holds) is not read here.
//
// An outbound call answered by someone else (wrong-person) is the mirror:
// its persona is who picks up, never the callee.
func (p *Prover) personaNotCaller(sc *scenario.Scenario) string {
	cl := p.c.Caller
	if cl == nil || sc.CallerID == nil || strings.TrimSpace(sc.Persona.Name) == "" {
		return ""
	}
	id := ground.Text(sc.CallerID)
	var rows []map[string]any
	for _, r := range insertedRows(sc.Setup) {
		if r.table == cl.Table {
			rows = append(rows, r.row)
		}
	}
	rows = append(rows, p.g.Rows(cl.Table)...)
	if ob := sc.Outbound; ob != nil {
		if ob.AnsweredBy != scenario.WrongPerson {
			return ""
		}
		for _, row := range rows {
			if ground.Text(row[cl.Key]) == id && p.personaIs(sc, row) {
				return fmt.Sprintf("the call is answered by someone other than the callee (answered_by %s), yet the persona, %s, is the callee, %s %s: the persona is who picks up", ob.AnsweredBy, sc.Persona.Name, cl.Table, id)
			}
		}
		return ""
	}
	other := ""
	for _, row := range rows {
		switch key := ground.Text(row[cl.Key]); {
		case key == id:
			if p.personaIs(sc, row) {
				return ""
			}
		case other == "" && p.personaIs(sc, row):
			other = key
		}
	}
	if other == "" {
		return ""
	}
	return fmt.Sprintf("the persona, %s, is %s %s, but caller_id is %s: the person on the line is the one caller_id names", sc.Persona.Name, cl.Table, other, id)
}

// personaIs reports whether every name of a row of the caller table (its
// first, last or full name columns) is one of the persona's, and it has a
// first or full name: a last name alone is a household's, not a person's.
func (p *Prover) personaIs(sc *scenario.Scenario, row map[string]any) bool {
	words := nameWords(sc.Persona.Name)
	named := false
	for col, v := range row {
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			continue
		}
		kind := p.g.Renamed(p.c.Caller.Table, col)
		switch kind {
		case "first", "last", "full":
		default:
			continue
		}
		for _, w := range nameWords(s) {
			if !slices.Contains(words, w) {
				return false
			}
		}
		named = named || kind != "last"
	}
	return named
}

// nameWords are a name's words in lower case.
func nameWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
}
