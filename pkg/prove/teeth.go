package prove

import (
	"fmt"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// teeth is the not-vacuous gate: the checks together tell the right
// behaviour from the wrong ones the prover played, and each check on its
// own fails under at least one of them.
//
//   - vacuous (succeed): every check still holds when the agent does nothing;
//   - tempting-passes: every check still holds after the tempting path;
//   - effect-unchecked (succeed, the solution changed the world): every check
//     holds over the untouched world given the solution's call log, so only
//     the log (called, not_called) speaks for the act, never its effect;
//   - vacuous-check: a check holds under nothing, the tempting path, the
//     solution without its preconditions and the path with the missing step,
//     whichever of them were played;
//   - check-off-act (succeed): a check that sees the act looks at another
//     value than the act sends (offAct).
func (pr *proof) teeth() []Refusal {
	sc := pr.sc
	var rs []Refusal
	played := []*Run{pr.nothing, pr.tempting, pr.without, pr.with}
	for _, run := range played {
		if run == nil {
			continue
		}
		for _, c := range run.Checks {
			if c.Broken {
				rs = append(rs, Refusal{Gate: GateNotVacuous, Code: CodeCheckBroken, Message: fmt.Sprintf("on the %s path: %s", run.Counterfactual, c.Why), SubGoal: c.Name})
			}
		}
	}
	if len(rs) > 0 {
		return dedupe(rs)
	}
	if sc.Expects == scenario.OutcomeSucceed && allHeld(pr.nothing) {
		rs = append(rs, Refusal{Gate: GateNotVacuous, Code: CodeVacuous, Message: "every check still holds when the agent does nothing: add a check that the solution's effect happened"})
	}
	if sc.Expects == scenario.OutcomeSucceed && !allHeld(pr.nothing) && pr.tableOnly(pr.nothing) {
		// "Some row of cards changed" holds for a freeze, an unfreeze or a
		// limit change alike: what sees the act must name what it does.
		rs = append(rs, Refusal{Gate: GateNotVacuous, Code: CodeTableOnly, Message: "the only checks that fail when the agent does nothing are row_written, or called naming none of the records the act is on: an act of another kind, or on another record, that writes the same tables passes them; add a check of the act's record or its arguments (called with them, or the contract's check of the row)"})
	}
	if pr.tempting != nil && allHeld(pr.tempting) {
		rs = append(rs, Refusal{Gate: GateNotVacuous, Code: CodeTemptingPasses, Message: "every check still holds after the tempting calls: add a check that the wrong move fails"})
	}
	if pr.logOnly != nil && allHeld(pr.logOnly) && sc.Expects != scenario.OutcomeSucceed {
		rs = append(rs, Refusal{Gate: GateNotVacuous, Code: CodeMissedCallUnchecked, Message: fmt.Sprintf("the solution logs the missed call (it changes %s), yet every check holds on the world as it was before, given the same call log: check in the world what the contract logs for a missed call", strings.Join(pr.effect, ", "))})
	} else if pr.logOnly != nil && allHeld(pr.logOnly) {
		rs = append(rs, Refusal{Gate: GateNotVacuous, Code: CodeEffectUnseen, Message: fmt.Sprintf("the solution changes %s, yet every check holds on the world as it was before, given the same call log: a call-log check (called, not_called) cannot stand in for a check of the state the act leaves", strings.Join(pr.effect, ", "))})
	}
	for _, c := range pr.checks {
		failsSomewhere := false
		var where []string
		for _, run := range played {
			if run == nil {
				continue
			}
			where = append(where, string(run.Counterfactual))
			for _, r := range run.Checks {
				if r.Index == c.index && !r.Held {
					failsSomewhere = true
				}
			}
		}
		if !failsSomewhere {
			rs = append(rs, Refusal{Gate: GateNotVacuous, Code: CodeVacuousCheck, Message: fmt.Sprintf("sub-goal %s holds on every path the prover played (%s): it tells nothing apart; drop it or make it check what the case is about", c.ref.Name, strings.Join(where, ", ")), SubGoal: c.ref.Name})
		}
	}
	if msg := pr.offAct(); msg != "" {
		rs = append(rs, Refusal{Gate: GateNotVacuous, Code: CodeCheckOffAct, Message: msg})
	}
	if pr.unchecked != nil {
		rs = append(rs, *pr.unchecked)
	}
	if pr.narrow != nil {
		rs = append(rs, *pr.narrow)
	}
	return rs
}

// tableOnly reports whether every check that fails on run is row_written.
func (pr *proof) tableOnly(run *Run) bool {
	if run == nil {
		return false
	}
	for _, c := range run.Checks {
		if !c.Held && c.Name != RowWritten && !pr.anyRecordCalled(c.Index) {
			return false
		}
	}
	return true
}

// anyRecordCalled reports whether sub-goal i is a called check with args
// that name none of the records its tool acts on (a caller's record other
// than the caller: the caller's own id says whose, not which). Beside
// row_written it sees no more of the act: called(file_claim,
// {amount_claimed}) holds for that claim on any parcel, which the world
// lets through whenever the caller has another parcel a claim is taken on.
func (pr *proof) anyRecordCalled(i int) bool {
	if i < 0 || i >= len(pr.sc.SubGoals) || pr.sc.SubGoals[i].Name != "called" {
		return false
	}
	ref := pr.sc.SubGoals[i]
	tool, _ := ref.Params["tool"].(string)
	args, _ := ref.Params["args"].(map[string]any)
	t := pr.p.c.Tool(tool)
	if t == nil || len(args) == 0 {
		return false
	}
	recs := 0
	for _, ra := range pr.recordArgs(t) {
		if !slices.Contains(t.Required(), ra[0]) {
			continue
		}
		if _, named := args[ra[0]]; named {
			return false
		}
		recs++
	}
	return recs > 0
}

func allHeld(run *Run) bool {
	if run == nil {
		return false
	}
	for _, c := range run.Checks {
		if !c.Held {
			return false
		}
	}
	return true
}

// rule returns the contract rule of that id, or nil.
func (p *Prover) rule(id string) *contract.Rule { return p.c.Rule(id) }

// offAct names an effect check of a success (one that fails when nothing is
// done: it sees the act) with a param named like an argument of the
// solution's state-changing calls whose value none of them sends: the check
// looks at other items, another amount, another card than the act took, so
// an agent that does something else than asked can pass it ("" when none).
// Checks that hold when nothing is done (a record left alone) are about
// what is not done, and may name other records.
func (pr *proof) offAct() string {
	if pr.sc.Expects != scenario.OutcomeSucceed || pr.nothing == nil {
		return ""
	}
	sent := map[string][]string{} // argument -> each value an act sends, as JSON
	for _, r := range pr.results {
		if !r.OK || !pr.p.stateChanging(r) {
			continue
		}
		for name, v := range r.Args {
			sent[name] = append(sent[name], canonical(v))
		}
	}
	effect := map[int]bool{}
	for _, c := range pr.nothing.Checks {
		if !c.Held && !c.Broken {
			effect[c.Index] = true
		}
	}
	for _, c := range pr.checks {
		if !effect[c.index] {
			continue
		}
		for _, name := range sortedArgs(c.ref.Params) {
			v := c.ref.Params[name]
			if s, ok := v.(string); ok && refPattern.MatchString(s) {
				continue
			}
			if vals, ok := sent[name]; ok && !slices.Contains(vals, canonical(v)) {
				return fmt.Sprintf("sub-goal %s checks %s %s, but the solution's acts send %s %s: the check looks at something else than what the act does, so an agent that does otherwise than asked can pass it", c.ref.Name, name, js(v), name, strings.Join(vals, " or "))
			}
		}
	}
	return ""
}

// canonical is a value as JSON, numbers as numbers (2 and 2.0 alike) and a
// list of scalars in sorted order.
func canonical(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canonical(e)
		}
		slices.Sort(parts)
		return "[" + strings.Join(parts, ",") + "]"
	case string:
		if isNumber(x) {
			return ground.Text(x)
		}
		return js(x)
	case map[string]any:
		return js(x)
	case nil:
		return "null"
	default:
		return ground.Text(x)
	}
}
