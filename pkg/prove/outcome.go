package prove

import (
	"fmt"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// outcome proves the expected outcome from the world, the contract's
// requires and its rules' checks, never from the scenario's own checks:
// a writer cannot make a refusal right by adding not_called.
//
//   - succeed: the solution's end state differs from doing nothing wherever
//     it changed state (no-effect otherwise);
//   - refuse: the act (the last tempting call), played after the solution's
//     look-ups, is refused by the world, or a rule the scenario names has a
//     check that fails on that path while the act's requires are kept;
//   - escalate: the solution hands over (a tool that ends the conversation),
//     and the act is grounded as a refusal's is;
//   - ask: without the missing step the act is blocked (refused, its
//     requires unmet, or a named rule's check failing), and after it the act
//     goes through with its requires kept and every named rule's check holding.
func (pr *proof) outcome() []Refusal {
	sc := pr.sc
	bad := func(code Code, format string, a ...any) []Refusal {
		return []Refusal{{Gate: GateOutcome, Code: code, Message: fmt.Sprintf(format, a...)}}
	}
	if msg := pr.p.callerMismatch(sc, pr.tempted, "tempting path"); msg != "" {
		return bad(CodeCallerMismatch, "%s", msg)
	}
	if msg := pr.p.callerMismatch(sc, pr.unlocked, "with-precondition path"); msg != "" {
		return bad(CodeCallerMismatch, "%s", msg)
	}
	if rs := pr.calleeIdentified(); len(rs) > 0 {
		return rs
	}
	switch sc.Expects {
	case scenario.OutcomeSucceed:
		if pr.compared && len(pr.effect) == 0 {
			return bad(CodeNoEffect, "the solution changes state, yet its end state is the world as it was after setup: the act changes nothing (a value \"changed\" to what it already was)")
		}
		if pr.compared {
			pr.effectRun = &Run{Gate: GateOutcome, Counterfactual: Solution, Calls: pr.solution.Calls,
				Note: "the end state differs from nothing in " + strings.Join(pr.effect, ", ")}
		}
	case scenario.OutcomeRefuse, scenario.OutcomeEscalate:
		if sc.Expects == scenario.OutcomeEscalate && !pr.handsOver() {
			return bad(CodeNoHandoff, "expects escalate, but no solution step hands the conversation over (a tool that ends the conversation)")
		}
		act := pr.tempted[len(pr.tempted)-1]
		if act.Crash {
			return bad(CodeStepCrashed, "the tempting call %s crashed the world (a bug in the contract): %s", act.Tool, act.Error)
		}
		if act.Refused {
			if unknown := pr.unknownRecord(act); unknown != "" {
				return bad(CodeRefusalUngrounded, "the world refuses %s because it names %s, a record that exists nowhere in the world, the setup or the solution's results: a refusal of what does not exist says nothing about the case", act.Tool, unknown)
			}
			pr.tempting.Note = fmt.Sprintf("the world refuses %s: %s", act.Tool, act.Error)
			return nil
		}
		missing := pr.p.requiresMissing(pr.tempted, len(pr.tempted)-1)
		if rule, why := pr.ruleFails(pr.tempting); rule != "" && missing == "" {
			pr.tempting.Note = fmt.Sprintf("the world carries out %s, but rule %s forbids it: %s", act.Tool, rule, why)
			return nil
		} else if rule != "" {
			return bad(CodeRefusalUngrounded, "the world carries out %s, and rule %s fails only because the tempting path skips a precondition (%s): that is an ask, not a refusal", act.Tool, rule, missing)
		}
		return bad(CodeRefusalUngrounded, "the world carries out %s after the solution's look-ups (answered ok), and no rule the scenario names has a check that fails on that path: a %s needs the world to refuse the act, or a rule that forbids it", act.Tool, sc.Expects)
	case scenario.OutcomeAsk:
		act := pr.tempted[len(pr.tempted)-1]
		if act.Crash {
			return bad(CodeStepCrashed, "the tempting call %s crashed the world (a bug in the contract): %s", act.Tool, act.Error)
		}
		blocked := ""
		switch {
		case act.Refused:
			blocked = "the world refuses it: " + act.Error
		case pr.p.requiresMissing(pr.tempted, len(pr.tempted)-1) != "":
			blocked = "its requires are unmet: " + pr.p.requiresMissing(pr.tempted, len(pr.tempted)-1)
		default:
			if rule, why := pr.ruleFails(pr.tempting); rule != "" {
				blocked = fmt.Sprintf("rule %s forbids it: %s", rule, why)
			}
		}
		if blocked == "" {
			return bad(CodeAskUnblocked, "%s goes through without the missing step (answered ok, its requires kept, no named rule's check failing): nothing is missing, so asking is not what the case needs", act.Tool)
		}
		pr.tempting.Note = fmt.Sprintf("without the missing step %s is blocked: %s", act.Tool, blocked)
		for i := pr.unlockedActAt - pr.nMissing; i < pr.unlockedActAt; i++ {
			if r := pr.unlocked[i]; !r.OK {
				return bad(CodeAskStillRefused, "the missing step %s was not answered ok: %s", r.Tool, r.Error)
			}
		}
		act = pr.unlocked[len(pr.unlocked)-1]
		switch {
		case !act.OK:
			return bad(CodeAskStillRefused, "%s is still refused once the missing step has succeeded (%s): the answer is a refusal, not a question", act.Tool, act.Error)
		case pr.p.requiresMissing(pr.unlocked, len(pr.unlocked)-1) != "":
			return bad(CodeAskStillRefused, "after the missing step %s still lacks what it requires: %s", act.Tool, pr.p.requiresMissing(pr.unlocked, len(pr.unlocked)-1))
		}
		if rule, why := pr.ruleFails(pr.with); rule != "" {
			return bad(CodeAskStillRefused, "after the missing step rule %s still forbids %s: %s", rule, act.Tool, why)
		}
		pr.with.Note = fmt.Sprintf("once the missing step has succeeded %s goes through", act.Tool)
	}
	return nil
}

// unknownRecord is the first value of the act's record arguments (those
// naming a table's rows) that exists nowhere in the seed, the setup or the
// solution's calls and results ("" when all do).
func (pr *proof) unknownRecord(act world.CallResult) string {
	t := pr.p.c.Tool(act.Tool)
	if t == nil {
		return ""
	}
	known := map[string]bool{}
	for _, st := range pr.sc.Setup {
		for _, a := range st.Args {
			addValues(known, a)
		}
	}
	results := ""
	for _, r := range pr.results {
		addValues(known, map[string]any(r.Args))
		results += string(r.Result) + "\n"
	}
	names := make([]string, 0, len(act.Args))
	for n := range act.Args {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, _, ok := pr.p.c.RefOf(t.Name, n); !ok {
			continue
		}
		vals := map[string]bool{}
		addValues(vals, act.Args[n])
		for v := range vals {
			if v != "" && !known[v] && !pr.p.seed[v] && !strings.Contains(results, v) {
				return fmt.Sprintf("%s %q", n, v)
			}
		}
	}
	return ""
}

// handsOver reports a solution step whose tool ends the conversation.
func (pr *proof) handsOver() bool {
	for _, r := range pr.results {
		if t := pr.p.c.Tool(r.Tool); t != nil && t.EndsConversation && r.OK {
			return true
		}
	}
	return false
}

// ruleFails returns the first rule the scenario names whose check failed
// (not raised) on run, and why.
func (pr *proof) ruleFails(run *Run) (string, string) {
	if run == nil {
		return "", ""
	}
	for _, id := range pr.sc.Rules {
		rule := pr.p.rule(id)
		if rule == nil || rule.Check == "" {
			continue
		}
		for _, c := range run.Checks {
			if c.Name == rule.Check && !c.Held && !c.Broken {
				return id, c.Why
			}
		}
	}
	return "", ""
}
