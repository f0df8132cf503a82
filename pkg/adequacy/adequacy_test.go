package adequacy

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func loadScenarios(t *testing.T, dir string) []*scenario.Scenario {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*scenario.Scenario
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out = append(out, sc)
	}
	return out
}

// A small retail suite: a cancellation and a refused cancellation of an
// order that is no longer pending. The handler gets one more branch, a
// guard that refuses exactly what the lib's status check refuses, before
// it: the refusal reaches that guard, but removing it changes nothing (the
// lib refuses the same act), so it is not caught; a guard before that one
// which it shadows is counted apart; the branch no scenario
// reaches (the reason check) is not caught; the identity rule the refused
// scenario names is.
func TestMeasureRetail(t *testing.T) {
	ctx := context.Background()
	c, err := contract.LoadValid(filepath.Join("..", "..", "examples", "retail"))
	if err != nil {
		t.Fatal(err)
	}
	const file = "handlers/cancel_pending_order.star"
	src := c.Sources[file]
	anchor := "    require_status(order, \"pending\", \"cancelled\")\n"
	if !strings.Contains(src, anchor) {
		t.Fatalf("%s changed: no %q", file, anchor)
	}
	// And before that one, a guard it shadows: a lost order is not
	// pending either, so without the first the second refuses the same (no
	// order of the suite is lost: the guard is reached by none).
	shadowed := "    if order[\"status\"] == \"lost\":\n        refuse(\"the order was lost in transit\")\n"
	guard := "    if order[\"status\"] != \"pending\":\n        refuse(\"only pending orders can be cancelled\")\n"
	c.Sources[file] = strings.Replace(src, anchor, shadowed+guard+anchor, 1)
	shadowedLine := strings.Count(src[:strings.Index(src, anchor)], "\n") + 1
	guardLine := shadowedLine + 2

	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	scs := loadScenarios(t, filepath.Join("testdata", "retail"))
	rep, err := Measure(ctx, Config{Contract: c, World: e.World, Prover: e.Prover, Scenarios: scs, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scenarios != len(scs) || len(rep.NotKept) > 0 {
		t.Fatalf("kept %d of %d (not kept: %v)", rep.Scenarios, len(scs), rep.NotKept)
	}
	by := map[string]Mutant{}
	for _, m := range rep.Mutants {
		by[m.At] = m
	}
	at := func(line int) string { return file + ":" + strconv.Itoa(line) }
	if m := by[at(guardLine)]; m.Reached == 0 || m.Caught {
		t.Errorf("the redundant guard: %+v, want reached and not caught", m)
	} else if want := "the handler refuses it at lib/orders.star:24"; m.Instead != want || !strings.Contains(m.Why, want) {
		t.Errorf("the redundant guard: instead %q, why %q; want what refuses once it is gone: %q", m.Instead, m.Why, want)
	}
	if m := by[at(shadowedLine)]; m.Shadowed != at(guardLine) || m.Caught || !strings.HasPrefix(m.Why, "shadowed: ") || rep.RuleBranchesShadowed != 1 {
		t.Errorf("the shadowed guard: %+v (%d shadowed in all), want shadowed by %s, uncaught, and said so", m, rep.RuleBranchesShadowed, at(guardLine))
	}
	reason := by[at(guardLine+3)] // "if reason not in REASONS", shifted by the guards
	if reason.Kind != KindBranch || reason.Reached != 0 || reason.Caught || reason.Why != ArgumentWhy {
		t.Errorf("the reason branch: %+v, want unreached and uncaught", reason)
	}
	if m := by["verify-identity"]; !m.Caught || m.Reached == 0 {
		t.Errorf("verify-identity: %+v, want caught", m)
	}
	if rep.BranchesCaught != countCaught(rep, KindBranch) || rep.Branches == 0 {
		t.Errorf("branches %d/%d", rep.BranchesCaught, rep.Branches)
	}
	// The order's existence guard is one no kept refusal may rest on, and
	// says so; the counts by class add up.
	if m := by["lib/orders.star:19"]; m.Class != script.ClassExistence || m.Reached != 0 || m.Caught || m.Why != GuardWhy {
		t.Errorf("the order's existence guard: %+v", m)
	}
	if reason.Class != script.ClassArgument {
		t.Errorf("the reason branch's class = %q, want an argument check", reason.Class)
	}
	if rep.ExistenceGuards == 0 || rep.ArgumentChecks == 0 || rep.RuleBranches+rep.ExistenceGuards+rep.ArgumentChecks != rep.Branches ||
		rep.RuleBranchesCaught+rep.ExistenceGuardsCaught+rep.ArgumentChecksCaught != rep.BranchesCaught {
		t.Errorf("classes: %d rule branches (%d caught), %d guards (%d caught), %d argument checks (%d caught), of %d (%d caught)", rep.RuleBranches,
			rep.RuleBranchesCaught, rep.ExistenceGuards, rep.ExistenceGuardsCaught, rep.ArgumentChecks, rep.ArgumentChecksCaught, rep.Branches, rep.BranchesCaught)
	}

	// Without the guard the lib's status check is the only one: the refused
	// cancellation depends on it, so its mutant is caught.
	c.Sources[file] = src
	e2, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e2.Close)
	rep, err = Measure(ctx, Config{Contract: c, World: e2.World, Prover: e2.Prover, Scenarios: scs, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Mutants {
		if m.At == "lib/orders.star:24" && (!m.Caught || m.By != "cancel-order-refuse-none-7002") {
			t.Errorf("the lib's status check: %+v, want caught by the refused cancellation", m)
		}
	}

	// The report's measure: the refused cancellation's tempting act reaches
	// the lib's status check; the reason branch is uncovered, with why.
	hb, err := Reach(ctx, e2.Prover, c, derefs(scs))
	if err != nil {
		t.Fatal(err)
	}
	if hb.Total != rep.Branches || hb.Covered == 0 || hb.Covered+len(hb.Uncovered) != hb.Total {
		t.Fatalf("handler branches %+v, want %d in all", hb, rep.Branches)
	}
	if hb.ExistenceGuards.Total != rep.ExistenceGuards || hb.RuleBranches.Total != rep.RuleBranches || hb.ArgumentChecks.Total != rep.ArgumentChecks ||
		hb.RuleBranches.Covered+hb.ExistenceGuards.Covered+hb.ArgumentChecks.Covered != hb.Covered {
		t.Errorf("handler branches by class %+v / %+v / %+v, want %d rule branches, %d guards and %d argument checks as adequacy classes them",
			hb.RuleBranches, hb.ExistenceGuards, hb.ArgumentChecks, rep.RuleBranches, rep.ExistenceGuards, rep.ArgumentChecks)
	}
	class := map[string]string{}
	for _, m := range rep.Mutants {
		class[m.At] = m.Class
	}
	for _, u := range hb.Uncovered {
		if u.At == "lib/orders.star:24" {
			t.Errorf("the lib's status check is reached, reported uncovered")
		}
		if u.Class != class[u.At] || (u.Class == script.ClassExistence) != (u.Why == GuardWhy) {
			t.Errorf("uncovered %+v: adequacy classes it %q", u, class[u.At])
		}
	}
}

func derefs(scs []*scenario.Scenario) []scenario.Scenario {
	out := make([]scenario.Scenario, len(scs))
	for i, sc := range scs {
		out[i] = *sc
	}
	return out
}

func countCaught(r Report, kind string) int {
	n := 0
	for _, m := range r.Mutants {
		if m.Kind == kind && m.Caught {
			n++
		}
	}
	return n
}

// TestInsteadOf: what meets the act once a branch is gone is read from the
// tempting run of the branch's tool (a conversation's other requests have
// theirs): another branch, a failed call, or a check that fails.
func TestInsteadOf(t *testing.T) {
	m := &Mutant{Kind: KindBranch, At: "handlers/waive.star:14", Tools: []string{"waive"}}
	run := func(act prove.CallStep, checks ...prove.CheckResult) prove.Run {
		return prove.Run{Counterfactual: prove.Tempting, Calls: []prove.CallStep{{Tool: "lookup", OK: true}, act}, Checks: checks}
	}
	other := run(prove.CallStep{Tool: "refund", Refused: true, Branch: "handlers/refund.star:9"})
	for _, c := range []struct {
		runs  []prove.Run
		want  string
		fails bool
	}{
		{[]prove.Run{other, run(prove.CallStep{Tool: "waive", Refused: true, Branch: "handlers/waive.star:18"})}, "the handler refuses it at handlers/waive.star:18", false},
		{[]prove.Run{run(prove.CallStep{Tool: "waive", Crash: true, Error: `violates check constraint "amount_check"`})}, `the call fails (violates check constraint "amount_check")`, true},
		{[]prove.Run{run(prove.CallStep{Tool: "waive", OK: true}, prove.CheckResult{Name: "kept", Held: true}, prove.CheckResult{Name: "fee_rule"})}, "the act goes through and the check fee_rule fails", false},
		{[]prove.Run{other}, "", false},
		{[]prove.Run{run(prove.CallStep{Tool: "waive", Refused: true, Branch: m.At})}, "", false},
	} {
		if got, fails := insteadOf(prove.Verdict{Kept: true, Runs: c.runs}, m); got != c.want || fails != c.fails {
			t.Errorf("%+v: got %q (fails %v), want %q (fails %v)", c.runs, got, fails, c.want, c.fails)
		}
	}
	// A failure of the call in the branch's place says the world does not
	// carry the act out either way; another branch asks for a case where
	// only this one refuses.
	failed := &Mutant{Kind: KindBranch, Reached: 2, Tools: m.Tools, Instead: "the call fails (x)", callFails: true}
	refused := &Mutant{Kind: KindBranch, Reached: 2, Tools: m.Tools, Instead: "the handler refuses it at handlers/waive.star:18"}
	if w := why(failed); !strings.Contains(w, "either way") || !strings.Contains(w, failed.Instead) {
		t.Errorf("why, the call failing instead: %q", w)
	}
	if w := why(refused); strings.Contains(w, "either way") || !strings.Contains(w, "only this branch refuses waive") {
		t.Errorf("why, another branch refusing instead: %q", w)
	}
}
