package writer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
)

// Bounds on what a writer may add to a run's catalogue.
const (
	maxSubGoalSource = 32 << 10
	maxRunSubGoals   = 200
	// maxCachedRuns bounds the per-run cache of a long-lived writer pod.
	maxCachedRuns = 32
)

var subGoalName = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)

// goalCache holds, per run, the prover that knows the sub-goals writers
// added to that run. Sub-goals are append-only in the ledger (the first of a
// name wins, none is removed), so an entry is stale only when the ledger has
// names it does not: it is refreshed when a scenario names a sub-goal it
// does not know, when the model lists the catalogue, and after an add.
type goalCache struct {
	mu   sync.Mutex
	runs map[string]*runGoals
	tick uint64
}

type runGoals struct {
	contract string // the engine's contract hash it was built over
	seen     int    // ledger rows read, compiled or not
	prover   *prove.Prover
	used     uint64
}

func newGoalCache() *goalCache { return &goalCache{runs: map[string]*runGoals{}} }

// prover returns the run's prover as cached (the engine's when the run has no
// additions known yet).
func (gc *goalCache) prover(run string, e *engine.Engine) *prove.Prover {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if rg := gc.runs[run]; rg != nil && rg.contract == e.C.SHA256 {
		gc.tick++
		rg.used = gc.tick
		return rg.prover
	}
	return e.Prover
}

// refresh reads the run's added sub-goals from the ledger and, when there are
// ones the cache does not have, compiles them over the contract's programs.
// A stored sub-goal that no longer compiles is left out (and logged): a
// scenario naming it is then refused as unknown.
func (gc *goalCache) refresh(ctx context.Context, w *Writer, run string, e *engine.Engine) (*prove.Prover, error) {
	stored, err := w.cfg.Ledger.SubGoals(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("run sub-goals: %w", err)
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	gc.tick++
	rg := gc.runs[run]
	if rg != nil && rg.contract == e.C.SHA256 && rg.seen >= len(stored) {
		rg.used = gc.tick
		return rg.prover, nil
	}
	sgs := make([]contract.SubGoal, len(stored))
	for i, g := range stored {
		sgs[i] = contract.SubGoal{Name: g.Name, What: g.What, Judged: g.Judged, Params: g.Params, File: addedFile(g.Name), Source: g.Source}
	}
	p, skipped, err := e.WithSubGoals(sgs)
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		w.log.Warn("a run's added sub-goal is left out", "run", run, "sub_goal", s.Name, "err", s.Err)
	}
	if len(gc.runs) >= maxCachedRuns && gc.runs[run] == nil {
		// Evict the least recently used run.
		oldest, at := "", ^uint64(0)
		for id, r := range gc.runs {
			if r.used < at {
				oldest, at = id, r.used
			}
		}
		delete(gc.runs, oldest)
	}
	gc.runs[run] = &runGoals{contract: e.C.SHA256, seen: len(stored), prover: p, used: gc.tick}
	return p, nil
}

// addedFile is the path an added sub-goal's errors are reported under.
func addedFile(name string) string { return "subgoals/" + name + ".star" }

// prover is the session's prover: the contract's, plus the sub-goals added
// to its run that this writer knows of.
func (ss *session) prover() *prove.Prover { return ss.w.goals.prover(ss.b.Run, ss.e) }

// proverFor returns a prover that knows every sub-goal sc names, reading the
// run's additions from the ledger when sc names one the cache does not know.
func (ss *session) proverFor(ctx context.Context, sc *scenario.Scenario) (*prove.Prover, error) {
	p := ss.prover()
	for _, ref := range sc.SubGoals {
		if !ss.known(p, ref.Name) {
			return ss.w.goals.refresh(ctx, ss.w, ss.b.Run, ss.e)
		}
	}
	return p, nil
}

func (ss *session) known(p *prove.Prover, name string) bool {
	if prove.IsBuiltin(name) || ss.e.C.SubGoal(name) != nil {
		return true
	}
	for _, sg := range p.RunSubGoals() {
		if sg.Name == name {
			return true
		}
	}
	return false
}

// AddSubGoalArgs are add_sub_goal's arguments.
type addSubGoalArgs struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// addSubGoalResult is add_sub_goal's answer when the sub-goal is in the
// run's catalogue.
type addSubGoalResult struct {
	Added   string            `json:"added"`
	What    string            `json:"what"`
	Judged  bool              `json:"judged"`
	Params  map[string]string `json:"params"`
	Already bool              `json:"already,omitempty"`
	Note    string            `json:"note"`
}

