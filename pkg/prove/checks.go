package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// BuiltinSubGoal is a check every contract's catalogue has, settled in Go over
// the call log.
type BuiltinSubGoal struct {
	Name   string            `json:"name"`
	What   string            `json:"what"`
	Params map[string]string `json:"params"`
}

// Builtins are the built-in sub-goals.
var Builtins = []BuiltinSubGoal{
	{"called", "The agent called params.tool with (at least) params.args and the world answered ok", map[string]string{"tool": "string", "args": "dict"}},
	{"not_called", "The agent never attempted params.tool with (at least) params.args, whatever the world answered", map[string]string{"tool": "string", "args": "dict"}},
	{"requires_kept", "Every call the world answered ok came after the calls its tool requires (with the same arguments where the contract says so)", map[string]string{}},
}

func builtin(name string) *BuiltinSubGoal {
	for i := range Builtins {
		if Builtins[i].Name == name {
			return &Builtins[i]
		}
	}
	return nil
}

// subGoalParams returns a sub-goal's declared parameters and whether it is judged.
func (p *Prover) subGoalParams(name string) (map[string]string, bool, bool) {
	if b := builtin(name); b != nil {
		return b.Params, false, true
	}
	sg := p.c.SubGoal(name)
	if sg == nil {
		sg = p.extra[name]
	}
	if sg == nil {
		return nil, false, false
	}
	return sg.Params, sg.Judged, true
}

// settledChecks are the sub-goals proofs run (judged ones are graded later).
func (p *Prover) settledChecks(sc *scenario.Scenario) []scenario.SubGoalRef {
	var out []scenario.SubGoalRef
	for _, ref := range sc.SubGoals {
		if _, judged, ok := p.subGoalParams(ref.Name); ok && !judged {
			out = append(out, ref)
		}
	}
	return out
}

type checkOutcome struct{ name, why string }

// runChecks runs checks against a copy's end state after calls; failed are
// checks that returned a reason, broken are checks that raised.
func (p *Prover) runChecks(ctx context.Context, cp *world.Copy, before *world.Before, sc *scenario.Scenario, checks []scenario.SubGoalRef, results []world.CallResult) (failed, broken []checkOutcome, err error) {
	calls := make([]script.Call, len(results))
	for i, r := range results {
		calls[i] = script.Call{Tool: r.Tool, Args: r.Args, OK: r.OK, Refused: r.Refused, Result: r.Result, Error: r.Error}
	}
	view := cp.View(sc.CallerID, func() script.WorldView { return before.View() })
	for _, ref := range checks {
		if b := builtin(ref.Name); b != nil {
			if why := p.runBuiltin(ref, results); why != "" {
				failed = append(failed, checkOutcome{ref.Name, why})
			}
			continue
		}
		held, why, cerr := p.progs.Check(ctx, ref.Name, view, calls, ref.Params)
		if cerr != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			broken = append(broken, checkOutcome{ref.Name, fmt.Sprintf("sub-goal %s is broken: %v", ref.Name, cerr)})
			continue
		}
		if !held {
			failed = append(failed, checkOutcome{ref.Name, why})
		}
	}
	return failed, broken, nil
}

func (p *Prover) runBuiltin(ref scenario.SubGoalRef, results []world.CallResult) string {
	tool, _ := ref.Params["tool"].(string)
	args, _ := ref.Params["args"].(map[string]any)
	matches := func(r world.CallResult) bool {
		if r.Tool != tool {
			return false
		}
		for k, v := range args {
			if !sameValue(r.Args[k], v) {
				return false
			}
		}
		return true
	}
	switch ref.Name {
	case "called":
		for _, r := range results {
			if r.OK && matches(r) {
				return ""
			}
		}
		return fmt.Sprintf("no successful call to %s with %s", tool, js(args))
	case "not_called":
		for _, r := range results {
			if matches(r) {
				return fmt.Sprintf("%s was attempted with %s", tool, js(r.Args))
			}
		}
		return ""
	case "requires_kept":
		for i, r := range results {
			if !r.OK {
				continue
			}
			t := p.c.Tool(r.Tool)
			if t == nil {
				continue
			}
			for _, req := range t.Requires {
				met := false
				for j := 0; j < i && !met; j++ {
					e := results[j]
					if !e.OK || !slices.Contains(req.AnyOf, e.Tool) {
						continue
					}
					same := true
					for _, a := range req.Same {
						same = same && sameValue(e.Args[a], r.Args[a])
					}
					met = same
				}
				if !met {
					return fmt.Sprintf("%s ran before %v had succeeded", r.Tool, req.AnyOf)
				}
			}
		}
		return ""
	}
	return "unknown built-in sub-goal"
}

func sameValue(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if string(x) == string(y) {
		return true
	}
	return ground.Text(a) == ground.Text(b) && ground.Text(a) != ""
}
