// Package adequacy measures whether a suite tests what matters: every
// refusal branch of every handler and every rule with a check. It builds
// mutants of the contract — each refusal branch turned off in turn (the
// syntax tree rewritten so the branch never refuses, script.BranchOff), each
// rule's check made to hold always (script.CheckHolds) — and proves the
// suite's kept scenarios again against each. A mutant is caught when some
// kept scenario is no longer kept under it: the suite depends on that
// branch or that check.
//
// Only the scenarios a mutant can change are proved again: a branch mutant
// differs from the contract only where the branch's condition is true, so a
// scenario whose proof never refused there plays the same under it (the
// branches each proof reaches are recorded by script.WithBranchLog); a
// check mutant only loosens the check, which can only matter to the
// scenarios that list it; of those, the ones that name its rule are the ones
// that test it. The others are not asked.
//
// Branches come in two classes (script.Branch.Class): rule branches, and
// existence guards, reached only when a database read finds nothing. The
// prover keeps no refusal that rests on a record that does not exist
// (refusal-ungrounded), so an existence guard is out of the reach of every
// kept scenario unless its read misses a record that exists; the report
// counts the classes apart, so the figure says which branches a suite could
// catch at all.
package adequacy

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/world"
)

// Kinds of mutant.
const (
	KindBranch = "branch"
	KindRule   = "rule"
)

// Mutant is one change of the contract and what the suite made of it.
type Mutant struct {
	Kind string `json:"kind"`
	// At is the branch's file:line, or the rule's id.
	At    string   `json:"at"`
	Tools []string `json:"tools,omitempty"` // a branch's tools
	// Class is a branch's class: script.ClassRule, script.ClassExistence or
	// script.ClassArgument.
	Class string `json:"class,omitempty"`
	Check string `json:"check,omitempty"` // a rule's check
	// Message is what the branch says when it refuses (a literal), if known.
	Message string `json:"message,omitempty"`
	// Shadowed is a later branch (file:line) proved to refuse every call
	// this one does (script.Branch.Shadowed): the mutant is equivalent to
	// the contract, and no suite can catch it.
	Shadowed string `json:"shadowed,omitempty"`
	// Reached counts the kept scenarios whose proof refused at the branch,
	// or that name the rule and list its check (what report.json's
	// rules_tested counts: a rule caught is always tested there; a rule
	// tested there and not caught is one whose scenarios stand without it).
	Reached int  `json:"reached"`
	Caught  bool `json:"caught"`
	// By is a kept scenario the mutant breaks, when caught.
	By string `json:"by,omitempty"`
	// Instead says, for a branch reached and not caught, what meets the
	// act of the first scenario refused there once the branch is gone:
	// another branch (file:line), a failure of the call (its error: a
	// constraint of the database, say), or a check that fails.
	Instead string `json:"instead,omitempty"`
	// callFails: what meets the act instead is a failure of the call.
	callFails bool
	// Why says, when not caught, why not and what shape of scenario would
	// catch it.
	Why string `json:"why,omitempty"`
}

// Report is what Measure found.
type Report struct {
	Scenarios      int      `json:"scenarios"` // kept scenarios proved
	NotKept        []string `json:"not_kept,omitempty"`
	Branches       int      `json:"branches"`
	BranchesCaught int      `json:"branches_caught"`
	// Branches by class: rule branches, existence guards and argument
	// checks (Branches is their sum, BranchesCaught too).
	RuleBranches          int `json:"rule_branches"`
	RuleBranchesCaught    int `json:"rule_branches_caught"`
	ExistenceGuards       int `json:"existence_guards"`
	ExistenceGuardsCaught int `json:"existence_guards_caught"`
	ArgumentChecks        int `json:"argument_checks"`
	ArgumentChecksCaught  int `json:"argument_checks_caught"`
	// RuleBranchesShadowed are the rule branches a later branch shadows
	// (Mutant.Shadowed): equivalent mutants, which the suite is not
	// asked to catch. They are counted in RuleBranches too.
	RuleBranchesShadowed int `json:"rule_branches_shadowed"`
	Rules                int `json:"rules"` // rules with a check
	RulesCaught          int `json:"rules_caught"`
	// RulesJudged are rules without a check: no mutant can neuter them.
	RulesJudged []string `json:"rules_judged,omitempty"`
	Mutants     []Mutant `json:"mutants"`
}