// addSubGoal validates, compiles and records a sub-goal in the run's
// catalogue. Every refusal names what to fix: the name's form, a Starlark
// syntax error's file:line, an unknown param type, a missing check.
func (ss *session) addSubGoal(ctx context.Context, args string) string {
	var a addSubGoalArgs
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return errorAnswer(brief.CodeBadArguments, "add_sub_goal takes {\"name\": \"...\", \"source\": \"...\"}: %v", err)
	}
	switch {
	case !subGoalName.MatchString(a.Name):
		return errorAnswer(brief.CodeInvalid, "name %q must match ^[a-z][a-z0-9_]{1,63}$ (lower-case letters, digits, underscores; 2 to 64 characters, a letter first).", clip(a.Name, 80))
	case prove.IsBuiltin(a.Name):
		return errorAnswer(brief.CodeTaken, "%s is a built-in sub-goal; use it as it is or choose another name.", a.Name)
	case ss.e.C.SubGoal(a.Name) != nil:
		return errorAnswer(brief.CodeTaken, "%s is already in the contract's catalogue (list_sub_goals shows it); use it or choose another name.", a.Name)
	case strings.TrimSpace(a.Source) == "":
		return errorAnswer(brief.CodeInvalid, "source is empty; give the Starlark of the sub-goal: what = \"...\", params = {...}, def check(world, calls, params).")
	case len(a.Source) > maxSubGoalSource:
		return errorAnswer(brief.CodeInvalid, "source is %d bytes, over the %d byte limit.", len(a.Source), maxSubGoalSource)
	}
	file := addedFile(a.Name)
	sg, probs := contract.ParseSubGoal(file, a.Source)
	if len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i] = p.String()
		}
		return errorAnswer(brief.CodeInvalid, "the sub-goal was not added: %s", strings.Join(msgs, "; "))
	}
	// What the run already has decides between "already added" and "taken".
	p, err := ss.w.goals.refresh(ctx, ss.w, ss.b.Run, ss.e)
	if err != nil {
		return ss.ledgerError(err)
	}
	existing := p.RunSubGoals()
	for _, g := range existing {
		if g.Name == a.Name {
			return ss.sameOrTaken(g, a.Source)
		}
	}
	if len(existing) >= maxRunSubGoals {
		return errorAnswer(brief.CodeFull, "this run already has %d added sub-goals, the most it may have; use those (list_sub_goals).", len(existing))
	}
	// Compiled with the contract's limits before anything is recorded: a file
	// that does not run, or runs away at its top level, is not added.
	if _, skipped, err := ss.e.WithSubGoals([]contract.SubGoal{sg}); err != nil || len(skipped) > 0 {
		if len(skipped) > 0 {
			err = skipped[0].Err
		}
		return errorAnswer(brief.CodeInvalid, "the sub-goal was not added: %s", compileText(err))
	}
	created, err := ss.w.cfg.Ledger.AddSubGoal(ctx, ss.b.Run, ledger.SubGoal{Name: sg.Name, What: sg.What, Judged: sg.Judged, Params: sg.Params, Source: a.Source})
	if err != nil {
		return ss.ledgerError(err)
	}
	p, err = ss.w.goals.refresh(ctx, ss.w, ss.b.Run, ss.e)
	if err != nil {
		return ss.ledgerError(err)
	}
	if !created {
		// Another writer added that name first.
		for _, g := range p.RunSubGoals() {
			if g.Name == a.Name {
				return ss.sameOrTaken(g, a.Source)
			}
		}
	}
	ss.w.log.Info("sub-goal added to the run's catalogue", "run", ss.b.Run, "slice", ss.b.Slice, "sub_goal", sg.Name)
	return jsonText(addSubGoalResult{Added: sg.Name, What: sg.What, Judged: sg.Judged, Params: sg.Params,
		Note: "in this run's catalogue for every writer: name it in a scenario's sub_goals with these params"})
}

func (ss *session) sameOrTaken(g contract.SubGoal, source string) string {
	if g.Source == source {
		return jsonText(addSubGoalResult{Added: g.Name, What: g.What, Judged: g.Judged, Params: g.Params, Already: true,
			Note: "already in this run's catalogue with this source"})
	}
	return errorAnswer(brief.CodeTaken, "this run already has a sub-goal %s with other source (what: %q); use it or choose another name.", g.Name, clip(g.What, 200))
}

func (ss *session) ledgerError(err error) string {
	if outage.Is(err) {
		ss.outage = &outageError{err}
	}
	return errorAnswer(brief.CodeLedger, "the ledger could not be read or written, try again: %v", err)
}

// compileText renders a compile error as file:line:col: message parts.
func compileText(err error) string {
	var ce *script.CompileError
	if errors.As(err, &ce) {
		parts := make([]string, len(ce.Errs))
		for i, fe := range ce.Errs {
			parts[i] = fe.Error()
		}
		return strings.Join(parts, "; ")
	}
	return err.Error()
}

// subGoalEntry is one entry of list_sub_goals' answer.
type subGoalEntry struct {
	Name    string            `json:"name"`
	What    string            `json:"what"`
	Judged  bool              `json:"judged"`
	Params  map[string]string `json:"params"`
	Builtin bool              `json:"builtin,omitempty"`
	Run     bool              `json:"added_in_run,omitempty"`
}

// runSubGoalEntries are the run's added sub-goals, by name, read fresh.
func (ss *session) runSubGoalEntries(ctx context.Context) []subGoalEntry {
	p, err := ss.w.goals.refresh(ctx, ss.w, ss.b.Run, ss.e)
	if err != nil {
		// The listing falls back to what is cached; the ledger is asked again next time.
		ss.w.log.Warn("reading the run's sub-goals", "err", err)
		p = ss.prover()
	}
	gs := p.RunSubGoals()
	sort.Slice(gs, func(i, j int) bool { return gs[i].Name < gs[j].Name })
	out := make([]subGoalEntry, len(gs))
	for i, g := range gs {
		out[i] = subGoalEntry{Name: g.Name, What: g.What, Judged: g.Judged, Params: g.Params, Run: true}
	}
	return out
}
