package prove

import (
	"context"
	"fmt"
	"slices"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// The reference solution is what a right agent does, whatever the scenario
// is about: it keeps every rule of the contract whose check can be read for
// the case, not only the rules the scenario names. A "success" that cancels
// another customer's order, on a contract whose rule forbids serving anyone
// but the caller, is not a success the scenario may claim.

// unlistedRules are the checks of the contract's rules that the scenario does
// not list among its sub-goals and whose params bind to the case: none, or
// only the caller's key (bound to caller_id). Index is -1: they are not the
// scenario's.
func (pr *proof) unlistedRules() []checkRef {
	listed := map[string]bool{}
	for _, g := range pr.sc.SubGoals {
		listed[g.Name] = true
	}
	var out []checkRef
	seen := map[string]bool{}
	for _, r := range pr.p.c.Rules {
		if r.Check == "" || listed[r.Check] || seen[r.Check] {
			continue
		}
		declared, judged, ok := pr.p.subGoalParams(r.Check)
		if !ok || judged {
			continue
		}
		params, ok := pr.bindToCase(declared)
		if !ok {
			continue
		}
		seen[r.Check] = true
		ref := checkRef{index: -1}
		ref.ref.Name, ref.ref.Params = r.Check, params
		out = append(out, ref)
	}
	return out
}

// bindToCase gives a check's declared params their values for the case, when
// it has none or only the caller's key.
func (pr *proof) bindToCase(declared map[string]string) (map[string]any, bool) {
	switch {
	case len(declared) == 0:
		return nil, true
	case len(declared) == 1 && pr.p.c.Caller != nil && pr.sc.CallerID != nil:
		if _, ok := declared[pr.p.c.Caller.Key]; ok {
			return map[string]any{pr.p.c.Caller.Key: pr.sc.CallerID}, true
		}
	}
	return nil, false
}

// prohibitions are the unlisted rules' checks that hold when nothing is
// done: rules an agent breaks by acting. A check that fails on doing nothing
// (a safety report was filed) is an obligation of some cases only, and says
// nothing about a scenario that does not name it.
func (pr *proof) prohibitions(ctx context.Context, view script.WorldView) ([]checkRef, error) {
	refs := pr.unlistedRules()
	if len(refs) == 0 {
		return nil, nil
	}
	res, err := pr.evalRefs(ctx, view, nil, false, refs)
	if err != nil {
		return nil, err
	}
	var out []checkRef
	for i, c := range res {
		if c.Held {
			out = append(out, refs[i])
		}
	}
	return out, nil
}

// rulesBroken reads the prohibitions after the solution and refuses a
// solution that breaks one. A check that raises says nothing about the
// solution (it is the contract's) and is left to the contract's probes, and
// one that forbids the caller to read their own record once identified is
// about someone else on the line (see aboutOthers).
func (pr *proof) rulesBroken(ctx context.Context, view script.WorldView, before *world.Before, refs []checkRef) ([]Refusal, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	res, err := pr.evalRefs(ctx, view, pr.results, false, refs)
	if err != nil {
		return nil, err
	}
	var rs []Refusal
	for i, c := range res {
		if c.Held || c.Broken {
			continue
		}
		others, err := pr.aboutOthers(ctx, before, refs[i])
		if err != nil {
			return nil, err
		}
		if others {
			continue
		}
		for _, r := range pr.p.c.Rules {
			if r.Check == c.Name {
				rs = append(rs, Refusal{Gate: GateSolvable, Code: CodeRuleBroken, Message: fmt.Sprintf("the solution breaks rule %s (%s): %s; a reference solution keeps every rule of the contract, named or not", r.ID, c.Name, c.Why), SubGoal: c.Name})
				break
			}
		}
	}
	return rs, nil
}

// aboutOthers tells whether a prohibition the solution broke is about
// someone other than the identified caller: its check is bound to the
// caller's own key, and it fails on the solution's calls that identified
// the caller followed by a plain read of the caller's own record (a tool
// that, given the caller's key alone, answers without writing). Such a check
// cannot tell the record's owner from someone acting for them (a caregiver
// verified for a patient, a proxy for a student): it forbids what every
// owner who proved who they are may do, so it binds no scenario whose caller
// is the owner. It still binds when someone else is on the line: a call of
// the conversation, put between the identification and the read, makes the
// check hold (the caregiver's verification); and when neither the solution
// nor the wrong move calls a tool the use case offers (a second factor the
// caller could give). A scenario that names the rule lists and keeps its
// check as before.
func (pr *proof) aboutOthers(ctx context.Context, before *world.Before, ref checkRef) (bool, error) {
	cl, sc := pr.p.c.Caller, pr.sc
	if cl == nil || sc.CallerID == nil || before == nil || len(ref.ref.Params) != 1 || !sameValue(ref.ref.Params[cl.Key], sc.CallerID) {
		return false, nil
	}
	// The identification: the solution's calls before its first that
	// answered ok and is not one of the caller's identity tools.
	n, identified := 0, false
	for n < len(pr.results) && (!pr.results[n].OK || slices.Contains(cl.From, pr.results[n].Tool)) {
		identified = identified || pr.results[n].OK
		n++
	}
	if !identified {
		return false, nil
	}
	if u := pr.p.c.UseCase(sc.UseCase); u != nil {
		for _, t := range u.Tools {
			made := func(c scenario.Call) bool { return c.Tool == t }
			if !slices.Contains(cl.From, t) && !slices.ContainsFunc(sc.Solution, made) && !slices.ContainsFunc(sc.Tempting, made) && !slices.ContainsFunc(sc.Missing, made) {
				return false, nil
			}
		}
	}
	cp, err := before.Copy()
	if err != nil {
		return false, err
	}
	// holds plays the identification, then between, then a read of the
	// caller's own record, and reads the check there; read is false when no
	// tool reads the caller's record that way.
	holds := func(between []world.CallResult) (held, read bool, err error) {
		err = cp.Try(ctx, func() error {
			results := play(ctx, cp, sc.Solution[:n])
			for _, b := range between {
				results = append(results, cp.Call(ctx, b.Tool, b.Args))
			}
			for _, t := range pr.p.c.Tools {
				req := t.Required()
				if len(req) != 1 || slices.Contains(cl.From, t.Name) {
					continue
				}
				var r world.CallResult
				if err := cp.Try(ctx, func() error {
					r = cp.Call(ctx, t.Name, map[string]any{req[0]: sc.CallerID})
					if !r.OK || r.Wrote {
						return nil
					}
					view := cp.View(sc.CallerID, func() script.WorldView { return before.View() })
					res, err := pr.evalRefs(ctx, view, append(results, r), false, []checkRef{ref})
					if err == nil {
						held = res[0].Held || res[0].Broken
					}
					return err
				}); err != nil {
					return err
				}
				if r.Crash && infrastructure(r.Err) {
					return r.Err
				}
				if read = r.OK && !r.Wrote; read {
					return nil
				}
			}
			return nil
		})
		return held, read, err
	}
	held, read, err := holds(nil)
	if err != nil || held || !read {
		return false, err
	}
	seen := map[string]bool{}
	for _, r := range append(slices.Clone(pr.results), pr.also...) {
		if !r.OK || r.Wrote || slices.Contains(cl.From, r.Tool) || seen[r.Tool] {
			continue
		}
		seen[r.Tool] = true
		if held, _, err := holds([]world.CallResult{r}); err != nil || held {
			return false, err
		}
	}
	return true, nil
}

// RulesBroken plays calls after setup on a throwaway copy, as the caller
// with key caller (nil: nobody identified), and returns the rules whose
// checks can be read for such a case and fail on that run, in contract
// order. Planning asks it of acts the world carries out: a rule the act
// breaks on some records is a way to say no that no handler says.
func (p *Prover) RulesBroken(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, caller any) ([]string, error) {
	pr := &proof{p: p, sc: &scenario.Scenario{CallerID: caller, Solution: calls}}
	refs := pr.unlistedRules()
	if len(refs) == 0 {
		return nil, nil
	}
	var failed map[string]bool
	err := p.w.Pair(ctx, func(cp *world.Copy) error { return applySetup(ctx, cp, setup) }, func(cp *world.Copy, before *world.Before) error {
		failed = map[string]bool{}
		results := play(ctx, cp, calls)
		crashed := false
		for _, r := range results {
			if r.Crash && infrastructure(r.Err) {
				return r.Err
			}
			crashed = crashed || r.Crash
		}
		view := cp.View(caller, func() script.WorldView { return before.View() })
		checks, err := pr.evalRefs(ctx, view, results, crashed, refs)
		if err != nil {
			return err
		}
		pr.results = results
		for i, c := range checks {
			if c.Held || c.Broken {
				continue
			}
			others, err := pr.aboutOthers(ctx, before, refs[i])
			if err != nil {
				return err
			}
			failed[c.Name] = !others
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("prove: rules: %w", err)
	}
	var out []string
	for _, r := range p.c.Rules {
		if r.Check != "" && failed[r.Check] {
			out = append(out, r.ID)
		}
	}
	return out, nil
}
