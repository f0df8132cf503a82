package prove

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// staticOutcome checks, without a database, what the outcome gate will
// rely on: an ask names its missing step, the rules a scenario names exist
// and bring their checks, and every sub-goal says truly whether it is judged.
func (p *Prover) staticOutcome(sc *scenario.Scenario) []Refusal {
	var rs []Refusal
	bad := func(code Code, sub, format string, a ...any) {
		rs = append(rs, Refusal{Gate: GateStatic, Code: code, Message: fmt.Sprintf(format, a...), SubGoal: sub})
	}
	switch {
	case sc.Expects == scenario.OutcomeAsk && len(sc.Missing) == 0:
		bad(CodeMissingRequired, "", "expects ask: name the step the agent must ask for in missing (the calls that, once they succeed, let the tempting calls through)")
	case sc.Expects != scenario.OutcomeAsk && len(sc.Missing) > 0:
		bad(CodeMissingRequired, "", "missing is the step an ask waits for; a scenario that expects %s has none", sc.Expects)
	}
	for i, c := range sc.Missing {
		if t := p.c.Tool(c.Tool); t != nil && t.ChangesState != nil && *t.ChangesState {
			bad(CodeMissingRequired, "", "missing step %d calls %s, which changes state: what an ask waits for is something the caller gives and the agent looks up, not a change", i+1, c.Tool)
		}
	}
	for _, ref := range sc.SubGoals {
		_, judged, ok := p.subGoalParams(ref.Name)
		switch {
		case !ok:
		case judged && !ref.Judged:
			bad(CodeJudgedMismatch, ref.Name, "sub-goal %s is judged (graded later by a model, never proved): mark it \"judged\": true", ref.Name)
		case !judged && ref.Judged:
			bad(CodeJudgedMismatch, ref.Name, "sub-goal %s is settled by code; it cannot be marked judged", ref.Name)
		case judged && !JudgedAbout(p.c.SubGoal(ref.Name), sc):
			bad(CodeJudgedUnrelated, ref.Name, "sub-goal %s is about calls of %s, and this request makes none nor is tempted to: graded here, it would fail an agent that did right", ref.Name, strings.Join(p.c.SubGoal(ref.Name).Tools, ", "))
		}
	}
	named := map[string]bool{}
	seen := map[string]int{}
	for i, ref := range sc.SubGoals {
		named[ref.Name] = true
		key := ref.Name + "\x00" + js(ref.Params)
		if j, ok := seen[key]; ok {
			bad(CodeDuplicateSubGoal, ref.Name, "sub-goals %d and %d are both %s with the same params: a check named twice asserts once, so the tests line promises more than the checks hold", j+1, i+1, ref.Name)
		}
		seen[key] = i
	}
	rs = append(rs, p.offUseCase(sc)...)
	rs = append(rs, badRefs(sc)...)
	for _, id := range sc.Rules {
		r := p.rule(id)
		switch {
		case r == nil:
			var ids []string
			for _, r := range p.c.Rules {
				ids = append(ids, r.ID)
			}
			bad(CodeUnknownRule, "", "rule %q is not a rule of the contract (%s)", id, strings.Join(ids, ", "))
		case r.Check != "" && !named[r.Check]:
			bad(CodeRuleCheckMissing, r.Check, "rule %s is checked by sub-goal %s: a scenario that names the rule lists that sub-goal with the case's params", id, r.Check)
		case r.Check != "" && p.c.Caller != nil:
			// A rule's check about the caller is about this scenario's
			// caller, or it could forbid anything.
			key := p.c.Caller.Key
			for _, ref := range sc.SubGoals {
				if v, ok := ref.Params[key]; ok && ref.Name == r.Check && ground.Text(v) != ground.Text(sc.CallerID) {
					bad(CodeBadParams, ref.Name, "sub-goal %s checks rule %s for %s %v, but the scenario's caller_id is %v", ref.Name, id, key, v, sc.CallerID)
				}
			}
		}
	}
	return rs
}

var printer = message.NewPrinter(language.English)

// argsInvalid says how a call's arguments break the tool's params schema
// ("" when they fit): a call the world would refuse for its arguments
// proves nothing about the case.
func (p *Prover) argsInvalid(c scenario.Call) string {
	if hasRef(c.Args) {
		// A "$N.field" argument is only known once played.
		return ""
	}
	return p.argsBreakSchema(c.Tool, c.Args)
}

