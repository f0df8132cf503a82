package prove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// Gates, in the order they run.
const (
	GateStatic    = "static"
	GateReady     = "ready"
	GateSolvable  = "solvable"
	GateGrounding = "grounding"
	GateVacuous   = "not-vacuous"
	GateSuite     = "suite"
)

// Refusal is one reason a scenario is not kept.
type Refusal struct {
	Gate    string `json:"gate"`
	Code    string `json:"code"`
	Message string `json:"message"`
	SubGoal string `json:"sub_goal,omitempty"`
}

func (r Refusal) String() string { return r.Gate + "/" + r.Code + ": " + r.Message }

// Verdict is the outcome of proving one scenario.
type Verdict struct {
	Kept     bool      `json:"kept"`
	Refusals []Refusal `json:"refusals,omitempty"`
	// Codes are the identifiers the scenario hands its caller (record keys it
	// minted or names): the suite gate keeps them unique across a run.
	Codes    []string      `json:"codes,omitempty"`
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
}

// New returns a prover.
func New(c *contract.Contract, w *world.World, progs *script.Programs) *Prover {
	p := &Prover{c: c, w: w, progs: progs, g: ground.New(c), seed: map[string]bool{}}
	for _, s := range c.Seeds {
		for _, r := range s.Rows {
			for _, v := range r {
				addValues(p.seed, v)
			}
		}
	}
	return p
}

func addValues(set map[string]bool, v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			addValues(set, e)
		}
	case []any:
		for _, e := range x {
			addValues(set, e)
		}
	case nil:
	default:
		set[ground.Text(x)] = true
	}
}

// Rehearse plays calls after setup on a throwaway copy and returns each
// call's result and, when asked, the state diff the calls made.
func (p *Prover) Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, diff bool) ([]world.CallResult, *world.StateDiff, error) {
	var results []world.CallResult
	var d *world.StateDiff
	err := p.w.Copy(ctx, func(cp *world.Copy) error {
		results = nil
		var before world.Snapshot
		if diff {
			// Setup and the state before the calls in one round trip.
			var err error
			if before, err = setupSnapshot(ctx, cp, setup); err != nil {
				return err
			}
		} else if err := applySetup(ctx, cp, setup); err != nil {
			return err
		}
		results = play(ctx, cp, calls)
		if diff {
			after, err := cp.Snapshot(ctx)
			if err != nil {
				return err
			}
			dd, err := world.DiffSnapshots(before, after)
			if err != nil {
				return err
			}
			d = &dd
		}
		return nil
	})
	return results, d, err
}

// SetupError is a setup statement the world would not run.
type SetupError struct {
	Index int
	Err   error
}

func (e *SetupError) Error() string { return fmt.Sprintf("setup statement %d: %v", e.Index+1, e.Err) }
func (e *SetupError) Unwrap() error { return e.Err }

var setupVerb = regexp.MustCompile(`(?is)^\s*(insert|update|delete)\b`)

// applySetup runs a scenario's setup in one round trip; a statement the world
// will not run comes back as a *SetupError.
func applySetup(ctx context.Context, cp *world.Copy, setup []scenario.Statement) error {
	if err := checkSetup(setup); err != nil {
		return err
	}
	return setupError(cp.ExecBatch(ctx, setup))
}

// setupSnapshot is applySetup followed by the copy's snapshot, in one batch.
func setupSnapshot(ctx context.Context, cp *world.Copy, setup []scenario.Statement) (world.Snapshot, error) {
	if err := checkSetup(setup); err != nil {
		return world.Snapshot{}, err
	}
	snap, err := cp.ExecBatchSnapshot(ctx, setup)
	return snap, setupError(err)
}

func checkSetup(setup []scenario.Statement) error {
	for i, st := range setup {
		if !setupVerb.MatchString(st.SQL) {
			return &SetupError{Index: i, Err: fmt.Errorf("only INSERT, UPDATE or DELETE statements may set up a scenario")}
		}
	}
	return nil
}

func setupError(err error) error {
	var se *world.StatementError
	if errors.As(err, &se) {
		return &SetupError{Index: se.Index, Err: se.Err}
	}
	return err
}

// refPattern is a reference to an earlier step's result: "$2.user_id".
var refPattern = regexp.MustCompile(`^\$(\d+)\.([A-Za-z0-9_.]+)$`)

// play runs calls in order, resolving references to earlier results.
func play(ctx context.Context, cp *world.Copy, calls []scenario.Call) []world.CallResult {
	out := make([]world.CallResult, 0, len(calls))
	for _, c := range calls {
		args := resolve(c.Args, out)
		out = append(out, cp.Call(ctx, c.Tool, args))
	}
	return out
}

func resolve(args map[string]any, done []world.CallResult) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = resolveValue(v, done)
	}
	return out
}

func resolveValue(v any, done []world.CallResult) any {
	switch x := v.(type) {
	case string:
		m := refPattern.FindStringSubmatch(x)
		if m == nil {
			return x
		}
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(done) {
			return x
		}
		var doc any
		if json.Unmarshal(done[n-1].Result, &doc) != nil {
			return x
		}
		for _, part := range strings.Split(m[2], ".") {
			obj, ok := doc.(map[string]any)
			if !ok {
				return x
			}
			doc = obj[part]
		}
		if f, ok := doc.(float64); ok && f == float64(int64(f)) {
			return int64(f)
		}
		return doc
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = resolveValue(e, done)
		}
		return out
	case map[string]any:
		return resolve(x, done)
	}
	return v
}

