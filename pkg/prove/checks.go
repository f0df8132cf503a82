package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// BuiltinSubGoal is a check every contract's catalogue has, settled in Go over
// the call log; or, Judged, one graded later by a model (OutboundBuiltins).
type BuiltinSubGoal struct {
	Name   string            `json:"name"`
	What   string            `json:"what"`
	Params map[string]string `json:"params"`
	Judged bool              `json:"judged,omitempty"`
}

// Builtins are the built-in sub-goals.
var Builtins = []BuiltinSubGoal{
	{Name: "called", What: "The agent called params.tool with (at least) params.args and the world answered ok", Params: map[string]string{"tool": "string", "args": "dict"}},
	{Name: "not_called", What: "The agent never attempted params.tool with (at least) params.args, whatever the world answered", Params: map[string]string{"tool": "string", "args": "dict"}},
	{Name: "requires_kept", What: "Every call the world answered ok came after the calls its tool requires (with the same arguments where the contract says so)", Params: map[string]string{}},
	{Name: RowWritten, What: "The conversation left at least one of the world's params.tables otherwise than it found it (a row added, changed or removed)", Params: map[string]string{"tables": "list"}},
}

// RowWritten is the built-in that reads the world, not the call log: the
// effect of an act on a table, for a contract whose own checks read only
// what was called (or rows the seed already has).
const RowWritten = "row_written"

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
		// The judged built-ins of outbound calls, where the contract places
		// calls and has no sub-goal of its own of that name.
		if b := outboundBuiltin(name); b != nil && hasOutbound(p.c) {
			return b.Params, true, true
		}
		return nil, false, false
	}
	return sg.Params, sg.Judged, true
}

// checkRef is a code-settled sub-goal of a scenario, with its place in
// sub_goals (a sub-goal may be named twice with other params).
type checkRef struct {
	index int
	ref   scenario.SubGoalRef
}

// settledChecks are the sub-goals proofs run (judged ones are graded later).
func (p *Prover) settledChecks(sc *scenario.Scenario) []checkRef {
	var out []checkRef
	for i, ref := range sc.SubGoals {
		if _, judged, ok := p.subGoalParams(ref.Name); ok && !judged {
			out = append(out, checkRef{i, ref})
		}
	}
	return out
}

// evalChecks runs every settled check against a view after calls. A check
// that raises is broken, unless the database failed under it: that is an
// error of the infrastructure, not of the check. After a crashed call
// (afterCrash) the copy may be unusable for the contract's own reasons, so
// every failure is the check's.
func (pr *proof) evalChecks(ctx context.Context, view script.WorldView, results []world.CallResult, afterCrash bool) ([]CheckResult, error) {
	return pr.evalRefs(ctx, view, results, afterCrash, pr.checks)
}

// evalRefs is evalChecks of the given checks.
func (pr *proof) evalRefs(ctx context.Context, view script.WorldView, results []world.CallResult, afterCrash bool, refs []checkRef) ([]CheckResult, error) {
	calls := make([]script.Call, len(results))
	for i, r := range results {
		calls[i] = script.Call{Tool: r.Tool, Args: r.Args, OK: r.OK, Refused: r.Refused, Result: r.Result, Error: r.Error}
	}
	out := make([]CheckResult, 0, len(refs))
	for _, c := range refs {
		res := CheckResult{Index: c.index, Name: c.ref.Name}
		if c.ref.Name == RowWritten {
			why, err := pr.p.rowWritten(ctx, c.ref, view)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if !afterCrash && infrastructure(err) {
					return nil, err
				}
				res.Broken, res.Why = true, fmt.Sprintf("sub-goal %s is broken: %v", RowWritten, err)
			} else {
				res.Why, res.Held = why, why == ""
			}
			out = append(out, res)
			continue
		}
		if builtin(c.ref.Name) != nil {
			res.Why = pr.p.runBuiltin(c.ref, results)
			res.Held = res.Why == ""
			out = append(out, res)
			continue
		}
		held, why, err := pr.p.progs.Check(ctx, c.ref.Name, view, calls, c.ref.Params)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil && !afterCrash && infrastructure(err):
			return nil, err
		case err != nil:
			res.Broken = true
			res.Why = fmt.Sprintf("sub-goal %s is broken: %v", c.ref.Name, err)
		default:
			res.Held, res.Why = held, why
		}
		out = append(out, res)
	}
	return out, nil
}

// rowWritten settles row_written: for at least one of the tables, its
// rows, as one digest, differ between the world before the conversation and
// after it. Each must be a table of the contract's (never text spliced in
// otherwise).
func (p *Prover) rowWritten(ctx context.Context, ref scenario.SubGoalRef, view script.WorldView) (string, error) {
	list, _ := ref.Params["tables"].([]any)
	if len(list) == 0 {
		return "", fmt.Errorf("params.tables names no table")
	}
	before := view.Before()
	if before == nil {
		return "", fmt.Errorf("no view of the world before the conversation")
	}
	var names []string
	for _, v := range list {
		table, _ := v.(string)
		if p.c.Table(table) == nil {
			return "", fmt.Errorf("%q is not a table of the world", v)
		}
		names = append(names, table)
		sql := "SELECT count(*)::text || ':' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') AS d FROM (" + ownValues(p.c.Table(table)) + ") t"
		digest := func(v script.WorldView) (string, error) {
			rows, err := v.Query(ctx, sql)
			if err != nil || len(rows) == 0 {
				return "", err
			}
			return fmt.Sprint(rows[0].Map()["d"]), nil
		}
		now, err := digest(view)
		if err != nil {
			return "", err
		}
		was, err := digest(before)
		if err != nil {
			return "", err
		}
		if now != was {
			return "", nil
		}
	}
	return fmt.Sprintf("the conversation left %s as it found it", strings.Join(names, ", ")), nil
}

// ownValues selects a table's rows without the columns a sequence fills
// (serial, identity). A sequence is not rolled back with a copy, and the
// copy the world before the conversation is read from has sequences of its
// own: a row the setup adds takes another key on each, so comparing keys
// would see a change where the conversation made none. A row added,
// removed or changed still shows in the count or in its other values.
func ownValues(t *contract.Table) string {
	var cols []string
	for _, c := range t.Columns {
		if c.Default != "identity" {
			cols = append(cols, pgx.Identifier{c.Name}.Sanitize())
		}
	}
	if len(cols) == 0 {
		cols = []string{"1"}
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + pgx.Identifier{t.Name}.Sanitize()
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
			if why := p.requiresMissing(results, i); why != "" {
				return why
			}
		}
		return ""
	}
	return "unknown built-in sub-goal"
}

// requiresMissing says which requirement of call i's tool no earlier ok call
// met ("" when all were met).
func (p *Prover) requiresMissing(results []world.CallResult, i int) string {
	r := results[i]
	t := p.c.Tool(r.Tool)
	if t == nil {
		return ""
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
			what := strings.Join(req.AnyOf, " or ")
			if len(req.Same) > 0 {
				what += " with the same " + strings.Join(req.Same, ", ")
			}
			return fmt.Sprintf("%s ran before %s had succeeded", r.Tool, what)
		}
	}
	return ""
}

func sameValue(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if string(x) == string(y) {
		return true
	}
	return ground.Text(a) == ground.Text(b) && ground.Text(a) != ""
}