// Config is what Measure works on.
type Config struct {
	Contract *contract.Contract
	World    *world.World
	// Prover proves the suite as it was written (its run's sub-goals
	// included); RunSubGoals are those sub-goals, compiled again into each
	// mutant.
	Prover      *prove.Prover
	RunSubGoals []contract.SubGoal
	Scenarios   []*scenario.Scenario
	// Parallel bounds the proofs run at once (default 2).
	Parallel int
}

type baseline struct {
	sc   *scenario.Scenario
	hits map[string]int
}

// Measure proves the suite, then every mutant against the scenarios it can
// change. An error is a failure of the infrastructure, never of the suite.
func Measure(ctx context.Context, cfg Config) (Report, error) {
	par := cfg.Parallel
	if par <= 0 {
		par = 2
	}
	c := cfg.Contract
	branches, err := script.Branches(c)
	if err != nil {
		return Report{}, fmt.Errorf("adequacy: %w", err)
	}
	scs := append([]*scenario.Scenario(nil), cfg.Scenarios...)
	sort.Slice(scs, func(i, j int) bool { return scs[i].Name < scs[j].Name })

	// The suite as written: which scenarios are kept, and where their
	// proofs refused.
	base := make([]*baseline, len(scs))
	notKept := make([]bool, len(scs))
	err = each(ctx, par, len(scs), func(ctx context.Context, i int) error {
		var log script.BranchLog
		v, err := cfg.Prover.Prove(script.WithBranchLog(ctx, &log), scs[i])
		if err != nil {
			return err
		}
		if !v.Kept {
			notKept[i] = true
			return nil
		}
		base[i] = &baseline{sc: scs[i], hits: log.Hits()}
		return nil
	})
	if err != nil {
		return Report{}, fmt.Errorf("adequacy: the suite as written: %w", err)
	}
	rep := Report{Branches: len(branches)}
	var kept []*baseline
	for i, b := range base {
		if notKept[i] {
			rep.NotKept = append(rep.NotKept, scs[i].Name)
			continue
		}
		kept = append(kept, b)
	}
	rep.Scenarios = len(kept)

	type job struct {
		m     *Mutant
		edit  script.Edit
		cands []*scenario.Scenario
	}
	var jobs []job
	for _, b := range branches {
		m := branchMutant(b)
		var cands []*scenario.Scenario
		for _, k := range kept {
			if k.hits[b.At()] > 0 {
				cands = append(cands, k.sc)
			}
		}
		m.Reached = len(cands)
		jobs = append(jobs, job{m, script.BranchOff(b), cands})
	}
	for _, r := range c.Rules {
		if r.Check == "" {
			rep.RulesJudged = append(rep.RulesJudged, r.ID)
			continue
		}
		sg := c.SubGoal(r.Check)
		if sg == nil {
			continue
		}
		m := &Mutant{Kind: KindRule, At: r.ID, Check: r.Check}
		var cands []*scenario.Scenario
		for _, k := range kept {
			if names(k.sc, r.ID, r.Check) {
				cands = append(cands, k.sc)
			}
		}
		m.Reached = len(cands)
		jobs = append(jobs, job{m, script.CheckHolds(sg.File), cands})
	}
	rep.Rules = len(jobs) - len(branches)

	var mu sync.Mutex
	err = each(ctx, par, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		if len(j.cands) == 0 {
			return nil
		}
		p, err := cfg.mutant(j.edit)
		if err != nil {
			return fmt.Errorf("mutant %s %s: %w", j.m.Kind, j.m.At, err)
		}
		instead, fails := "", false
		for _, sc := range j.cands {
			v, err := p.Prove(ctx, sc)
			if err != nil {
				return fmt.Errorf("mutant %s %s: %w", j.m.Kind, j.m.At, err)
			}
			if !v.Kept {
				mu.Lock()
				j.m.Caught, j.m.By = true, sc.Name
				mu.Unlock()
				return nil // one is enough
			}
			if instead == "" && j.m.Kind == KindBranch {
				instead, fails = insteadOf(v, j.m)
			}
		}
		mu.Lock()
		j.m.Instead, j.m.callFails = instead, fails
		mu.Unlock()
		return nil
	})
	if err != nil {
		return Report{}, fmt.Errorf("adequacy: %w", err)
	}
	for _, j := range jobs {
		m := j.m
		if !m.Caught {
			m.Why = why(m)
		}
		switch {
		case m.Kind == KindBranch && m.Class == script.ClassExistence:
			rep.ExistenceGuards++
			rep.ExistenceGuardsCaught += b2i(m.Caught)
		case m.Kind == KindBranch && m.Class == script.ClassArgument:
			rep.ArgumentChecks++
			rep.ArgumentChecksCaught += b2i(m.Caught)
		case m.Kind == KindBranch:
			rep.RuleBranches++
			rep.RuleBranchesCaught += b2i(m.Caught)
			rep.RuleBranchesShadowed += b2i(m.Shadowed != "" && !m.Caught)
		case m.Kind == KindRule && m.Caught:
			rep.RulesCaught++
		}
		if m.Kind == KindBranch && m.Caught {
			rep.BranchesCaught++
		}
		rep.Mutants = append(rep.Mutants, *m)
	}
	return rep, nil
}

