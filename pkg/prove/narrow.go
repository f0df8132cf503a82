package prove

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// A refusal is of the act the caller presses for, whatever values the agent
// would fill in that the caller never gives: a claim filed is the wrong move
// on any incident date. A check that names such a value of the act
// (not_called with the tempting act's made-up date in its args) fails only
// for the scenario's own guess: an agent that presses the act with the value
// the caller would give when asked, or any other, passes it. So for each
// argument of the act whose value the caller never states (instruction,
// opening) and no answer on the path shows, and that a check's params name,
// the tempting path is played again with another value there; when every
// check that sees the act (fails on the tempting path, holds when nothing
// is done) then holds, nothing catches the act the caller asks for
// (narrow-check). Arguments that name a record are not varied: which record
// a refusal is about is record-named's to read.

// maxNarrowRuns bounds the other values a refusal's proof plays.
const maxNarrowRuns = 4

// narrowCheck sets pr.narrow (and pr.narrowRun) to the first unstated value
// of a refusal's act that the checks are pinned to.
func (pr *proof) narrowCheck(ctx context.Context, lookups []scenario.Call) error {
	sc := pr.sc
	if sc.Expects != scenario.OutcomeRefuse && sc.Expects != scenario.OutcomeEscalate {
		return nil
	}
	if pr.tempting == nil || pr.nothing == nil || len(pr.tempted) == 0 {
		return nil
	}
	// The checks that see the act: they fail on the tempting path and hold
	// when nothing is done (a hand-over's check fails on both, whatever the
	// act is filled with).
	heldOnNothing := map[int]bool{}
	for _, c := range pr.nothing.Checks {
		heldOnNothing[c.Index] = c.Held
	}
	catch := map[int]bool{}
	for _, c := range pr.tempting.Checks {
		if !c.Held && !c.Broken && heldOnNothing[c.Index] {
			catch[c.Index] = true
		}
	}
	if len(catch) == 0 {
		return nil // tempting-passes or vacuous-check says it
	}
	act := pr.tempted[len(pr.tempted)-1]
	t := pr.p.c.Tool(act.Tool)
	if t == nil {
		return nil
	}
	shown := map[string]bool{}
	for _, r := range pr.tempted[:len(pr.tempted)-1] {
		if r.OK {
			leaves(shown, r.Result)
		}
	}
	named := map[string]bool{}
	for _, c := range pr.checks {
		ground.AddValues(named, c.ref.Params)
	}
	setup := pr.setup(ctx)
	n := len(sc.Tempting)
	runs := 0
	for _, name := range slices.Sorted(maps.Keys(act.Args)) {
		v := act.Args[name]
		other, text := pr.narrowOther(act, name)
		if other == nil || !named[text] || shown[text] {
			continue
		}
		if _, isBool := v.(bool); !isBool && pr.stated(text) {
			continue
		}
		if runs >= maxNarrowRuns {
			return nil
		}
		runs++
		args := maps.Clone(act.Args)
		args[name] = other
		var res []CheckResult
		var played []world.CallResult
		err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, before *world.Before) error {
			played = append(playSegments(ctx, cp, segment{lookups, true}, segment{calls: sc.Tempting[:n-1]}), cp.Call(ctx, act.Tool, args))
			crashed := false
			for _, s := range played {
				if s.Crash && infrastructure(s.Err) {
					return s.Err
				}
				crashed = crashed || s.Crash
			}
			view := cp.View(sc.CallerID, func() script.WorldView { return before.View() })
			var err error
			res, err = pr.evalChecks(ctx, view, played, crashed)
			return err
		})
		if err != nil {
			return err
		}
		held := true
		for _, c := range res {
			held = held && (c.Held || !catch[c.Index]) && !c.Broken
		}
		if !held {
			continue
		}
		pr.narrow = &Refusal{Gate: GateNotVacuous, Code: CodeNarrowCheck, Arg: name,
			Message: fmt.Sprintf("the tempting act %s sends %s %s, a value the caller never gives (instruction, opening) and no answer on the path shows, and a check names it: with %s %s every check that fails on the tempting path and holds when nothing is done holds, so an agent that presses the act with the value the caller would give passes; check the act whatever it is filled with (not_called with the record's args only, or a rule's check)", act.Tool, name, js(v), name, js(other))}
		pr.narrowRun = &Run{Gate: GateNotVacuous, Counterfactual: NarrowValue, Calls: steps(played), Checks: res,
			Note: fmt.Sprintf("the act with %s %s in place of %s: every check holds", name, js(other), js(v))}
		return nil
	}
	return nil
}

// narrowOther is another value for argument name of the act and the sent
// value as text: another enum value, the other truth value, a neighbouring
// number, the next day, a code one character on, or other free text. None
// for an argument that names a record, a composite or an empty value.
func (pr *proof) narrowOther(act world.CallResult, name string) (any, string) {
	t := pr.p.c.Tool(act.Tool)
	v := act.Args[name]
	if table, _, ref := pr.p.c.RefOf(t.Name, name); ref && (pr.p.g.OwnedTable(table) || pr.p.c.Caller != nil && table == pr.p.c.Caller.Table) {
		return nil, ""
	}
	if b, ok := v.(bool); ok {
		return !b, ground.Text(b)
	}
	text, ok := scalarArg(v)
	if !ok {
		return nil, ""
	}
	if _, _, ref := pr.keyHolding(v); ref {
		return nil, ""
	}
	for _, e := range t.Enum(name) {
		if ground.Text(e) != text {
			return e, text
		}
	}
	if len(t.Enum(name)) > 0 {
		return nil, ""
	}
	_, isStr := v.(string)
	switch {
	case !isStr:
		if o := otherNumbers(v, t.Param(name)); len(o) > 0 {
			return retype(o[0], v), text
		}
	case isoDate.MatchString(text):
		if d, err := time.Parse(time.DateOnly, text); err == nil {
			return d.AddDate(0, 0, 1).Format(time.DateOnly), text
		}
	default:
		if c := codeNext(text, t.Param(name)); c != "" {
			return c, text
		}
		if _, has := t.Param(name)["pattern"]; !has {
			return text + " (as the caller puts it)", text
		}
	}
	return nil, ""
}

// NarrowValue is a refusal's tempting path with a value of the act the
// caller never gives replaced by another (narrowCheck).
const NarrowValue Counterfactual = "narrow-value"
