package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,119}$`)

// placeholders are values that betray invented data.
var placeholders = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(john|jane) doe\b`),
	regexp.MustCompile(`\b4242[ -]?4242[ -]?4242[ -]?4242\b`),
	regexp.MustCompile(`\b4111[ -]?1111[ -]?1111[ -]?1111\b`),
	regexp.MustCompile(`(?i)\blorem ipsum\b`),
	regexp.MustCompile(`(?i)\b(placeholder|todo|tbd|xxx+)\b`),
	regexp.MustCompile(`(?i)@(example|test)\.(com|org)\b`),
	regexp.MustCompile(`\b555-01\d\d\b`),
	regexp.MustCompile(`(?i)\b123 main st`),
}

func (p *Prover) static(sc *scenario.Scenario) []Refusal {
	var rs []Refusal
	bad := func(code Code, format string, a ...any) {
		rs = append(rs, Refusal{Gate: GateStatic, Code: code, Message: fmt.Sprintf(format, a...)})
	}
	if !namePattern.MatchString(sc.Name) {
		bad(CodeBadName, "name %q must be lower-case letters, digits and dashes", sc.Name)
	}
	for field, v := range map[string]string{"use_case": sc.UseCase, "branch": sc.Branch, "tests": sc.Tests, "instruction": sc.Instruction, "persona.name": sc.Persona.Name} {
		if strings.TrimSpace(v) == "" {
			bad(CodeMissingField, "%s is empty", field)
		}
	}
	if sc.UseCase != "" && p.c.UseCase(sc.UseCase) == nil {
		bad(CodeUnknownUseCase, "use case %q is not in the contract", sc.UseCase)
	}
	if !slices.Contains(scenario.Kinds, sc.Kind) {
		bad(CodeBadKind, "kind %q is not one of %v", sc.Kind, scenario.Kinds)
	}
	if !slices.Contains(scenario.Outcomes, sc.Expects) {
		bad(CodeBadExpects, "expects %q is not one of %v", sc.Expects, scenario.Outcomes)
	}
	if sc.MaxTurns <= 0 {
		bad(CodeMissingField, "max_turns must be positive")
	}
	if sc.Expects != scenario.OutcomeSucceed && sc.Expects != "" && len(sc.Tempting) == 0 {
		bad(CodeTemptingRequired, "expects %s: doing nothing is right, so tempting calls (the wrong move) are required as the counterfactual", sc.Expects)
	}
	if sc.Expects == scenario.OutcomeSucceed && len(sc.Solution) == 0 {
		bad(CodeEmptySolution, "expects succeed but the solution has no calls")
	}
	for _, part := range []struct {
		name  string
		calls []scenario.Call
	}{{"solution", sc.Solution}, {"tempting", sc.Tempting}, {"missing", sc.Missing}} {
		for i, c := range part.calls {
			t := p.c.Tool(c.Tool)
			if t == nil {
				bad(CodeUnknownTool, "%s step %d calls %q, which the contract does not have", part.name, i+1, c.Tool)
				continue
			}
			if !p.progs.HasHandler(c.Tool) {
				bad(CodeNoHandler, "%s step %d calls %q, which has no handler: it cannot run, so it cannot pass", part.name, i+1, c.Tool)
			}
			props, _ := t.Params["properties"].(map[string]any)
			for k := range c.Args {
				if _, ok := props[k]; !ok {
					bad(CodeBadArgs, "%s step %d: %s has no argument %q", part.name, i+1, c.Tool, k)
				}
			}
			for k := range ground.Required(t) {
				if _, ok := c.Args[k]; !ok {
					bad(CodeBadArgs, "%s step %d: %s needs argument %q", part.name, i+1, c.Tool, k)
				}
			}
			if msg := p.argsInvalid(c); msg != "" {
				bad(CodeBadArgs, "%s step %d: %s: %s", part.name, i+1, c.Tool, msg)
			}
		}
	}
	if msg := p.requiresUnmet(sc.Solution); msg != "" {
		bad(CodeRequiresUnmet, "%s", msg)
	}
	settled := 0
	if len(sc.SubGoals) == 0 {
		bad(CodeNoSubGoals, "a scenario needs at least one sub-goal")
	}
	for _, ref := range sc.SubGoals {
		declared, judged, ok := p.subGoalParams(ref.Name)
		if !ok {
			rs = append(rs, Refusal{GateStatic, CodeUnknownSubGoal, fmt.Sprintf("sub-goal %q is not in the catalogue (list_sub_goals shows it)", ref.Name), ref.Name})
			continue
		}
		if !judged {
			settled++
		}
		var missing, extra []string
		for name := range declared {
			if _, ok := ref.Params[name]; !ok {
				missing = append(missing, name)
			}
		}
		for name := range ref.Params {
			if _, ok := declared[name]; !ok {
				extra = append(extra, name)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		if len(missing) > 0 || len(extra) > 0 {
			rs = append(rs, Refusal{GateStatic, CodeBadParams, fmt.Sprintf("sub-goal %s: missing params %v, unknown params %v", ref.Name, missing, extra), ref.Name})
		}
	}
	if len(sc.SubGoals) > 0 && settled == 0 {
		bad(CodeNoSettledCheck, "every sub-goal is judged; at least one must be code-settled")
	}
	rs = append(rs, p.staticOutcome(sc)...)
	rs = append(rs, directives(sc)...)
	rs = append(rs, p.subGoalDirectives(sc)...)
	for _, s := range textOf(sc) {
		for _, re := range placeholders {
			if m := re.FindString(s); m != "" {
				bad(CodePlaceholder, "placeholder data %q: use values from the world", m)
			}
		}
	}
	return dedupe(rs)
}

func dedupe(rs []Refusal) []Refusal {
	seen := map[string]bool{}
	var out []Refusal
	for _, r := range rs {
		k := string(r.Code) + r.Message
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// textOf is every string a scenario says or sends.
func textOf(sc *scenario.Scenario) []string {
	out := []string{sc.Instruction, sc.Persona.Name, sc.Persona.Opening}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, st := range sc.Setup {
		for _, a := range st.Args {
			walk(a)
		}
	}
	for _, c := range append(append(append([]scenario.Call{}, sc.Solution...), sc.Tempting...), sc.Missing...) {
		walk(map[string]any(c.Args))
	}
	return out
}

// requiresUnmet checks a solution calls gated tools only after what they require.
func (p *Prover) requiresUnmet(calls []scenario.Call) string {
	for i, c := range calls {
		t := p.c.Tool(c.Tool)
		if t == nil {
			continue
		}
		for _, req := range t.Requires {
			met := false
			for j := 0; j < i && !met; j++ {
				if !slices.Contains(req.AnyOf, calls[j].Tool) {
					continue
				}
				same := true
				for _, a := range req.Same {
					if ground.Text(calls[j].Args[a]) != ground.Text(c.Args[a]) {
						same = false
					}
				}
				met = same
			}
			if !met {
				what := strings.Join(req.AnyOf, " or ")
				if len(req.Same) > 0 {
					what += " on the same " + strings.Join(req.Same, ", ")
				}
				return fmt.Sprintf("solution step %d calls %s before %s", i+1, c.Tool, what)
			}
		}
	}
	return ""
}

// ready runs after setup: the caller exists and every ready query holds. A
// query the database fails for its own reasons is an error, not a refusal.
func (p *Prover) ready(ctx context.Context, cp *world.Copy, sc *scenario.Scenario) ([]Refusal, error) {
	var rs []Refusal
	if cl := p.c.Caller; cl != nil && sc.CallerID != nil {
		rows, err := cp.Query(ctx, fmt.Sprintf("SELECT 1 FROM %s WHERE %s::text = $1", cl.Table, cl.Key), ground.Text(sc.CallerID))
		if err != nil && infrastructure(err) {
			return nil, err
		}
		if err != nil || len(rows) == 0 {
			rs = append(rs, Refusal{GateReady, CodeUnknownCaller, fmt.Sprintf("caller_id %v is not a %s.%s after setup", sc.CallerID, cl.Table, cl.Key), ""})
		}
	}
	for i, rc := range sc.Ready {
		if !selectOnly.MatchString(rc.SQL) {
			rs = append(rs, Refusal{GateReady, CodeBadReady, fmt.Sprintf("ready check %d must be a single SELECT", i+1), ""})
			continue
		}
		rows, err := cp.Query(ctx, rc.SQL, rc.Args...)
		if err != nil && infrastructure(err) {
			return nil, err
		}
		if err != nil {
			rs = append(rs, Refusal{GateReady, CodeBadReady, fmt.Sprintf("ready check %d: %v", i+1, err), ""})
			continue
		}
		if rc.Rows == nil {
			if len(rows) == 0 {
				rs = append(rs, Refusal{GateReady, CodeNotReady, fmt.Sprintf("ready check %d returned no row: %s", i+1, firstOf(rc.Why, rc.SQL)), ""})
			}
			continue
		}
		got := make([]map[string]any, len(rows))
		for j, r := range rows {
			got[j] = r.Map()
		}
		if !sameJSON(got, rc.Rows) {
			rs = append(rs, Refusal{GateReady, CodeNotReady, fmt.Sprintf("ready check %d returned %s, not %s", i+1, js(got), js(rc.Rows)), ""})
		}
	}
	return rs, nil
}

var selectOnly = regexp.MustCompile(`(?is)^\s*(select|with)\b[^;]*;?\s*$`)

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sameJSON compares as JSON values (numbers numerically).
func sameJSON(a, b any) bool {
	var x, y any
	_ = json.Unmarshal([]byte(js(a)), &x)
	_ = json.Unmarshal([]byte(js(b)), &y)
	return js(x) == js(y)
}

// grounding: codes and references handed to the caller exist in the seed,
// the setup or the solution's results. A word is code-like when it holds a
// digit or an @; it must appear whole among the known values or in a result.
func codeLike(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, ".,;:!?()[]{}\"'")
		if len(w) < 4 || !strings.ContainsAny(w, "0123456789@") {
			continue
		}
		out = append(out, w)
	}
	return out
}

func (p *Prover) grounding(sc *scenario.Scenario, results []world.CallResult) []Refusal {
	known := map[string]bool{}
	for _, st := range sc.Setup {
		for _, a := range st.Args {
			addValues(known, a)
		}
	}
	for _, c := range sc.Solution {
		addValues(known, map[string]any(c.Args))
	}
	resultText := ""
	for _, r := range results {
		resultText += string(r.Result) + "\n"
	}
	var rs []Refusal
	for _, s := range []string{sc.Instruction, sc.Persona.Opening} {
		for _, tok := range codeLike(s) {
			if known[tok] || p.seed[tok] || strings.Contains(resultText, tok) {
				continue
			}
			rs = append(rs, Refusal{GateGrounding, CodeUngrounded, fmt.Sprintf("the caller is handed %q, which exists nowhere in the world, the setup or the solution's results", tok), ""})
		}
	}
	for _, o := range sc.Outputs {
		if o == "" || !strings.Contains(resultText, o) {
			rs = append(rs, Refusal{GateGrounding, CodeOutputNotInResults, fmt.Sprintf("output %q appears in no result of the solution", o), ""})
		}
	}
	return dedupe(rs)
}