// mutant is a prover of the contract changed by edit, over a view of the
// same world.
func (cfg Config) mutant(edit script.Edit) (*prove.Prover, error) {
	progs, err := script.CompileEdited(cfg.Contract, cfg.World.Programs().Options(), edit)
	if err != nil {
		return nil, err
	}
	for _, sg := range cfg.RunSubGoals {
		if progs, err = progs.WithSubGoals(cfg.Contract.Sources, []contract.SubGoal{sg}); err != nil {
			return nil, err
		}
	}
	return cfg.Prover.WithWorld(cfg.World.WithPrograms(progs), progs), nil
}

func branchMutant(b script.Branch) *Mutant {
	return &Mutant{Kind: KindBranch, At: b.At(), Tools: b.Tools, Class: b.Class, Message: b.Message, Shadowed: b.Shadowed}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// names: some request of the scenario names the rule and lists its check,
// as the report's rules_tested counts it. A request that lists the check
// without naming the rule holds it as a sub-goal, not as the reason for its
// outcome.
func names(sc *scenario.Scenario, rule, check string) bool {
	for _, r := range sc.Requests() {
		named, listed := false, false
		for _, id := range r.Rules {
			named = named || id == rule
		}
		for _, s := range r.SubGoals {
			listed = listed || s.Name == check
		}
		if named && listed {
			return true
		}
	}
	return false
}

// why says why a mutant was not caught, and the shape of scenario that
// would catch it.
func why(m *Mutant) string {
	tool := strings.Join(m.Tools, "/")
	switch {
	case m.Kind == KindBranch && m.Shadowed != "":
		return fmt.Sprintf("shadowed: whenever its condition holds, %s refuses the same call (its condition follows from this one's, and nothing between them changes what they read or leaves the handler), so without this branch the world says no all the same and no case can tell it is gone; an equivalent mutant, not a gap of the suite", m.Shadowed)
	case m.Kind == KindBranch && m.Reached == 0 && m.Class == script.ClassExistence:
		return GuardWhy
	case m.Kind == KindBranch && m.Reached == 0 && m.Class == script.ClassArgument:
		return ArgumentWhy
	case m.Kind == KindBranch && m.Reached == 0:
		say := ""
		if m.Message != "" {
			say = fmt.Sprintf(" (%q)", m.Message)
		}
		return fmt.Sprintf("no kept scenario's act is refused here: a refusal of %s in a case that makes this condition true and the earlier ones false%s, by the state of its records or by a value the caller's request states (a day, an amount) that the world refuses", tool, say)
	case m.Kind == KindBranch && m.callFails:
		return fmt.Sprintf("%d kept scenario(s) refused here, and each is kept without it: with the branch gone, %s, so the world does not carry the act out either way; only a case where %s then goes through would catch it", m.Reached, m.Instead, tool)
	case m.Kind == KindBranch && m.Instead != "":
		return fmt.Sprintf("%d kept scenario(s) refused here, but each is kept without it: with the branch gone, %s; a case where only this branch refuses %s", m.Reached, m.Instead, tool)
	case m.Kind == KindBranch:
		return fmt.Sprintf("%d kept scenario(s) refused here, but each is kept without it (a later branch or a rule's check refuses the same act): a case where only this branch refuses %s", m.Reached, tool)
	case m.Reached == 0:
		return fmt.Sprintf("no kept scenario names the rule: a refusal or escalation whose act the world would carry out but %s fails on", m.Check)
	default:
		return fmt.Sprintf("%d kept scenario(s) name the rule, but their proofs stand without %s (the world refuses the act anyway, or the check is not what decides): a case the world carries out and only the check forbids", m.Reached, m.Check)
	}
}

// insteadOf reads, from a proof under branch mutant m that kept the
// scenario, what met the tempting act (a call of one of the branch's tools;
// a conversation has one tempting run per request) where the branch
// refused it before, and whether that is a failure of the call.
func insteadOf(v prove.Verdict, m *Mutant) (string, bool) {
	for _, r := range v.Runs {
		if r.Counterfactual != prove.Tempting || len(r.Calls) == 0 {
			continue
		}
		act := r.Calls[len(r.Calls)-1]
		if !slices.Contains(m.Tools, act.Tool) {
			continue
		}
		switch {
		case act.Refused && act.Branch != "" && act.Branch != m.At:
			return "the handler refuses it at " + act.Branch, false
		case act.Crash:
			return fmt.Sprintf("the call fails (%s)", act.Error), true
		case act.OK:
			for _, c := range r.Checks {
				if !c.Held && !c.Broken {
					return "the act goes through and the check " + c.Name + " fails", false
				}
			}
		}
	}
	return "", false
}

// GuardWhy is why no kept scenario reaches an existence guard.
const GuardWhy = "reached only when a database read finds no row, as when a named record does not exist; " +
	"the prover keeps no refusal that rests on a missing record (refusal-ungrounded), " +
	"so only a case whose named records all exist and that the read still misses could reach it"

// ArgumentWhy is why no kept scenario reaches an argument check.
const ArgumentWhy = "its condition reads only the call's arguments (none given, one listed twice, a blank field, a value off the list): " +
	"no state of the world decides it, only a request that itself states the wrong value; the plan aims no case at it, since a refusal " +
	"resting on an argument the caller's request does not make wrong fails an agent that carries the request out correctly (tempting-faithful). " +
	"(A condition that weighs an argument against the world's clock or records is a rule branch, which the plan does aim cases at, with the value the caller asks for.)"

// Uncaught lists the mutants of a kind the suite does not catch.
func (r Report) Uncaught(kind string) []Mutant {
	var out []Mutant
	for _, m := range r.Mutants {
		if m.Kind == kind && !m.Caught {
			out = append(out, m)
		}
	}
	return out
}

// each runs fn for 0..n-1, at most par at once; the first error cancels the
// others' context and is returned.
func each(ctx context.Context, par, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel(err) })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// Reach is the report's measure of the handlers' refusal branches: which
// the kept scenarios' tempting acts refuse at (prove.Reach; their solutions
// answer ok throughout), and for each one none reaches, the shape of case that would.
func Reach(ctx context.Context, p *prove.Prover, c *contract.Contract, kept []scenario.Scenario) (*suite.HandlerBranches, error) {
	r, err := NewReached(p, c)
	if err != nil {
		return nil, err
	}
	if err := r.Reach(ctx, kept); err != nil {
		return nil, err
	}
	return r.Branches(), nil
}