// Prove runs every gate on one scenario.
func (p *Prover) Prove(ctx context.Context, sc *scenario.Scenario) (v Verdict) {
	start := time.Now()
	defer func() { v.Duration = time.Since(start) }()
	if rs := p.static(sc); len(rs) > 0 {
		v.Refusals = rs
		return v
	}
	checks := p.settledChecks(sc)
	// Ready, solvable and grounding share one copy.
	var results []world.CallResult
	setup := func(cp *world.Copy) error { return applySetup(ctx, cp, sc.Setup) }
	// The "nothing" counterfactual of a success is the world right after
	// setup, which this copy is until the solution plays: its checks run here,
	// before the solution, instead of on a copy of their own (a setup and a
	// rollback saved per proof). Check queries run in savepoints that are
	// always rolled back, so the solution meets the same world. The result
	// counts only if every earlier gate passes, as before.
	var nothing struct {
		done  bool
		fails int
		rs    []Refusal
		err   error
	}
	err := p.w.Pair(ctx, setup, func(cp *world.Copy, before *world.Before) error {
		v.Refusals = nil
		nothing.done = false
		if rs := p.ready(ctx, cp, sc); len(rs) > 0 {
			v.Refusals = rs
			return nil
		}
		if sc.Expects == "succeed" {
			nothing.done = true
			nothing.fails, nothing.rs, nothing.err = p.runCounterfactual(ctx, cp, before, sc, checks, nil)
		}
		results = play(ctx, cp, sc.Solution)
		for i, r := range results {
			switch {
			case r.Crash:
				v.Refusals = append(v.Refusals, Refusal{GateSolvable, "step-crashed", fmt.Sprintf("solution step %d (%s) crashed the world: %s", i+1, r.Tool, r.Error), ""})
			case !r.OK:
				v.Refusals = append(v.Refusals, Refusal{GateSolvable, "step-refused", fmt.Sprintf("solution step %d (%s) was refused: %s", i+1, r.Tool, r.Error), ""})
			}
		}
		if len(v.Refusals) > 0 {
			return nil
		}
		failed, broken, err := p.runChecks(ctx, cp, before, sc, checks, results)
		if err != nil {
			return err
		}
		for _, b := range broken {
			v.Refusals = append(v.Refusals, Refusal{GateSolvable, "check-broken", b.why, b.name})
		}
		for _, f := range failed {
			v.Refusals = append(v.Refusals, Refusal{GateSolvable, "check-failed", fmt.Sprintf("sub-goal %s does not hold after the solution: %s", f.name, f.why), f.name})
		}
		return nil
	})
	var se *SetupError
	switch {
	case errors.As(err, &se):
		v.Refusals = []Refusal{{GateReady, "setup-failed", se.Error(), ""}}
		return v
	case err != nil:
		v.Refusals = append(v.Refusals, Refusal{GateSolvable, "world-error", err.Error(), ""})
		return v
	}
	if len(v.Refusals) > 0 {
		return v
	}
	if rs := p.grounding(sc, results); len(rs) > 0 {
		v.Refusals = rs
		return v
	}
	// Not vacuous: nothing (for succeed), then the tempting calls.
	if sc.Expects == "succeed" {
		fails, rs, err := nothing.fails, nothing.rs, nothing.err
		if !nothing.done {
			fails, rs, err = p.counterfactual(ctx, sc, checks, nil)
		}
		if err != nil {
			v.Refusals = append(v.Refusals, Refusal{GateVacuous, "world-error", err.Error(), ""})
			return v
		}
		v.Refusals = append(v.Refusals, rs...)
		if fails == 0 && len(rs) == 0 {
			v.Refusals = append(v.Refusals, Refusal{GateVacuous, "vacuous", "every check still holds when the agent does nothing: add a check that the solution's effect happened", ""})
		}
	}
	if len(sc.Tempting) > 0 && len(v.Refusals) == 0 {
		fails, rs, err := p.counterfactual(ctx, sc, checks, sc.Tempting)
		if err != nil {
			v.Refusals = append(v.Refusals, Refusal{GateVacuous, "world-error", err.Error(), ""})
			return v
		}
		v.Refusals = append(v.Refusals, rs...)
		if fails == 0 && len(rs) == 0 {
			v.Refusals = append(v.Refusals, Refusal{GateVacuous, "tempting-passes", "every check still holds after the tempting calls: add a check that the wrong move fails", ""})
		}
	}
	if len(v.Refusals) > 0 {
		return v
	}
	v.Kept = true
	v.Codes = p.codes(sc)
	return v
}

// counterfactual plays calls (nil: nothing) after setup and counts failing checks.
func (p *Prover) counterfactual(ctx context.Context, sc *scenario.Scenario, checks []scenario.SubGoalRef, calls []scenario.Call) (int, []Refusal, error) {
	fails := 0
	var rs []Refusal
	setup := func(cp *world.Copy) error { return applySetup(ctx, cp, sc.Setup) }
	err := p.w.Pair(ctx, setup, func(cp *world.Copy, before *world.Before) error {
		var err error
		fails, rs, err = p.runCounterfactual(ctx, cp, before, sc, checks, calls)
		return err
	})
	return fails, rs, err
}

// runCounterfactual plays calls on cp (set up already) and counts the checks
// that fail.
func (p *Prover) runCounterfactual(ctx context.Context, cp *world.Copy, before *world.Before, sc *scenario.Scenario, checks []scenario.SubGoalRef, calls []scenario.Call) (int, []Refusal, error) {
	results := play(ctx, cp, calls)
	failed, broken, err := p.runChecks(ctx, cp, before, sc, checks, results)
	if err != nil {
		return 0, nil, err
	}
	var rs []Refusal
	for _, b := range broken {
		rs = append(rs, Refusal{GateVacuous, "check-broken", b.why, b.name})
	}
	return len(failed), rs, nil
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
