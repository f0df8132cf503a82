package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/adequacy"
	"github.com/suitegen/suitegen/pkg/script"
)

// The headline gives the branches by class, and the table marks an
// existence guard and an argument check as such.
func TestPrintAdequacyClasses(t *testing.T) {
	rep := adequacy.Report{Scenarios: 3, Branches: 5, BranchesCaught: 1, RuleBranches: 3, RuleBranchesCaught: 1, RuleBranchesShadowed: 1, ExistenceGuards: 1, ArgumentChecks: 1,
		Mutants: []adequacy.Mutant{
			{Kind: adequacy.KindBranch, At: "h.star:3", Class: script.ClassRule, Caught: true, Reached: 1, By: "s1"},
			{Kind: adequacy.KindBranch, At: "h.star:5", Class: script.ClassRule, Why: "w"},
			{Kind: adequacy.KindBranch, At: "h.star:7", Class: script.ClassRule, Shadowed: "h.star:9", Why: "shadowed"},
			{Kind: adequacy.KindBranch, At: "lib/l.star:4", Class: script.ClassExistence, Why: adequacy.GuardWhy},
			{Kind: adequacy.KindBranch, At: "lib/l.star:9", Class: script.ClassArgument, Why: adequacy.ArgumentWhy},
		}}
	var b bytes.Buffer
	printAdequacy(&b, "out", "dir", rep)
	got := b.String()
	for _, want := range []string{
		"branches caught 1/5 (3 rule branches: 1 caught, 1 shadowed by a later branch that refuses the same calls; 1 existence guards: 0 caught, no kept refusal may rest on a missing record; 1 argument checks: 0 caught, decided by the request's own values alone)\n",
		"guard     lib/l.star:4",
		"branch    h.star:5",
		"branch    h.star:7      shadowed",
		"argument  lib/l.star:9",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}
