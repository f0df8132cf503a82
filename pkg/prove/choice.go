package prove

import (
	"context"
	"fmt"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// A case is about what the caller asks for. When an argument of the act
// holds a value the caller is never handed (instruction, opening) and the
// case offers others (another of their payment methods, another enum value,
// another variant an answer lists), the scenario must hold whichever a right
// agent picks:
//
//   - a refusal or an escalation: the world refuses, or a named rule
//     forbids, the act with every such value (tempting.go plays the world's
//     refusals; ruleChoice the rule's);
//   - a success: with any value the world carries out and no rule forbids,
//     the checks still hold (successChoice); otherwise they demand a choice
//     the caller cannot make, and a right agent fails them. And where the
//     act's enum argument could take another value as well, the caller
//     picks the reference's: else it is a choice nobody made.

// maxChoiceRuns bounds the other values a proof plays on copies of their own.
const maxChoiceRuns = 6

// blamedRule is the first rule the scenario names whose check fails on run
// and over the look-ups and the act alone, and holds over the look-ups
// ("" when none): the rule the act itself breaks.
func (pr *proof) blamedRule(run *Run) (string, string) {
	if run == nil {
		return "", ""
	}
	for _, id := range pr.sc.Rules {
		rule := pr.p.rule(id)
		if rule == nil || rule.Check == "" {
			continue
		}
		if a, ok := pr.act.alone[rule.Check]; ok && (a.Held || a.Broken) {
			continue
		}
		if b, ok := pr.act.base[rule.Check]; ok && !b.Held {
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

// ruleChoice plays, for a refusal or an escalation the world would carry out
// but a named rule forbids, the act with each other value of an unstated
// argument, and notes one that goes through with no named rule failing.
func (pr *proof) ruleChoice(ctx context.Context, lookups []scenario.Call) error {
	sc := pr.sc
	if sc.Expects != scenario.OutcomeRefuse && sc.Expects != scenario.OutcomeEscalate || len(pr.tempted) == 0 {
		return nil
	}
	last := len(pr.tempted) - 1
	act := pr.tempted[last]
	if !act.OK {
		return nil
	}
	if rule, _ := pr.blamedRule(pr.tempting); rule == "" {
		return nil
	}
	rules := pr.ruleRefs()
	setup := pr.setup(ctx)
	for i, alt := range pr.alternatives(act, pr.tempted[:last]) {
		if i >= maxChoiceRuns {
			break
		}
		done := false
		err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, before *world.Before) error {
			done = false
			path := playSegments(ctx, cp, segment{lookups, true}, segment{calls: sc.Tempting[:len(sc.Tempting)-1]})
			r := cp.Call(ctx, act.Tool, alt.args)
			if r.Crash && infrastructure(r.Err) {
				return r.Err
			}
			if !r.OK {
				return nil
			}
			view := cp.View(sc.CallerID, func() script.WorldView { return before.View() })
			res, err := pr.evalRefs(ctx, view, append(path[:len(lookups):len(lookups)], r), false, rules)
			if err != nil {
				return err
			}
			if pr.forbids(res) == "" {
				pr.choice = fmt.Sprintf("the world carries out %s, and the rules the scenario names forbid it with %s %s, a value the caller never asks for (instruction, opening), but not with %s %s", act.Tool, alt.name, js(act.Args[alt.name]), alt.name, js(alt.args[alt.name]))
				done = true
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
	return nil
}

// stateChanging reports a call that wrote rows or whose tool the contract
// says changes state.
func (p *Prover) stateChanging(r world.CallResult) bool {
	if r.Wrote {
		return true
	}
	t := p.c.Tool(r.Tool)
	return t != nil && t.ChangesState != nil && *t.ChangesState
}

// successChoice plays a success's solution with one unstated argument of a
// state-changing call, or of a look-up a check names by its tool, given
// another value the case offers, and notes one
// that the world carries out, that breaks no rule (named, or prohibited by
// the contract), and after which a check of the scenario fails; or, for a
// value the caller states that no call sends, an optional argument left
// out, or another enum value of a state-changing call, after which none
// does.
func (pr *proof) successChoice(ctx context.Context) error {
	sc := pr.sc
	isRule := pr.ruleIndexes()
	setup := pr.setup(ctx)
	// The acts first, then the look-ups a check names by tool (a search
	// whose arguments are the case's): each group has its own budget, so
	// many look-ups never crowd out the act.
	named := map[string]bool{}
	for _, g := range sc.SubGoals {
		if t, ok := g.Params["tool"].(string); ok {
			named[t] = true
		}
	}
	var acts, reads []int
	for i, r := range pr.results {
		switch {
		case pr.p.stateChanging(r):
			acts = append(acts, i)
		case r.OK && named[r.Tool]:
			reads = append(reads, i)
		}
	}
	for _, group := range [][]int{acts, reads} {
		if err := pr.successChoiceAt(ctx, setup, group, isRule); err != nil || pr.choice != "" {
			return err
		}
	}
	return nil
}

// successChoiceAt is successChoice over the solution steps at, within
// maxChoiceRuns runs.
func (pr *proof) successChoiceAt(ctx context.Context, setup func(*world.Copy) error, at []int, isRule map[int]bool) error {
	sc := pr.sc
	runs := 0
	for _, i := range at {
		r := pr.results[i]
		// An unstated optional argument left out comes first: it is what an
		// agent that does only what was asked sends.
		var alts []alternative
		acts := pr.p.stateChanging(r)
		if acts {
			alts = pr.omissions(r)
		}
		for _, alt := range append(alts, pr.alternatives(r, pr.results[:i])...) {
			if runs >= maxChoiceRuns {
				return nil
			}
			runs++
			calls := pr.solutionCalls()
			calls[i].Args = alt.args
			v, err := pr.playVariant(ctx, setup, calls, isRule)
			if err != nil {
				return err
			}
			if !v.ran {
				continue // the world refuses it, or a rule forbids it: the choice is the rules'
			}
			failed, found := v.failed, ""
			switch {
			case failed != "":
				found = fmt.Sprintf("solution step %d (%s) takes %s %s, a value the caller is never handed (instruction, opening); with %s, %s, the world carries the solution out and no rule fails, yet %s: the checks demand a choice the caller cannot make, so a right agent would fail them", i+1, r.Tool, alt.name, js(r.Args[alt.name]), alt.with(), alt.from, failed)
			case alt.omitted:
				// The act needs it not and the caller never gives it:
				// the reference writes what nobody asked for, and an
				// export that replays it demands the same.
				found = fmt.Sprintf("solution step %d (%s) sends %s %s, which the caller never gives (instruction, opening) and the act does not need: with it left out the world carries the solution out, no rule fails and every check holds, so the reference does more than the caller asks", i+1, r.Tool, alt.name, js(r.Args[alt.name]))
			case alt.stated:
				// The checks let both pass, but the reference is what
				// an export replays and a reader trusts: it does less
				// than the caller asks.
				found = fmt.Sprintf("solution step %d (%s) takes %s %s, a value the caller is never handed (instruction, opening), where the caller states %s, which no call of the case sends; with it the world carries the solution out and no rule fails: the reference ignores what the caller asks", i+1, r.Tool, alt.name, js(r.Args[alt.name]), js(alt.args[alt.name]))
			case alt.enum && acts && (isYesNo(r.Args[alt.name]) || !pr.p.callerHolds(sc, ground.Text(r.Args[alt.name])) && !pr.heldByNamed(r, alt.name)):
				// Both values pass, and the caller picks neither (nor
				// points at a record of theirs that holds it: "the same
				// flights as my current reservation"; nor is it what the
				// record acted on holds already): the reference writes
				// a choice nobody made, which an export that replays it
				// demands.
				found = fmt.Sprintf("solution step %d (%s) takes %s %s, one of the values its schema offers, which the caller never picks (instruction, opening); with %s the world carries the solution out just as well, no rule fails and every check holds: the reference makes a choice the caller never made, so the caller must state it", i+1, r.Tool, alt.name, js(r.Args[alt.name]), alt.with())
			}
			if found != "" {
				pr.choice = found
				return nil
			}
		}
	}
	return nil
}

// heldByNamed reports whether a record another argument of call names (the
// reservation a change of flights is on), as the seed or the setup has it,
// holds the value of argument name: keeping what the record has is no
// choice, changing it would be one.
func (pr *proof) heldByNamed(call world.CallResult, name string) bool {
	return pr.p.heldByNamed(pr.sc, call.Tool, call.Args, name)
}

// heldByNamed is proof.heldByNamed for a call of tool with args.
func (p *Prover) heldByNamed(sc *scenario.Scenario, tool string, args map[string]any, name string) bool {
	v := ground.Text(args[name])
	return p.heldWhere(sc, v, func(table string, row map[string]any) bool {
		for _, n := range sortedArgs(args) {
			key, ok := scalarArg(args[n])
			t, col, ref := p.c.RefOf(tool, n)
			if n != name && ok && ref && t == table && ground.Text(row[col]) == key {
				return true
			}
		}
		return false
	})
}

// heldWhere reports whether a row of the seed or of the setup's inserts
// that pick accepts holds v in one of its columns.
func (p *Prover) heldWhere(sc *scenario.Scenario, v string, pick func(table string, row map[string]any) bool) bool {
	holds := func(table string, row map[string]any) bool {
		if !pick(table, row) {
			return false
		}
		vals := map[string]bool{}
		ground.AddValues(vals, row)
		return vals[v]
	}
	for _, r := range insertedRows(sc.Setup) {
		if holds(r.table, r.row) {
			return true
		}
	}
	for _, t := range p.c.Tables {
		for _, row := range p.g.Rows(t.Name) {
			if holds(t.Name, row) {
				return true
			}
		}
	}
	return false
}

// isYesNo reports whether v is a boolean: no record "holds" a yes or no the
// way it holds a code, so only the caller's words settle one.
func isYesNo(v any) bool {
	_, ok := v.(bool)
	return ok
}