// argsBreakSchema says how arguments (resolved, when played) break the
// tool's params schema ("" when they fit): the world refuses such a call
// before its handler runs, for its arguments alone.
func (p *Prover) argsBreakSchema(tool string, args map[string]any) string {
	s := p.params[tool]
	if s == nil {
		return ""
	}
	var v any = map[string]any{}
	if args != nil {
		v = jsonValue(args)
	}
	err := s.Validate(v)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msgs = append(msgs, fmt.Sprintf("at '/%s': %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(msgs)
	return strings.Join(slices.Compact(msgs), "; ")
}

func hasRef(v any) bool {
	switch x := v.(type) {
	case string:
		return refPattern.MatchString(x)
	case map[string]any:
		for _, e := range x {
			if hasRef(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasRef(e) {
				return true
			}
		}
	}
	return false
}

// jsonValue turns decoded scenario values into what a JSON Schema validator
// expects: numbers as float64.
func jsonValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return v
}

// offUseCase refuses an act, or a solution call that changes state, of a tool
// the scenario's use case does not list (when it lists its tools): a
// cancel-order case grounded on the refusal of a return says nothing about
// cancelling.
func (p *Prover) offUseCase(sc *scenario.Scenario) []Refusal {
	u := p.c.UseCase(sc.UseCase)
	if u == nil || len(u.Tools) == 0 {
		return nil
	}
	// An outbound use case's tools for a missed call and a call-back are its
	// own too: logging the attempt is what an unanswered call settles.
	tools := slices.Clone(u.Tools)
	for _, t := range []string{u.MissedCall, u.CallLater} {
		if t != "" && !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	var rs []Refusal
	off := func(what, tool string) {
		rs = append(rs, Refusal{Gate: GateStatic, Code: CodeActOffUseCase, Message: fmt.Sprintf("%s calls %s, which use case %s does not list (%s): the case would be proved by a tool it is not about", what, tool, sc.UseCase, strings.Join(tools, ", "))})
	}
	// An escalation in a use case that hands over (it lists a tool that ends
	// the conversation) may press for an act of any use case: handing over
	// what the desk cannot do is the case.
	handoff := false
	for _, name := range tools {
		if t := p.c.Tool(name); t != nil && t.EndsConversation {
			handoff = true
		}
	}
	if n := len(sc.Tempting); n > 0 && p.c.Tool(sc.Tempting[n-1].Tool) != nil && !slices.Contains(tools, sc.Tempting[n-1].Tool) &&
		!(sc.Expects == scenario.OutcomeEscalate && handoff) {
		off("the act (the last tempting call)", sc.Tempting[n-1].Tool)
	}
	for i, c := range sc.Solution {
		t := p.c.Tool(c.Tool)
		if t == nil || t.ChangesState == nil || !*t.ChangesState || slices.Contains(tools, c.Tool) {
			continue
		}
		if t.EndsConversation && sc.Expects == scenario.OutcomeEscalate && i == len(sc.Solution)-1 {
			continue // the hand-off an escalation ends with: what it records is the handing over
		}
		off(fmt.Sprintf("solution step %d, which changes state,", i+1), c.Tool)
	}
	return rs
}

// badRefs refuses a "$N.field" argument whose N is not an earlier step of
// its own list (solution, tempting or missing): it would reach the world as
// the literal text, and whatever the world made of that would be proved.
func badRefs(sc *scenario.Scenario) []Refusal {
	var rs []Refusal
	for _, part := range []struct {
		name  string
		calls []scenario.Call
	}{{"solution", sc.Solution}, {"tempting", sc.Tempting}, {"missing", sc.Missing}} {
		for i, c := range part.calls {
			var walk func(v any)
			walk = func(v any) {
				switch x := v.(type) {
				case string:
					m := refPattern.FindStringSubmatch(x)
					if m == nil {
						return
					}
					if n, err := strconv.Atoi(m[1]); err != nil || n < 1 || n > i {
						rs = append(rs, Refusal{Gate: GateStatic, Code: CodeBadRef, Message: fmt.Sprintf("%s step %d (%s) refers to %q, but only steps 1..%d of %s come before it", part.name, i+1, c.Tool, x, i, part.name)})
					}
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
			walk(map[string]any(c.Args))
		}
	}
	return rs
}

// JudgedAbout reports whether a judged sub-goal is about a request: one that
// names its tools is about a request whose solution or wrong move calls one
// of them; one that names none (or a built-in, not in the catalogue) is
// about every request. The writer lists it, and the gate keeps it, only
// there.
func JudgedAbout(sg *contract.SubGoal, sc *scenario.Scenario) bool {
	if sg == nil || len(sg.Tools) == 0 {
		return true
	}
	for _, calls := range [][]scenario.Call{sc.Solution, sc.Tempting} {
		for _, c := range calls {
			if slices.Contains(sg.Tools, c.Tool) {
				return true
			}
		}
	}
	return false
}
