package prove

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

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
		}
	}
	named := map[string]bool{}
	for _, ref := range sc.SubGoals {
		named[ref.Name] = true
	}
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
	s := p.params[c.Tool]
	if s == nil || hasRef(c.Args) {
		// A "$N.field" argument is only known once played.
		return ""
	}
	var v any = map[string]any{}
	if c.Args != nil {
		v = jsonValue(c.Args)
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
