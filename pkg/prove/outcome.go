package prove

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/ground"
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
	if rs := pr.outcomeOf(); len(rs) > 0 {
		return rs
	}
	// Read last: a refusal the gates above ground is still about the
	// records the caller asks about (a more precise code, an unstated
	// choice of the record, comes first).
	if msg := pr.unnamedTempting(); msg != "" {
		return []Refusal{{Gate: GateOutcome, Code: CodeRecordNamed, Message: msg}}
	}
	return nil
}

// outcomeOf is outcome but for record-named.
func (pr *proof) outcomeOf() []Refusal {
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
	if sc.Expects != scenario.OutcomeSucceed && len(pr.tempted) > 0 {
		if msg := pr.unreachable(pr.tempted, pr.temptedActAt, len(pr.tempted), "tempting"); msg != "" {
			return bad(CodeUnreachableRecord, "%s", msg)
		}
	}
	if len(pr.unlocked) > 0 {
		from := pr.unlockedActAt - pr.nMissing
		if msg := pr.unreachable(pr.unlocked, from, pr.unlockedActAt, "missing"); msg != "" {
			return bad(CodeUnreachableRecord, "%s", msg)
		}
	}
	if sc.Expects != scenario.OutcomeSucceed && len(pr.unasked) > 0 {
		return pr.unasked
	}
	switch sc.Expects {
	case scenario.OutcomeSucceed:
		if pr.compared && len(pr.effect) == 0 {
			return bad(CodeNoEffect, "the solution changes state, yet its end state is the world as it was after setup: the act changes nothing (a value \"changed\" to what it already was)")
		}
		if pr.idle != "" {
			return bad(CodeNoEffect, "%s", pr.idle)
		}
		if len(pr.unasked) > 0 {
			return pr.unasked
		}
		if pr.unaskedVal != "" {
			return bad(CodeUnaskedValue, "%s", pr.unaskedVal)
		}
		if msg := pr.conditionUnmet(); msg != "" {
			return bad(CodeConditionUnmet, "%s", msg)
		}
		if pr.choice != "" {
			return bad(CodeUnstatedChoice, "%s", pr.choice)
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
		for i := pr.temptedActAt; i < len(pr.tempted)-1; i++ {
			if r := pr.tempted[i]; r.OK && pr.p.stateChanging(r) {
				return bad(CodeRefusalUngrounded, "tempting step %d (%s) changes the world before the act: %s meets a world the tempting path made, not the case's (the first call that changes state is the act)", i-pr.temptedActAt+1, r.Tool, act.Tool)
			}
		}
		if act.Refused {
			if pr.act.madeUp != "" {
				return bad(CodeUnreachableRecord, "%s", pr.act.madeUp)
			}
			if pr.act.absent != "" {
				return bad(CodeRefusalUngrounded, "the world refuses %s because it names %s, a record that does not exist: a refusal of what does not exist says nothing about the case", act.Tool, pr.act.absent)
			}
			if why := pr.p.argsBreakSchema(act.Tool, act.Args); why != "" {
				return bad(CodeRefusalUngrounded, "the world refuses %s for its arguments alone, as played (%s): a refusal of a malformed call says nothing about the case", act.Tool, why)
			}
			if pr.act.faithful != "" {
				return bad(CodeTemptingFaithful, "%s: the refusal rests on an argument nobody asked for; the tempting act is the caller's request carried out right", pr.act.faithful)
			}
			if pr.act.choice != "" {
				return bad(CodeUnstatedChoice, "%s: the refusal rests on a choice the case does not make; hand the caller the value they ask for", pr.act.choice)
			}
			pr.tempting.Note = fmt.Sprintf("the world refuses %s: %s", act.Tool, act.Error)
			return nil
		}
		missing := pr.p.requiresMissing(pr.tempted, len(pr.tempted)-1)
		rule, why := pr.blamedRule(pr.tempting)
		// The exception to both of the next: an outbound call answered by a
		// wrong person or a voicemail box, where nobody can be identified
		// and no precondition met; that is the case.
		nobody := sc.Outbound != nil && unanswered(sc.Outbound.AnsweredBy)
		switch {
		case rule != "" && missing != "" && !nobody:
			return bad(CodeRefusalUngrounded, "the world carries out %s, and rule %s fails only because the tempting path skips a precondition (%s): that is an ask, not a refusal", act.Tool, rule, missing)
		case rule != "" && !pr.identifiedBeforeAct() && !nobody:
			return bad(CodeRefusalUngrounded, "the world carries out %s, and rule %s fails on a path where the caller is never identified (%s): identified, they might be served; a rule grounds a refusal only on a path where the caller is who they say", act.Tool, rule, strings.Join(pr.p.c.Caller.From, " or "))
		case rule != "" && pr.choice != "":
			return bad(CodeUnstatedChoice, "%s: the refusal rests on a choice the case does not make; hand the caller the value they ask for", pr.choice)
		case rule != "" && pr.misplacedAsked(act) != "":
			// A rule that forbids the act whatever it sends does not make
			// another value the caller's request.
			return bad(CodeTemptingFaithful, "%s: a rule forbids the act either way, but the tempting act is the caller's request carried out right, with the values they ask for", pr.misplacedAsked(act))
		case rule != "":
			pr.tempting.Note = fmt.Sprintf("the world carries out %s, but rule %s forbids it: %s", act.Tool, rule, why)
			return nil
		}
		if r, _ := pr.ruleFails(pr.tempting); r != "" {
			return bad(CodeRefusalUngrounded, "the world carries out %s, and rule %s fails on the tempting path but not over the look-ups and the act alone: another call of the path breaks it, not the act", act.Tool, r)
		}
		return bad(CodeRefusalUngrounded, "the world carries out %s after the solution's look-ups (answered ok), and no rule the scenario names has a check that fails on that path: a %s needs the world to refuse the act, or a rule that forbids it", act.Tool, sc.Expects)
	case scenario.OutcomeAsk:
		act := pr.tempted[len(pr.tempted)-1]
		if act.Crash {
			return bad(CodeStepCrashed, "the tempting call %s crashed the world (a bug in the contract): %s", act.Tool, act.Error)
		}
		blocked := ""
		switch {
		case act.Refused && pr.act.absent == "" && pr.p.argsBreakSchema(act.Tool, act.Args) == "":
			blocked = "the world refuses it: " + act.Error
		case pr.p.requiresMissing(pr.tempted, len(pr.tempted)-1) != "":
			blocked = "its requires are unmet: " + pr.p.requiresMissing(pr.tempted, len(pr.tempted)-1)
		default:
			if rule, why := pr.blamedRule(pr.tempting); rule != "" {
				blocked = fmt.Sprintf("rule %s forbids it: %s", rule, why)
			}
		}
		if blocked == "" {
			return bad(CodeAskUnblocked, "%s goes through without the missing step (answered ok, its requires kept, no named rule's check failing): nothing is missing, so asking is not what the case needs", act.Tool)
		}
		if why := pr.answerable(); why != "" {
			return bad(CodeAskAnswerable, "%s", why)
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

// identifiedBeforeAct reports a tempting path on which a call that
// identifies the caller (the contract's caller.from) was answered ok before
// the act; true when the contract names no such tools.
func (pr *proof) identifiedBeforeAct() bool {
	cl := pr.p.c.Caller
	if cl == nil || len(cl.From) == 0 {
		return true
	}
	for _, r := range pr.tempted[:len(pr.tempted)-1] {
		if r.OK && slices.Contains(cl.From, r.Tool) {
			return true
		}
	}
	return false
}

// answerable says why an ask has nothing to ask ("" when it has): every
// value its missing calls take is handed to the caller (instruction,
// opening) or shown by the solution's answers, so the agent either has it
// already or gets it by asking, and the act then goes through; a right agent
// does not stop at the question.
func (pr *proof) answerable() string {
	if why := pr.canIdentify(); why != "" {
		return why
	}
	known := map[string]bool{}
	for _, r := range pr.results {
		if r.OK {
			leaves(known, r.Result)
		}
	}
	var have []string
	for _, c := range pr.sc.Missing {
		t := pr.p.c.Tool(c.Tool)
		vals := map[string]bool{}
		for n, v := range c.Args {
			if t != nil && t.LogOnlyParam(n) {
				continue
			}
			ground.AddValues(vals, v)
		}
		for _, v := range slices.Sorted(maps.Keys(vals)) {
			if v == "" {
				continue
			}
			if !known[v] && !pr.stated(v) {
				return ""
			}
			have = append(have, v)
		}
	}
	what := "the missing step takes no value the caller must give"
	if len(have) > 0 {
		what = fmt.Sprintf("every value the missing step takes (%s) is handed to the caller or shown by the solution's answers", strings.Join(have, ", "))
	}
	return what + ": asked, the caller answers and the act goes through, so the right end of the conversation is not a question; an ask's missing step needs something the caller cannot give"
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

// canIdentify says how the caller of an identity ask (every missing call
// identifies the caller) could identify themselves with what they are
// handed: a tool of caller.from whose required arguments are all columns of
// the caller's row, each value in the instruction or the opening. "" when
// none can.
func (pr *proof) canIdentify() string {
	cl := pr.p.c.Caller
	if cl == nil || len(cl.From) == 0 || len(pr.sc.Missing) == 0 {
		return ""
	}
	for _, c := range pr.sc.Missing {
		if !slices.Contains(cl.From, c.Tool) {
			return ""
		}
	}
	row := pr.callerRow()
	if row == nil {
		return ""
	}
	for _, name := range cl.From {
		t := pr.p.c.Tool(name)
		if t == nil || len(t.Required()) == 0 {
			continue
		}
		var vals []string
		for _, n := range t.Required() {
			v := ground.Text(row[n])
			if v == "" || !pr.stated(v) {
				vals = nil
				break
			}
			vals = append(vals, n+" "+v)
		}
		if len(vals) > 0 {
			return identifies(name, vals)
		}
	}
	return pr.identifiedBy
}

// holds reports whether one of args is v: one value of the caller's stands
// for one argument.
func holds(args map[string]any, v string) bool {
	for _, x := range args {
		if x == v {
			return true
		}
	}
	return false
}

// identifies says why an identity ask is answerable: tool identifies the
// caller with vals ("name value" each).
func identifies(tool string, vals []string) string {
	return fmt.Sprintf("the caller is handed what %s takes (%s): they can identify themselves, so the missing step is not what they lack and the right end of the conversation is not a question", tool, strings.Join(vals, ", "))
}

// maxIdentifyTries bounds the calls identifyAnotherWay plays.
const maxIdentifyTries = 24

// identifyAnotherWay finds, by playing it, a call of caller.from that
// identifies the caller of an identity ask from what they are handed, for
// tools whose arguments are not named like the caller's columns (a `dob`
// beside `date_of_birth`): each required argument takes a value of the
// caller's row that the caller is handed, and the call must answer ok with
// the caller's key. Only an ask's identity calls are tried; "" when none
// identifies.
func (pr *proof) identifyAnotherWay(ctx context.Context) (string, error) {
	cl := pr.p.c.Caller
	if cl == nil || len(cl.From) == 0 || len(pr.sc.Missing) == 0 || pr.sc.Expects != scenario.OutcomeAsk {
		return "", nil
	}
	for _, c := range pr.sc.Missing {
		if !slices.Contains(cl.From, c.Tool) {
			return "", nil
		}
	}
	row := pr.callerRow()
	id := ground.Text(pr.sc.CallerID)
	if row == nil || id == "" {
		return "", nil
	}
	// Every value of the row the caller is handed, and every date they say
	// (an agent writes "April 6th" as the date a tool takes), once.
	var said []string
	for _, col := range slices.Sorted(maps.Keys(row)) {
		if v := ground.Text(row[col]); v != "" && !slices.Contains(said, v) && pr.stated(v) {
			said = append(said, v)
		}
	}
	year := pr.p.c.Clock().Year()
	for _, v := range append(datesIn(pr.sc.Instruction, year), datesIn(pr.sc.Persona.Opening, year)...) {
		if !slices.Contains(said, v) {
			said = append(said, v)
		}
	}
	type try struct {
		tool string
		args map[string]any
	}
	var tries []try
	for _, name := range cl.From {
		t := pr.p.c.Tool(name)
		if t == nil || len(t.Required()) == 0 {
			continue
		}
		combos := []map[string]any{{}}
		for _, n := range t.Required() {
			cands := said
			if v, ok := row[n]; ok {
				// A column of the argument's own name is the value it takes.
				cands = nil
				if s := ground.Text(v); s != "" && pr.stated(s) {
					cands = []string{s}
				}
			}
			var next []map[string]any
			for _, args := range combos {
				for _, v := range cands {
					if len(next) < maxIdentifyTries && !holds(args, v) {
						a := maps.Clone(args)
						a[n] = v
						next = append(next, a)
					}
				}
			}
			combos = next
		}
		for _, args := range combos {
			if len(tries) < maxIdentifyTries {
				tries = append(tries, try{name, args})
			}
		}
	}
	if len(tries) == 0 {
		return "", nil
	}
	found := ""
	err := pr.p.w.Copy(ctx, func(cp *world.Copy) error {
		if err := pr.setup(ctx)(cp); err != nil {
			return err
		}
		for _, t := range tries {
			r := cp.Call(ctx, t.tool, t.args)
			if r.Crash && infrastructure(r.Err) {
				return r.Err
			}
			got := map[string]bool{}
			if r.OK {
				leaves(got, r.Result)
			}
			if got[id] {
				var vals []string
				for _, n := range slices.Sorted(maps.Keys(t.args)) {
					vals = append(vals, fmt.Sprintf("%s %v", n, t.args[n]))
				}
				found = identifies(t.tool, vals) + " (played, it answers with the caller's " + cl.Key + ")"
				return nil
			}
		}
		return nil
	})
	return found, err
}

// callerRow is the caller's row after setup: the one a plain insert of the
// setup adds, else the seed's.
func (pr *proof) callerRow() map[string]any {
	cl := pr.p.c.Caller
	id := ground.Text(pr.sc.CallerID)
	if rows, _ := plainRows(pr.sc.Setup); rows != nil {
		for _, r := range rows {
			if r.table == cl.Table && ground.Text(r.row[cl.Key]) == id {
				return r.row
			}
		}
	}
	return pr.p.g.Find(cl.Table, cl.Key, id)
}