// Reached is Reach taken a page of kept scenarios at a time
// (suite.Reacher): what it keeps is the branches reached, not the scenarios.
type Reached struct {
	p        *prove.Prover
	branches []script.Branch
	mu       sync.Mutex
	reached  map[string]bool
}

// NewReached measures the refusal branches of c's handlers with p.
func NewReached(p *prove.Prover, c *contract.Contract) (*Reached, error) {
	branches, err := script.Branches(c)
	if err != nil {
		return nil, fmt.Errorf("adequacy: %w", err)
	}
	return &Reached{p: p, branches: branches, reached: map[string]bool{}}, nil
}

// Reach adds the branches a page of kept scenarios reaches.
func (r *Reached) Reach(ctx context.Context, page []scenario.Scenario) error {
	err := each(ctx, 2, len(page), func(ctx context.Context, i int) error {
		hits, err := r.p.Reach(ctx, &page[i])
		if err != nil {
			return err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for at := range hits {
			r.reached[at] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("adequacy: %w", err)
	}
	return nil
}

// Branches is what the pages added so far reach, by class, with the shape
// of case that would reach each branch none does.
func (r *Reached) Branches() *suite.HandlerBranches {
	r.mu.Lock()
	defer r.mu.Unlock()
	hb := &suite.HandlerBranches{Total: len(r.branches), Uncovered: []suite.BranchNote{}}
	for _, b := range r.branches {
		class := &hb.RuleBranches
		switch b.Class {
		case script.ClassExistence:
			class = &hb.ExistenceGuards
		case script.ClassArgument:
			class = &hb.ArgumentChecks
		}
		class.Total++
		if r.reached[b.At()] {
			hb.Covered++
			class.Covered++
			continue
		}
		hb.Uncovered = append(hb.Uncovered, suite.BranchNote{At: b.At(), Class: b.Class, Why: why(branchMutant(b))})
	}
	return hb
}
