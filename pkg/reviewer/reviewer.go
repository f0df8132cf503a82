// Package reviewer reads a whole suite from the ledger and says what is wrong
// with it as a whole — things no single writer could see: use cases covered
// only on their ordinary path, outcomes missing, rules and gated tools
// untested, persona skew, two scenarios that test the same thing. What can be
// filled is published as gap slices; rounds are bounded, and a finished suite
// is a valid answer.
package reviewer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Finding is one thing wrong with a suite.
type Finding struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject,omitempty"`
	Detail  string `json:"detail"`
}

// Review is the reviewer's reading of a suite.
type Review struct {
	Findings []Finding `json:"findings"`
	// Gaps are the buckets still short of their want and not blocked.
	Gaps []string `json:"gaps"`
}

// Read reviews a run's suite as the ledger holds it.
func Read(ctx context.Context, store *canvas.Store, run string, c *contract.Contract) (Review, error) {
	scs, err := store.Scenarios(ctx, run)
	if err != nil {
		return Review{}, err
	}
	bs, err := store.Buckets(ctx, run)
	if err != nil {
		return Review{}, err
	}
	return Assess(c, scs, bs), nil
}

// Assess is Read on data already in hand.
func Assess(c *contract.Contract, scs []scenario.Scenario, bs []canvas.Bucket) Review {
	var r Review
	add := func(kind, subject, format string, a ...any) {
		r.Findings = append(r.Findings, Finding{kind, subject, fmt.Sprintf(format, a...)})
	}
	kinds := map[string]map[string]int{}
	outcomes := map[string]int{}
	named := map[string]bool{}
	rules := map[string]bool{}
	for _, s := range scs {
		if kinds[s.UseCase] == nil {
			kinds[s.UseCase] = map[string]int{}
		}
		kinds[s.UseCase][s.Kind]++
		outcomes[s.Expects]++
		for _, call := range append(append([]scenario.Call{}, s.Solution...), s.Tempting...) {
			named[call.Tool] = true
		}
	}
	for _, b := range bs {
		var spec plan.Spec
		_ = json.Unmarshal(b.Spec, &spec)
		if b.Done > 0 {
			for _, id := range spec.Rules {
				rules[id] = true
			}
		}
		if b.State != "blocked" && b.Done < b.Want {
			r.Gaps = append(r.Gaps, b.ID)
		}
	}
	for _, u := range c.UseCases {
		k := kinds[u.ID]
		switch {
		case len(k) == 0:
			add("use-case-missing", u.ID, "no scenario covers use case %s", u.ID)
		case len(k) == 1 && k["happy"] > 0:
			add("ordinary-path-only", u.ID, "use case %s is covered only on its ordinary path", u.ID)
		}
	}
	for _, o := range scenario.Outcomes {
		if outcomes[o] == 0 {
			add("outcome-missing", o, "no scenario expects %s", o)
		}
	}
	for _, rl := range c.Rules {
		if !rules[rl.ID] {
			add("rule-untested", rl.ID, "hard rule %s is tested by no scenario", rl.ID)
		}
	}
	for _, t := range c.Tools {
		if len(t.Requires) > 0 && !named[t.Name] {
			add("gated-tool-untested", t.Name, "precondition-gated tool %s appears in no scenario", t.Name)
		}
	}
	if len(scs) > 0 {
		names, pers, accents := map[string]int{}, map[string]int{}, map[string]int{}
		for _, s := range scs {
			names[s.Persona.Name]++
			pers[s.Persona.Personality]++
			accents[s.Persona.Accent]++
		}
		if share := float64(len(names)) / float64(len(scs)); share < 0.9 {
			add("caller-names", "", "only %.0f%% of caller names are distinct (want 90%%)", share*100)
		}
		top, n := "", 0
		for p, k := range pers {
			if k > n || (k == n && p < top) {
				top, n = p, k
			}
		}
		if len(scs) >= 8 && float64(n)/float64(len(scs)) > 0.25 {
			add("personality-skew", top, "%q is %.0f%% of callers (want at most 25%%)", top, 100*float64(n)/float64(len(scs)))
		}
		if len(scs) >= 8 && len(accents) < 4 {
			add("accents", "", "only %d distinct accents", len(accents))
		}
	}
	// Two scenarios that test the same thing: same use case, outcome and calls.
	seen := map[string]string{}
	for _, s := range scs {
		var parts []string
		for _, call := range s.Solution {
			parts = append(parts, call.Tool)
		}
		key := s.UseCase + "|" + s.Expects + "|" + s.Persona.Name + "|" + strings.Join(parts, ",")
		if other, ok := seen[key]; ok {
			add("same-test", s.Name, "%s tests the same thing as %s", s.Name, other)
		}
		seen[key] = s.Name
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Kind < r.Findings[j].Kind })
	return r
}

// Fill publishes gap slices for what can be filled and waits for them, for at
// most rounds rounds, through the planner's dealing (so gap slices obey the
// same claims, cells and ledger folding as any other).
func Fill(ctx context.Context, p *planner.Planner, rounds int, log *slog.Logger) (int, error) {
	if p == nil {
		return 0, errors.New("reviewer: no planner to deal gap slices")
	}
	dealt := 0
	for i := 0; i < rounds; i++ {
		n, err := p.Gap(ctx, "the suite review found buckets short of their want")
		if err != nil {
			return dealt, err
		}
		dealt += n
		if n == 0 {
			break
		}
		log.Info("gap round", "slices", n)
	}
	return dealt, nil
}
