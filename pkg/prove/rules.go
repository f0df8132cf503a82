package prove

import (
	"context"
	"fmt"

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
// solution (it is the contract's) and is left to the contract's probes.
func (pr *proof) rulesBroken(ctx context.Context, view script.WorldView, refs []checkRef) ([]Refusal, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	res, err := pr.evalRefs(ctx, view, pr.results, false, refs)
	if err != nil {
		return nil, err
	}
	var rs []Refusal
	for _, c := range res {
		if c.Held || c.Broken {
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

// RulesBroken plays calls after setup on a throwaway copy, as the caller
// with key caller (nil: nobody identified), and returns the rules whose
// checks can be read for such a case and fail on that run, in contract
// order. Planning asks it of acts the world carries out: a rule the act
// breaks on some records is a way to say no that no handler says.
func (p *Prover) RulesBroken(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, caller any) ([]string, error) {
	pr := &proof{p: p, sc: &scenario.Scenario{CallerID: caller}}
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
		for _, c := range checks {
			if !c.Held && !c.Broken {
				failed[c.Name] = true
			}
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
