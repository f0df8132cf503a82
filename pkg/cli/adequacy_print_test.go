package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/adequacy"
	"github.com/suitegen/suitegen/pkg/script"
)

// The headline gives the branches by class, and the table marks an
// existence guard as one.
func TestPrintAdequacyClasses(t *testing.T) {
	rep := adequacy.Report{Scenarios: 3, Branches: 3, BranchesCaught: 1, RuleBranches: 2, RuleBranchesCaught: 1, ExistenceGuards: 1,
		Mutants: []adequacy.Mutant{
			{Kind: adequacy.KindBranch, At: "h.star:3", Class: script.ClassRule, Caught: true, Reached: 1, By: "s1"},
			{Kind: adequacy.KindBranch, At: "h.star:5", Class: script.ClassRule, Why: "w"},
			{Kind: adequacy.KindBranch, At: "lib/l.star:4", Class: script.ClassExistence, Why: adequacy.GuardWhy},
		}}
	var b bytes.Buffer
	printAdequacy(&b, "out", "dir", rep)
	got := b.String()
	for _, want := range []string{
		"branches caught 1/3 (2 rule branches: 1 caught; 1 existence guards: 0 caught, no kept refusal may rest on a missing record)\n",
		"guard   lib/l.star:4",
		"branch  h.star:5",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}
